"""Claim-level rationale leakage (`hindcast audit --claims`): the split of a rationale into claims,
the stance and weight of a claim, and a stored run with crafted rationales audited by the planted
scripted detector (a sentence holding "officially resolved" reveals the outcome, one holding
"weeks later" reports a date after t0) — every flag and weight worked out by hand below; and the
command's output and its bad input (one line, nothing written)."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from hindcast.audit import split_claims, stance, weigh
from hindcast.audit.run_audit import audit
from hindcast.leaks import get_detector
from hindcast.records import Forecast
from hindcast.runs.store import RunStore
from tests.audit import planted_run
from tests.cli.test_audit_cli import hindcast_audit
from tests.leaks.test_leak_cascade import QUESTION

RUN = "claims-crafted"


# ---- splitting, stance, weight ------------------------------------------------------------
@pytest.mark.parametrize(
    "rationale, claims",
    [
        ("", []),
        ("One sentence without an end", ["One sentence without an end"]),
        (
            "Polls in the U.S. show Dr. Smith ahead by 3.5 points. The vote is on Jan. 5 this year!"
            " Turnout may matter?  Rain is forecast.",
            [
                "Polls in the U.S. show Dr. Smith ahead by 3.5 points.",
                "The vote is on Jan. 5 this year!",
                "Turnout may matter?",
                "Rain is forecast.",
            ],
        ),
        (
            "- First, J. Smith leads the field.\n* Second, the count\nis slow.\n2) Yes. So 0.7.",
            [
                "First, J. Smith leads the field.",
                "Second, the count is slow.",  # a wrapped line continues
                "Yes. So 0.7.",  # both pieces shorter than 12 characters: one claim
            ],
        ),
        ("Short. A longer second sentence here.", ["Short. A longer second sentence here."]),
        ("No end here\n\nA new paragraph.", ["No end here", "A new paragraph."]),
    ],
)
def test_a_rationale_splits_into_its_sentences_and_list_items(rationale, claims):
    assert split_claims(rationale) == claims


def test_a_rationale_that_is_not_text_is_refused():
    with pytest.raises(TypeError, match="a rationale is text, not int"):
        split_claims(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "claim, expected",
    [
        ("Paz won the runoff.", 1),
        ("Paz did not win the runoff.", -1),
        ("Paz didn't win.", -1),
        ("Paz lost the runoff.", -1),
        ("The motion was rejected.", -1),
        ("The bill failed in the Senate.", -1),
        ("Knowledge of the vote grew.", 1),  # "no" inside a word is no negation
    ],
)
def test_stance_reads_a_negation_or_loss_word_as_no(claim, expected):
    assert stance(claim) == expected


def test_the_weight_is_stance_times_the_departure_from_the_reference():
    assert weigh("Paz won.", 0.9, 0.6) == pytest.approx(0.3)
    assert weigh("Paz did not win.", 0.9, 0.6) == pytest.approx(-0.3)
    assert weigh("Paz did not win.", 0.2, 0.6) == pytest.approx(0.4)
    assert weigh("Paz won.", 0.8, None) == pytest.approx(0.3)  # no market price: reference 0.5
    assert weigh("Paz won.", None, 0.6) is None  # a failure has no probability to explain


def test_the_claims_of_a_rationale_judged_by_the_model_free_detector():
    """lexical's documented rules, applied by hand: the first sentence is the question's YES
    statement (its subject, "won", its object: an outcome verb and a template match → score ≥
    0.5, "reveals-outcome"); the second names none of the question's entities (score 0)."""
    claims = split_claims(
        "Rodrigo Paz won the 2025 Bolivian presidential election. Coffee prices rose in Kenya."
    )
    detector = get_detector("lexical")
    verdicts = [asyncio.run(detector.judge(c, QUESTION)) for c in claims]
    assert [v.label for v in verdicts] == ["reveals-outcome", "neither"]
    assert verdicts[1].score == 0.0


