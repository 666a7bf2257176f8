"""`hindcast.audit.run_audit` on a stored run built by hand (tests/audit/planted_run.py): the
misdated outcome-revealing document is flagged, and so are the forecast that read it and the
rationale that states the outcome; the Brier with and without them is recomputed by hand."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from hindcast.audit import run_audit, stored
from hindcast.errors import ConfigError, InfrastructureError, RunStoreError, StoppedError
from hindcast.runs.store import RunStore
from tests.audit import planted_run
from tests.audit.planted_run import brier

FAST = 300


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    return planted_run.build(tmp_path_factory.mktemp("planted"))


@pytest.fixture()
def scripted():
    return planted_run.register_scripted()


def audited(planted, tmp_path, specs=("scripted",), **options):
    store = RunStore(planted.url)
    try:
        return run_audit.audit(
            store,
            planted.run_id,
            specs,
            audit_file=tmp_path / "audits.db",
            replicates=FAST,
            **options,
        )
    finally:
        store.close()


def copied_url(planted, tmp_path) -> str:
    """The planted run database copied into tmp_path/runs/ (audits.db is written beside it)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(planted.url.removeprefix("sqlite:///"), folder / "hindcast.db")
    return f"sqlite:///{folder / 'hindcast.db'}"


def rows_of(result) -> dict:
    return {row["forecaster"]: row for row in result.to_json()["forecasters"]}


def test_the_misdated_document_and_the_forecast_that_read_it_are_flagged(
    planted, scripted, tmp_path
):
    agent, closed, _ = rows_of(audited(planted, tmp_path)).values()
    assert (
        agent["docs_read"],
        agent["docs_flagged"],
        agent["reveals_outcome"],
        agent["after_t0"],
    ) == (4, 1, 1, 0)
    assert (agent["evidence_flagged"], agent["rationales_flagged"], agent["flagged_forecasts"]) == (
        1,
        1,
        2,
    )
    assert (agent["forecasts"], agent["failed"], agent["docs_missing"], agent["unjudged"]) == (
        3,
        0,
        0,
        0,
    )
    assert agent["docs_withheld"] == 0
    assert (
        closed["forecasts"],
        closed["failed"],
        closed["docs_read"],
        closed["flagged_forecasts"],
    ) == (3, 1, 0, 0)


def test_a_document_the_leak_filter_withheld_was_not_read(planted, scripted, tmp_path):
    filtered = rows_of(audited(planted, tmp_path))["filtered"]
    assert (filtered["docs_read"], filtered["docs_withheld"], filtered["docs_flagged"]) == (1, 1, 0)
    assert filtered["flagged_forecasts"] == 0 and filtered["brier_all"] == filtered["brier_clean"]


def test_every_flagged_text_is_listed_with_its_verdict(planted, scripted, tmp_path):
    (a, t0_a, _, _), (b, t0_b, _, _), _ = planted.markets
    flagged = audited(planted, tmp_path).flagged
    assert [
        (f["forecaster"], f["market"], f["t0"], f["kind"], f["doc_id"], f["label"]) for f in flagged
    ] == [
        ("agent", a, planted_run.t0_text(t0_a), "document", planted.leak_id, "reveals-outcome"),
        ("agent", b, planted_run.t0_text(t0_b), "rationale", "", "reveals-outcome"),
    ]
    assert flagged[0]["verdicts"] == [
        {
            "detector": "scripted-v1",
            "label": "reveals-outcome",
            "score": 1.0,
            "reason": "marker for reveals-outcome",
        }
    ]
    assert planted_run.LEAK_MARK in flagged[0]["excerpt"]


def test_each_text_is_judged_against_its_question_at_t0(planted, scripted, tmp_path):
    from hindcast.markets.store import open_version

    audited(planted, tmp_path)
    assert len(scripted.calls) == 6  # 4 documents + 2 non-empty rationales, each once
    t0s = {m: t0 for m, t0, _, _ in planted.markets}
    asked = {m.id: m.question for m in open_version(planted_run.SAMPLE_MARKETS).bundle.markets}
    assert {q.market_id for _, q in scripted.calls} == set(t0s)
    assert all(
        q.t0 == t0s[q.market_id] and q.question == asked[q.market_id] for _, q in scripted.calls
    )
    leak = next(q for text, q in scripted.calls if text.endswith(("resolved: YES", "resolved: NO")))
    assert leak.market_id == planted.markets[0][0]


