"""Issue 23 item 4: disputed and rules-updated markets in sweeps — excluded on request (which
changes the run id only when given), a stratum of `hindcast analyze`, and the cutoffs whose
question text may postdate t0 recorded in the run."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from hindcast.errors import HindcastError
from hindcast.markets.fake_polymarket import FakePolymarket, SimMarket, transport
from hindcast.markets.polymarket import PolymarketClient, RetryPolicy
from hindcast.markets.pull import PullQuery, pull
from hindcast.replay.layout import load_toml
from hindcast.replay.plan import prepare
from hindcast.replay.spec import spec_from_mapping
from hindcast.runs import identity_form
from hindcast.timeutil import iso
from tests.helpers import SAMPLE_MARKETS, run_cli

START = datetime(2025, 3, 1, tzinfo=UTC)
NOW = START + timedelta(days=200)
DISPUTED = SimMarket(1, START, START + timedelta(days=40), disputed=True)
RULES = SimMarket(
    2, START, START + timedelta(days=40), yes=False, rules_updated_at=START + timedelta(days=30)
)
PLAIN = [SimMarket(n, START, START + timedelta(days=40 + n), yes=n % 2 == 0) for n in range(3, 9)]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("resolution") / "store"
    http = httpx.Client(transport=transport(FakePolymarket([DISPUTED, RULES, *PLAIN], NOW)))
    client = PolymarketClient(http, retry=RetryPolicy(attempts=1), sleep=lambda s: None)
    assert pull(root, client, PullQuery(), NOW).stored == 8
    return root


def plan(store, **extra):
    return prepare(
        spec_from_mapping(
            {
                "store": store,
                "forecasters": ["market", "constant"],
                "fractions": [0.5, 0.9],
                **extra,
            }
        )
    )


def test_exclude_removes_them_and_changes_the_run_id_only_when_given(store):
    every, none_excluded = plan(store), plan(store, exclude=[])
    assert none_excluded.run_id == every.run_id and "exclude" not in identity_form(every.identity)
    both = plan(store, exclude=["disputed", "rules-updated"])
    assert set(every.markets) - set(both.markets) == {DISPUTED.condition_id, RULES.condition_id}
    assert plan(store, exclude=["disputed"]).markets == sorted(
        set(every.markets) - {DISPUTED.condition_id}
    )
    assert both.run_id != every.run_id and identity_form(both.identity)["exclude"] == [
        "disputed",
        "rules-updated",
    ]
    with pytest.raises(
        HindcastError, match=r"exclude \(--exclude\) must be a list of disputed and rules-updated"
    ):
        plan(store, exclude=["contested"])


def test_exclude_in_a_spec_file_and_no_change_to_runs_of_a_store_without_the_metadata(
    store, tmp_path
):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'[markets]\nstore = "{store}"\nexclude = ["disputed"]\n[[forecasters]]\nspec = "market"\n'
    )
    assert load_toml(spec)["exclude"] == ["disputed"]
    sample = prepare(spec_from_mapping({"store": SAMPLE_MARKETS, "forecasters": ["market"]}))
    stored = identity_form(sample.identity)
    assert "question_text_uncertain" not in stored and "exclude" not in stored


def test_a_rules_update_after_t0_marks_that_cutoffs_text_uncertain_in_the_run(store):
    marked = identity_form(plan(store).identity)["question_text_uncertain"]
    cutoffs = {c.t0: c for c in plan(store).cutoffs if c.market_id == RULES.condition_id}
    assert len(cutoffs) == 2  # f=0.5 (day 20: before the update) and f=0.9 (day 36: after it)
    before = [t0 for t0 in cutoffs if t0 <= RULES.rules_updated_at]
    assert (
        marked
        == [
            {
                "market_id": RULES.condition_id,
                "t0": iso(t0),
                "rules_updated_at": iso(RULES.rules_updated_at),
            }
            for t0 in before
        ]
        and len(before) == 1
    )


def test_analyze_has_a_disputed_and_rules_updated_stratum(store, tmp_path):
    db, out = tmp_path / "h.db", tmp_path / "out"
    swept = json.loads(
        run_cli(
            "sweep",
            "--store",
            str(store),
            "-f",
            "market",
            "-f",
            "constant",
            "--fractions",
            "0.5,0.9",
            "--db",
            str(db),
            "--out",
            str(out),
            "--json",
            check=True,
        ).stdout
    )
    document = json.loads(
        run_cli("analyze", swept["run_id"], "--db", str(db), "--json", check=True).stdout
    )
    finding = next(f for f in document["findings"] if f["key"] == "resolution")
    rows = {(r["forecaster"], r["resolution"]): r["n_rows"] for r in finding["rows"]}
    assert (
        rows[("constant", "disputed")] == 2 and rows[("constant", "rules updated at/after t0")] == 1
    )
    assert (
        rows[("constant", "rules updated before t0")] == 1 and rows[("constant", "neither")] == 12
    )
    assert rows[("constant", "all")] == 16
    excluded = json.loads(
        run_cli(
            "sweep",
            "--store",
            str(store),
            "-f",
            "market",
            "-f",
            "constant",
            "--fractions",
            "0.5,0.9",
            "--exclude",
            "disputed",
            "--exclude",
            "rules-updated",
            "--db",
            str(db),
            "--out",
            str(out),
            "--json",
            check=True,
        ).stdout
    )
    assert excluded["run_id"] != swept["run_id"]