# ---- a stored run with crafted rationales --------------------------------------------------
def writer_rationales(markets) -> list:
    """(forecaster, market, t0, p, rationale) of the crafted run."""
    (a, t0_a, _, _), (b, t0_b, _, _), (c, t0_c, _, _) = markets
    return [
        (
            "writer",
            a,
            t0_a,
            0.8,
            "Polls were tight for months. Reports say it has officially resolved in favour. "
            "Some weeks later the count did not change.",
        ),
        (
            "writer",
            b,
            t0_b,
            0.2,
            "- The vote was not held; it has officially resolved as No.\n- Officials said nothing.",
        ),
        ("writer", c, t0_c, None, "It has officially resolved."),
        ("quiet", a, t0_a, 0.6, "Polls were tight for months. Turnout decides it."),
    ]


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    """The planted run's store with a second run whose rationales are crafted."""
    planted = planted_run.build(tmp_path_factory.mktemp("claims"))
    version, _ = planted_run.sample_markets()
    manifest = {
        "market_store": {"root": str(planted_run.SAMPLE_MARKETS), "version": version},
        "archive": {"root": str(planted.archive.resolve()), "snapshot": planted.snapshot},
        "identity": {"snapshot": planted.snapshot},
        "forecasters": {},
    }
    store = RunStore(planted.url)
    store.ensure_run(RUN, {}, manifest, planted.markets[0][1])
    for name, market, t0, p, rationale in writer_rationales(planted.markets):
        forecast = (
            Forecast(None, error="no answer", rationale=rationale)
            if p is None
            else Forecast(p, rationale=rationale)
        )
        store.add(RUN, name, market, t0, "at", forecast)
    store.close()
    return planted


@pytest.fixture(autouse=True)
def scripted():
    return planted_run.register_scripted()


def audited(planted, tmp_path, claims=True):
    store = RunStore(planted.url)
    try:
        return audit(
            store,
            RUN,
            ("scripted",),
            audit_file=tmp_path / "audits.db",
            replicates=50,
            claims=claims,
        )
    finally:
        store.close()


def test_flagged_claims_and_weights_by_hand(crafted, tmp_path):
    (a, t0_a, _, price_a), (b, _, _, price_b), (c, _, _, _) = crafted.markets
    said = audited(crafted, tmp_path).claims
    entries = {(e["forecaster"], e["market"]): e for e in said["forecasts"]}
    assert set(entries) == {("writer", a), ("writer", b), ("writer", c), ("quiet", a)}

    # writer on A, p 0.8: 3 claims; claim 1 reveals (stance +1: weight 0.8 − price_a), claim 2
    # after t0 ("weeks later") and "did not" (stance −1: weight −(0.8 − price_a)).
    wa = entries[("writer", a)]
    assert (wa["claims"], wa["probability"], wa["reference"]) == (3, 0.8, price_a)
    assert [(f["index"], f["label"], f["stance"]) for f in wa["flagged"]] == [
        (1, "reveals-outcome", 1),
        (2, "after-t0", -1),
    ]
    assert wa["flagged"][0]["weight"] == pytest.approx(0.8 - price_a)
    assert wa["flagged"][1]["weight"] == pytest.approx(price_a - 0.8)
    assert wa["leak_weight"] == pytest.approx(max(0.0, 0.8 - price_a, price_a - 0.8))
    assert wa["flagged"][0]["claim"] == "Reports say it has officially resolved in favour."

    # writer on B, p 0.2: 2 claims (list items); claim 0 reveals, "not held" → stance −1:
    # weight −(0.2 − price_b).
    wb = entries[("writer", b)]
    assert wb["claims"] == 2 and [(f["index"], f["stance"]) for f in wb["flagged"]] == [(0, -1)]
    assert wb["flagged"][0]["weight"] == pytest.approx(price_b - 0.2)
    assert wb["leak_weight"] == pytest.approx(max(0.0, price_b - 0.2))

    # writer on C failed: its one claim is flagged, with no weight.
    wc = entries[("writer", c)]
    assert [(f["label"], f["weight"]) for f in wc["flagged"]] == [("reveals-outcome", None)]
    assert wc["leak_weight"] is None and wc["probability"] is None

    quiet = entries[("quiet", a)]
    assert (quiet["claims"], quiet["flagged"], quiet["leak_weight"]) == (2, [], 0.0)

    summary = {s["forecaster"]: s for s in said["summary"]}
    lw = wa["leak_weight"] + wb["leak_weight"]
    assert summary["writer"] == {
        "forecaster": "writer",
        "rationales": 3,
        "claims": 6,
        "claims_flagged": 4,
        "unjudged": 0,
        "forecasts_flagged": 3,
        "leak_weight_sum": pytest.approx(lw),
        "leak_weight_max": pytest.approx(max(wa["leak_weight"], wb["leak_weight"])),
    }
    assert summary["quiet"]["claims_flagged"] == 0 and summary["quiet"]["leak_weight_sum"] == 0.0
    # 8 claims, 7 distinct (text, question): "Polls were tight for months." is writer's and
    # quiet's on A at one t0; writer's one claim on C is its whole rationale, already judged as
    # the rationale in the same audit: from the cache
    assert said["verdicts"] == {"judged": 6, "cached": 1}