def test_the_brier_with_and_without_the_flagged_forecasts_by_hand(planted, scripted, tmp_path):
    (a, _, y_a, price_a), (b, _, y_b, price_b), (c, _, y_c, _) = planted.markets
    agent = rows_of(audited(planted, tmp_path))["agent"]
    p = {a: abs(y_a - 0.05), b: 0.3, c: 0.5}
    everything = (brier(p[a], y_a) + brier(p[b], y_b) + brier(p[c], y_c)) / 3
    assert agent["brier_all"] == pytest.approx(everything)
    assert agent["brier_clean"] == pytest.approx(brier(p[c], y_c))
    assert agent["all_minus_clean"] == pytest.approx(everything - brier(p[c], y_c))
    versus = (
        (brier(p[a], y_a) - brier(price_a, y_a)) + (brier(p[b], y_b) - brier(price_b, y_b))
    ) / 2
    assert agent["flagged_minus_market"] == pytest.approx(versus)
    assert agent["delta_low"] <= agent["all_minus_clean"] <= agent["delta_high"]
    assert agent["vs_market_low"] <= agent["flagged_minus_market"] <= agent["vs_market_high"]


def test_a_forecaster_with_nothing_flagged_loses_nothing(planted, scripted, tmp_path):
    closed = rows_of(audited(planted, tmp_path))["closed"]
    assert (
        closed["brier_all"] == closed["brier_clean"] == pytest.approx(0.25)
    )  # the failure is not scored
    assert closed["all_minus_clean"] == 0.0 and closed["flagged_minus_market"] is None


def test_re_auditing_calls_no_detector_and_gives_the_same_audit(planted, scripted, tmp_path):
    first = audited(planted, tmp_path)
    calls = len(scripted.calls)
    second = audited(planted, tmp_path)
    assert len(scripted.calls) == calls and (first.judged, first.cached) == (6, 0)
    assert (second.judged, second.cached) == (0, 6)
    assert second.finding == first.finding and second.flagged == first.flagged


def test_the_stored_audit_is_the_report_finding(planted, scripted, tmp_path):
    result = audited(planted, tmp_path)
    store = stored.AuditStore(tmp_path / "audits.db")
    (document,) = store.audits(planted.run_id)
    store.close()
    again = stored.finding_of(document)
    assert again.key == "audit" and again.columns == result.finding.columns
    assert again.rows == result.finding.rows and again.notes == result.finding.notes


def test_the_report_reads_audits_beside_the_run_database(planted, scripted, tmp_path):
    url = copied_url(planted, tmp_path)
    assert stored.stored_findings(url, [planted.run_id]) == []
    store = RunStore(url)
    result = run_audit.audit(store, planted.run_id, ("scripted",), replicates=FAST)
    store.close()
    assert (tmp_path / "runs" / "audits.db").is_file()
    (finding,) = stored.stored_findings(url, [planted.run_id])
    assert finding.rows == result.finding.rows and stored.stored_findings(url, ["other-run"]) == []


def test_an_audit_of_other_rows_is_marked_stale_in_the_report(planted, scripted, tmp_path):
    from hindcast.records import Forecast
    from hindcast.replay import load_scored

    store = RunStore(copied_url(planted, tmp_path))
    run_audit.audit(store, planted.run_id, ("scripted",), replicates=FAST)
    now = {planted.run_id: load_scored(store, planted.run_id).rows}
    (fresh,) = stored.stored_findings(store.url, [planted.run_id], now)
    market, t0, _, _ = planted.markets[1]
    store.add(
        planted.run_id, "filtered", market, t0, "at", Forecast(0.4)
    )  # the run grows after the audit
    later = {planted.run_id: load_scored(store, planted.run_id).rows}
    (stale,) = stored.stored_findings(store.url, [planted.run_id], later)
    store.close()
    assert "STALE" not in fresh.title and stale.title.endswith(
        "STALE: the run changed since this audit; run hindcast audit again"
    )


def test_a_judge_outage_stops_the_audit_and_is_never_a_verdict(planted, scripted, tmp_path):
    scripted.outage = InfrastructureError("connection refused", "http://127.0.0.1:9")
    with pytest.raises(StoppedError, match="leak judge unreachable.*re-run") as stopped:
        audited(planted, tmp_path)
    assert stopped.value.exit_code == 4
    store = stored.AuditStore(tmp_path / "audits.db")
    assert store.n_verdicts() == 0 and store.audits(planted.run_id) == []
    store.close()


def test_an_unknown_detector_or_run_is_refused_before_anything_is_written(
    planted, scripted, tmp_path
):
    with pytest.raises(ConfigError, match="unknown leak detector 'nope'"):
        audited(planted, tmp_path, specs=("scripted", "nope"))
    with pytest.raises(RunStoreError, match="no run 'missing'"):
        run_audit.audit(
            RunStore(planted.url), "missing", ("scripted",), audit_file=tmp_path / "audits.db"
        )
    assert not (tmp_path / "audits.db").exists()


