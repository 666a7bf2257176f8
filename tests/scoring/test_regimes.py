from datetime import timedelta

import pytest

from hindcast.errors import HindcastError
from hindcast.scoring.regimes import REGIMES, load_cutoffs, model_of, regime
from tests.helpers import at

CUTOFFS = {"gpt-4.1-mini": at("2024-06-01T00:00:00")}


def test_regimes_follow_the_knowledge_cutoff():
    assert (
        regime("gpt-4.1-mini", at("2024-01-01T00:00:00"), at("2024-03-01T00:00:00"), CUTOFFS)
        == "T1"
    )
    assert (
        regime("gpt-4.1-mini", at("2024-01-01T00:00:00"), at("2024-09-01T00:00:00"), CUTOFFS)
        == "T2"
    )
    assert (
        regime("gpt-4.1-mini", at("2025-01-01T00:00:00"), at("2025-03-01T00:00:00"), CUTOFFS)
        == "T3"
    )
    assert (
        regime("some-new-model", at("2025-01-01T00:00:00"), at("2025-03-01T00:00:00"), CUTOFFS)
        == "unknown"
    )
    assert regime(None, at("2025-01-01T00:00:00"), at("2025-03-01T00:00:00"), CUTOFFS) == "n/a"


def test_model_names_come_from_provenance_or_the_spec():
    assert model_of("zero-shot:model=openai:gpt-4.1-mini") == "openai:gpt-4.1-mini"
    assert (
        regime(
            model_of("zero-shot:model=openai:gpt-4.1-mini"),
            at("2025-01-01T00:00:00"),
            at("2025-03-01T00:00:00"),
            CUTOFFS,
        )
        == "T3"
    )
    assert (
        model_of("zero-shot:model=local", {"model": "SmolLM2-135M-Instruct"})
        == "SmolLM2-135M-Instruct"
    )
    assert model_of("market") is None


def test_users_override_the_shipped_registry(tmp_path):
    mine = tmp_path / "models.toml"
    mine.write_text('"gpt-4.1-mini" = 2025-01-01\n"my-model" = 2025-05-01\n')
    table = load_cutoffs(mine)
    assert (
        table["gpt-4.1-mini"] == at("2025-01-01T00:00:00")
        and "my-model" in table
        and "gpt-4o" in table
    )
    mine.write_text('"bad" = "soon"\n')
    with pytest.raises(HindcastError, match="needs a date"):
        load_cutoffs(mine)


def test_boundaries_an_instant_at_the_cutoff_counts_as_after_it():
    cut = CUTOFFS["gpt-4.1-mini"]
    second = timedelta(seconds=1)
    assert regime("gpt-4.1-mini", cut - 2 * second, cut - second, CUTOFFS) == "T1"
    assert (
        regime("gpt-4.1-mini", cut - second, cut, CUTOFFS) == "T2"
    )  # resolved exactly at the cutoff
    assert regime("gpt-4.1-mini", cut - second, cut + second, CUTOFFS) == "T2"
    assert regime("gpt-4.1-mini", cut, cut + second, CUTOFFS) == "T3"  # t0 exactly at the cutoff


def test_t3_is_t0_and_resolution_after_the_cutoff_and_t2_the_straddle():
    """On a grid around the cutoff (every t0 < resolution): T3 exactly when t0 and the resolution
    are at/after the cutoff, T2 exactly when t0 is before it and the resolution at/after it."""
    cut = CUTOFFS["gpt-4.1-mini"]
    instants = [cut + timedelta(hours=h) for h in range(-3, 4)]
    pairs = [(t0, r) for t0 in instants for r in instants if t0 < r]
    for t0, resolved in pairs:
        t3 = t0 >= cut and resolved >= cut
        label = regime("gpt-4.1-mini", t0, resolved, CUTOFFS)
        assert (label == "T3") == t3 and (label == "T2") == (t0 < cut <= resolved), (t0, resolved)
    assert set(REGIMES) == {"T1", "T2", "T3", "unknown", "n/a"}