def test_claims_are_judged_against_the_question_at_t0_and_cached(crafted, tmp_path, scripted):
    first = audited(crafted, tmp_path)
    (a, t0_a, _, _), _, _ = crafted.markets
    asked = {text: q for text, q in scripted.calls}
    question = asked["Some weeks later the count did not change."]
    assert (question.market_id, question.t0) == (a, t0_a)  # the market as it stood at its t0
    calls = len(scripted.calls)
    second = audited(crafted, tmp_path)
    assert len(scripted.calls) == calls  # every verdict from audits.db
    assert second.claims["verdicts"] == {"judged": 0, "cached": 7}
    assert second.claims["forecasts"] == first.claims["forecasts"]


def test_the_report_shows_the_claim_summary_after_the_audit(crafted, tmp_path):
    from hindcast.audit import CLAIM_COLUMNS, stored_findings

    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(crafted.url.removeprefix("sqlite:///"), folder / "hindcast.db")
    url = f"sqlite:///{folder / 'hindcast.db'}"
    store = RunStore(url)
    try:
        audit(store, RUN, ("scripted",), replicates=50, claims=True)  # audits.db beside it
    finally:
        store.close()
    leak, claims = stored_findings(url, [RUN])
    assert leak.key == "audit" and claims.columns == CLAIM_COLUMNS
    assert claims.title == f"Rationale claims stating a fact after t0, run {RUN}"
    assert [(r[0], r[3], r[5]) for r in claims.rows] == [("quiet", 0, 0), ("writer", 4, 3)]
    assert claims.notes[0] == "Detectors: scripted."


def test_without_claims_the_audit_is_unchanged(crafted, tmp_path):
    result = audited(crafted, tmp_path, claims=False)
    assert result.claims is None and "claims" not in result.to_json()


# ---- the command -----------------------------------------------------------------------------
@pytest.fixture()
def runs(crafted, tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(crafted.url.removeprefix("sqlite:///"), folder / "hindcast.db")
    return folder


def test_the_command_prints_the_summary_and_each_flagged_claim(crafted, runs, capsys):
    db = str(runs / "hindcast.db")
    assert hindcast_audit(RUN, "--detector", "scripted", "--claims", "--db", db) == 0
    out = capsys.readouterr().out
    assert "Rationale claims stating a fact after t0" in out
    a = crafted.markets[0][0]
    assert f"writer · {a} · " in out and "claim 1 (reveals-outcome, weight " in out
    assert "Reports say it has officially resolved in favour." in out
    assert hindcast_audit(RUN, "--detector", "scripted", "--claims", "--json", "--db", db) == 0
    document = json.loads(capsys.readouterr().out)
    assert [s["claims_flagged"] for s in document["claims"]["summary"]] == [0, 4]


def test_a_bad_detector_with_claims_is_one_line_and_writes_nothing(runs, capsys):
    before = sorted(p.name for p in runs.iterdir())
    db = str(runs / "hindcast.db")
    assert hindcast_audit(RUN, "--claims", "--detector", "cascade:lexical", "--db", db) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert "a cascade names two or more detectors" in captured.err
    assert sorted(p.name for p in runs.iterdir()) == before