def test_a_moved_archive_is_named_and_can_be_given(planted, scripted, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(planted.archive, moved)
    shutil.move(planted.archive, tmp_path / "gone")
    try:
        with pytest.raises(ConfigError, match="read 4 documents, none found.*--archive DIR"):
            audited(planted, tmp_path)
        assert not (tmp_path / "audits.db").exists()
        result = audited(planted, tmp_path, archive=moved)
    finally:
        shutil.move(tmp_path / "gone", planted.archive)
    assert rows_of(result)["agent"]["docs_flagged"] == 1


def test_a_detector_without_a_verdict_is_counted_unjudged(planted, scripted, tmp_path):
    from hindcast import leaks
    from hindcast.errors import ForecastError

    class Mute:
        name = "mute"

        async def judge(self, text, question):
            raise ForecastError("no label in the answer")

    leaks.register("mute", lambda spec, params, models: Mute())
    result = audited(planted, tmp_path, specs=("scripted", "mute"))
    rows = {(r["forecaster"], r["detector"]): r for r in result.to_json()["forecasters"]}
    assert (
        rows[("agent", "mute")]["unjudged"] == 6
        and rows[("agent", "mute")]["flagged_forecasts"] == 0
    )
    # any: the 2 texts the scripted detector flagged are flagged; the other 4 lack mute's verdict
    assert (
        rows[("agent", "any")]["flagged_forecasts"] == 2 and rows[("agent", "any")]["unjudged"] == 4
    )
    assert math.isclose(
        rows[("agent", "mute")]["brier_all"], rows[("agent", "mute")]["brier_clean"]
    )


def test_the_lexical_detector_flags_the_misdated_document(planted, tmp_path):
    flagged = audited(planted, tmp_path, specs=("lexical",)).flagged
    assert planted.leak_id in {f["doc_id"] for f in flagged}
    assert not {"neutral-a", "neutral-b", "neutral-c"} & {f["doc_id"] for f in flagged}


def test_the_stored_audit_renders_as_a_report_section(planted, scripted, tmp_path):
    from hindcast.leaderboard.report import write_report
    from hindcast.replay import load_scored

    store = RunStore(copied_url(planted, tmp_path))
    run_audit.audit(store, planted.run_id, ("scripted",), replicates=FAST)
    found = stored.stored_findings(store.url, [planted.run_id])
    html = write_report(
        tmp_path / "report",
        [load_scored(store, planted.run_id)],
        "t",
        replicates=FAST,
        findings=found,
    ).read_text()
    store.close()
    assert '<section id="finding-audit"' in html and "Leak audit of run audit-planted" in html


def judge_reply(body: dict) -> str:
    """The scripted judge: the text it is shown decides its answer (no network, no model)."""
    shown = body["messages"][-1]["content"]
    if "Nothing decisive yet" in json.dumps(body["messages"]):
        return "I would rather not say."  # unreadable, and again after the repair turn
    if planted_run.LEAK_MARK in shown:
        return '{"label": "reveals-outcome", "confidence": 0.9}'
    return '{"label": "neither", "confidence": 0.8}'


def test_the_llm_judge_with_the_fake_model(planted, tmp_path):
    from hindcast.llm.fake import FakeChatModel
    from hindcast.llm.models import Models

    fake = FakeChatModel(default=judge_reply)
    with fake.serve() as url, Models(max_retries=0, backoff=0.0) as models:
        spec = f"judge:model=openai-compatible:{url}#judge-model"
        first = audited(planted, tmp_path, specs=(spec,), models=models)
        asked = len(fake.requests)
        second = audited(planted, tmp_path, specs=(spec,), models=models)
    agent = rows_of(first)["agent"]
    assert (agent["docs_flagged"], agent["evidence_flagged"], agent["rationales_flagged"]) == (
        1,
        1,
        1,
    )
    assert (
        agent["unjudged"] == 1
    )  # "Nothing decisive yet.": unreadable twice, so no verdict (not "neither")
    assert {f["doc_id"] for f in first.flagged} == {planted.leak_id, ""}
    (verdict,) = first.flagged[0]["verdicts"]
    assert verdict["detector"].startswith(spec + "#") and verdict["score"] == 0.9
    assert (first.judged, first.cached) == (5, 0) and (second.judged, second.cached) == (0, 5)
    assert (
        len(fake.requests) == asked
    )  # verdicts from audits.db; the unreadable answer replayed by the response cache
    assert second.finding == first.finding


def test_an_unreachable_fake_judge_stops_the_audit(planted, tmp_path):
    from hindcast.llm.fake import FakeChatModel, error
    from hindcast.llm.models import Models

    with (
        FakeChatModel(default=error(503)).serve() as url,
        Models(max_retries=0, backoff=0.0) as models,
        pytest.raises(StoppedError, match="leak judge unreachable"),
    ):
        audited(
            planted,
            tmp_path,
            specs=(f"judge:model=openai-compatible:{url}#judge-model",),
            models=models,
        )
    store = stored.AuditStore(tmp_path / "audits.db")
    assert store.n_verdicts() == 0 and store.audits(planted.run_id) == []
    store.close()
