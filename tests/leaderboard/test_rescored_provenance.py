"""A re-scored run's report names the scoring policies that scored it.

A run keeps the scoring policies in force when it was created; a later release may score it
under other ones. The report must say which policies produced its figures (and, when they
differ, which ones the run recorded), not pass the recorded ones off as the scoring ones."""

from __future__ import annotations

import json
import re
from html import unescape

from sqlalchemy import text

from hindcast import api
from hindcast.leaderboard.run_export import export_runs
from hindcast.runs.store import RunStore
from tests.helpers import run_cli
from tests.leaderboard.sample_runs import sweep_runs


def _provenance(html: str) -> dict[str, str]:
    section = html[html.index('<section id="provenance">') :]
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section)
    return {unescape(k): unescape(v) for k, v in pairs}


def test_a_rescored_runs_report_shows_the_policies_that_scored_it(tmp_path):
    url, ids = sweep_runs(tmp_path / "runs", ("narrow",))
    rid = ids["narrow"]
    store = RunStore(url)
    recorded = json.loads(store.run(rid).manifest_json)
    scoring = recorded["scoring_policies"]  # this release's, recorded when it created the run
    assert scoring["replicates"] == 2000 and scoring["log_score"] == "log-clip-1e-6"
    older = {**scoring, "replicates": 1000, "log_score": "log-clip-1e-4"}
    with store.engine.begin() as db:  # the run as a release with other policies stored it
        db.execute(
            text("UPDATE runs SET manifest_json = :m WHERE id = :id"),
            {"m": json.dumps({**recorded, "scoring_policies": older}, sort_keys=True), "id": rid},
        )

    export_runs(store, [rid], tmp_path / "out", formats=("html",))
    facts = _provenance((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert "replicates=2000" in facts["scoring policies"]
    assert "log_score=log-clip-1e-6" in facts["scoring policies"]
    assert "replicates=1000" not in facts["scoring policies"]
    assert "replicates=1000" in facts["scoring policies recorded at creation"]

    rescored = api.rescore(store, rid)
    assert rescored.policies == scoring
    assert rescored.manifest.scoring_policies == older  # the record is kept as it was
    shown = run_cli("rescore", rid, "--db", str(tmp_path / "runs" / "hindcast.db"), "--json")
    assert json.loads(shown.stdout)["scoring_policies"] == scoring


def test_a_run_scored_under_the_policies_it_recorded_lists_them_once(tmp_path):
    url, ids = sweep_runs(tmp_path / "runs", ("narrow",))
    store = RunStore(url)
    export_runs(store, [ids["narrow"]], tmp_path / "out", formats=("html",))
    facts = _provenance((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert "replicates=2000" in facts["scoring policies"]
    assert "scoring policies recorded at creation" not in facts
