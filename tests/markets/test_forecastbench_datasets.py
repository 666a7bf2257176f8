"""`hindcast markets import forecastbench-datasets` on small real excerpts of ForecastBench's
published files (tests/fixtures/forecastbench_datasets, CC BY-SA 4.0, see its README): counts
per source equal an independent parse, unresolved rows never become outcomes, ids keyed by round
and source, a clone and a bare git directory read at their commit with each file's sha256, and
a sweep of the imported Polymarket questions joined to their venue history (pulled by the import
from the Polymarket fake) scores the market baseline exactly."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindcast.markets.fake_polymarket import FakePolymarket, SimMarket, serve
from hindcast.markets.prices import price_at
from hindcast.markets.store import open_version
from hindcast.records import PricePoint
from tests.helpers import run_cli
from tests.markets.kalshi_support import tree
from tests.markets.sweep_support import sweep_and_export

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "forecastbench_datasets"
ROUND = FIXTURE / "datasets" / "question_sets" / "2025-10-26-llm.json"
RESOLUTIONS = FIXTURE / "datasets" / "resolution_sets" / "2025-10-26_resolution_set.json"
MARKETS = ("manifold", "metaculus", "polymarket", "infer")


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def expected_counts() -> dict[str, tuple[int, int]]:
    """(questions, imported) per source, read here straight from the files: a market question
    is imported exactly when its round's resolution set has a single row with resolved true."""
    rows = load(RESOLUTIONS)["resolutions"]
    resolved = {(r["source"], r["id"]) for r in rows if r["resolved"] and r["direction"] is None}
    out: dict[str, tuple[int, int]] = {}
    for q in load(ROUND)["questions"]:
        n, k = out.get(q["source"], (0, 0))
        hit = q["source"] in MARKETS and (q["source"], q["id"]) in resolved
        out[q["source"]] = (n + 1, k + hit)
    return out


def run_import(path: Path, store: Path, *extra: str):
    return run_cli(
        "markets", "import", "forecastbench-datasets", str(path), "--store", str(store), *extra
    )


def test_counts_per_source_equal_an_independent_parse_and_unresolved_rows_are_no_outcome(
    tmp_path,
):
    proc = run_import(FIXTURE, tmp_path / "store", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    got = {s: (c["questions"], c["imported"]) for s, c in report["by_source"].items()}
    assert got == expected_counts()
    bundle = open_version(tmp_path / "store").bundle
    rows = {(r["source"], r["id"]): r for r in load(RESOLUTIONS)["resolutions"]}
    unresolved = {k for k, r in rows.items() if not r["resolved"]}
    assert unresolved, "the excerpt has unresolved market rows"
    outcomes = {r.market_id: r.outcome for r in bundle.resolutions}
    for market in bundle.markets:
        _, due, source, qid = market.id.split(":", 3)
        assert due == "2025-10-26" and (source, qid) not in unresolved
        assert outcomes[market.id] == rows[(source, qid)]["resolved_to"] in (0.0, 1.0)
    assert report["by_source"]["polymarket"]["skipped"][
        "not resolved (resolved: false: resolved_to is the latest daily value, not an outcome)"
    ] == sum(1 for s, _ in unresolved if s == "polymarket")


def test_text_price_and_meta_are_the_frozen_question(tmp_path):
    assert run_import(FIXTURE, tmp_path / "store").returncode == 0
    bundle = open_version(tmp_path / "store").bundle
    frozen = {(q["source"], q["id"]): q for q in load(ROUND)["questions"]}
    for market in bundle.markets:
        _, _, source, qid = market.id.split(":", 3)
        q, meta = frozen[(source, qid)], bundle.meta[market.id]
        freeze = datetime.fromisoformat(q["freeze_datetime"])
        assert market.question == q["question"] and market.scheduled_close is None
        assert bundle.prices[market.id] == (PricePoint(freeze, float(q["freeze_datetime_value"])),)
        assert (
            meta.venue == source and meta.rules_updated_at == freeze and meta.event == "2025-10-26"
        )


def test_a_bare_git_directory_is_read_at_its_commit_with_each_files_sha256(tmp_path):
    work = tmp_path / "clone"
    shutil.copytree(FIXTURE / "datasets", work / "datasets")
    (work / "datasets" / "question_sets" / "latest-llm.json").unlink()
    (work / "datasets" / "question_sets" / "latest-llm.json").symlink_to("2025-10-26-llm.json")
    (work / "datasets" / "forecast_sets").mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    subprocess.run([*git, "-C", str(work), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "excerpt"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(tmp_path / "bare")], check=True)
    commit = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for source in (work, tmp_path / "bare"):
        store = tmp_path / f"store-{source.name}"
        proc = run_import(source, store)
        assert proc.returncode == 0, proc.stderr
        manifest = json.loads((open_version(store).path / "manifest.json").read_text())
        provenance = manifest["provenance"]
        assert provenance["repository_commit"] == commit and f"commit {commit}" in proc.stdout
        name = "datasets/question_sets/2025-10-26-llm.json"
        assert provenance["files_sha256"][name] == hashlib.sha256(ROUND.read_bytes()).hexdigest()
        assert "symlink" in provenance["set_aside"]["datasets/question_sets/latest-llm.json"]


def test_ids_shared_by_two_sources_are_two_questions(tmp_path):
    """INFER and Metaculus both have a question 1585 (the real 2025-06-22 rows): keyed apart."""
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(FIXTURE / "datasets/resolution_sets/2025-06-22_resolution_set.json", files)
    questions = [q for q in load(ROUND)["questions"] if q["source"] in ("infer", "metaculus")][:2]
    for q, source in zip(questions, ("infer", "metaculus")):
        q.update(id="1585", source=source)
    (files / "2025-06-22-llm.json").write_text(
        json.dumps(
            {
                "forecast_due_date": "2025-06-22",
                "question_set": "2025-06-22-llm.json",
                "questions": questions,
            }
        ),
        encoding="utf-8",
    )
    proc = run_import(files, tmp_path / "store", "--json")
    assert proc.returncode == 0, proc.stderr
    ids = {m.id for m in open_version(tmp_path / "store").bundle.markets}
    assert ids == {"fb:2025-06-22:infer:1585"}  # the Metaculus row is resolved: false
    report = json.loads(proc.stdout)["by_source"]
    assert report["metaculus"]["skipped"] and report["infer"]["imported"] == 1


@pytest.mark.parametrize(
    "case", ["lfs pointer only", "resolved row not 0 or 1", "missing path", "question not object"]
)
def test_bad_input_is_one_line_and_the_store_is_unchanged(tmp_path, case):
    from tests.markets.kalshi_support import polymarket_store

    store = tmp_path / "store"
    polymarket_store(store)
    before = tree(store)
    files = tmp_path / "files"
    files.mkdir()
    target = files
    if case == "lfs pointer only":
        (files / "a.json").write_text(
            "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 23526935\n"
        )
    elif case == "resolved row not 0 or 1":
        shutil.copy(ROUND, files)
        body = load(RESOLUTIONS)
        body["resolutions"][0] |= {"resolved": True, "resolved_to": 0.4}
        (files / "r.json").write_text(json.dumps(body))
    elif case == "question not object":
        body = load(ROUND)
        body["questions"][3] = "oops"
        (files / "q.json").write_text(json.dumps(body))
    else:
        target = tmp_path / "nowhere"
    proc = run_import(target, store)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("hindcast: error: ")
    assert tree(store) == before


def opened_of(q: dict) -> datetime:
    """The question's opening as frozen (Polymarket: a bare date, or N/A)."""
    text = q["market_info_open_datetime"]
    if text == "N/A":
        return datetime.fromisoformat(q["freeze_datetime"]) - timedelta(days=40)
    return datetime.fromisoformat(text[:10]).replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class RealIdMarket(SimMarket):
    """A fake Polymarket market under a real ForecastBench condition id."""

    cid: str = ""

    @property
    def condition_id(self) -> str:
        return self.cid


def test_a_sweep_with_venue_histories_scores_the_market_baseline_exactly(tmp_path):
    rows = {(r["source"], r["id"]): r for r in load(RESOLUTIONS)["resolutions"]}
    poly = [
        q
        for q in load(ROUND)["questions"]
        if q["source"] == "polymarket" and rows.get(("polymarket", q["id"]), {}).get("resolved")
    ]
    sims = {}
    for n, q in enumerate(poly):
        resolved = datetime.fromisoformat(rows[("polymarket", q["id"])]["resolution_date"])
        sims[q["id"]] = RealIdMarket(
            n=n,
            opened=opened_of(q),
            resolves=resolved.replace(tzinfo=timezone.utc) + timedelta(hours=12),
            yes=rows[("polymarket", q["id"])]["resolved_to"] == 1.0,
            cid=q["id"],
        )
    fake = FakePolymarket(list(sims.values()), now=datetime(2026, 8, 1, tzinfo=timezone.utc))
    venue, store = tmp_path / "venue", tmp_path / "store"
    only = tmp_path / "polymarket-only"
    only.mkdir()
    body = load(ROUND)
    body["questions"] = [q for q in body["questions"] if q["source"] == "polymarket"]
    (only / "2025-10-26-llm.json").write_text(json.dumps(body))
    shutil.copy(RESOLUTIONS, only)
    with serve(fake) as url:  # the import pulls, by id, the markets the venue store lacks
        proc = run_import(
            only,
            store,
            "--histories",
            "venue",
            "--venue-store",
            str(venue),
            f"--gamma-url={url}/gamma",
            f"--clob-url={url}/clob",
            f"--data-url={url}/data",
            "--attempts",
            "2",
            "--json",
        )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["venue_pulls"]["polymarket"]["counts"]["stored"] == len(poly)
    assert json.loads(proc.stdout)["by_source"]["polymarket"]["venue_histories"] == len(poly)
    sweep_and_export(store, tmp_path, ("market",), "--format", "csv")
    seen = 0
    for row in csv.DictReader(open(tmp_path / "lb" / "forecasts.csv", encoding="utf-8")):
        qid = row["market_id"].split(":", 3)[3]
        t0 = datetime.fromisoformat(row["t0"].replace("Z", "+00:00"))
        points = [
            PricePoint(datetime.fromtimestamp(t, timezone.utc), p) for t, p in sims[qid].points()
        ]
        expected = price_at(points, t0)
        assert expected is not None and float(row["market_price"]) == expected.p
        assert float(row["probability"]) == expected.p
        outcome = rows[("polymarket", qid)]["resolved_to"]
        assert float(row["market_brier"]) == pytest.approx((expected.p - outcome) ** 2)
        seen += 1
    assert seen == len(poly) * 4  # each question at the four default lifetime fractions


@settings(max_examples=25, deadline=None)
@given(fraction=st.floats(0.05, 0.95), late_seconds=st.integers(0, 86400), flip=st.booleans())
def test_no_look_ahead_venue_points_after_t0_change_nothing_before_it(fraction, late_seconds, flip):
    """Two venue stores that differ only after t0 (points from exactly t0 on, a resolution
    changed): every imported question shows the same text, history before t0 and price at t0."""
    from hindcast.markets.bundle import MarketBundle, market_at
    from hindcast.markets.fbdatasets import import_datasets
    from hindcast.markets.fbdatasets_files import read_files
    from hindcast.markets.prices import history_before
    from hindcast.records import Market, Resolution

    files = read_files(FIXTURE)
    poly = [q for q in load(ROUND)["questions"] if q["source"] == "polymarket"]
    start = datetime(2025, 6, 1, tzinfo=timezone.utc)
    span = timedelta(days=200)
    t0 = start + span * fraction

    def venue(after: bool) -> MarketBundle:
        markets, resolutions, prices = [], [], {}
        for n, q in enumerate(poly):
            points = [
                PricePoint(start + timedelta(hours=6 * k), 0.3 + (n + k) % 5 / 10)
                for k in range(800)
            ]
            if after:
                late = t0 + timedelta(seconds=late_seconds)
                points = [p for p in points if p.t < t0] + [PricePoint(late, 0.99)]
            markets.append(Market(q["id"], q["question"], "", source="polymarket"))
            status = "yes" if after and flip else "no"
            resolutions.append(Resolution(q["id"], status, start + span, start + span))
            prices[q["id"]] = tuple(points)
        return MarketBundle(tuple(markets), tuple(resolutions), prices)

    one, _ = import_datasets(files, venue(False))
    other, _ = import_datasets(files, venue(True))
    joined = [m for m in one.markets if len(one.prices.get(m.id, ())) > 1]
    assert len(joined) == 6  # the resolved Polymarket questions took the venue's history
    for market in one.markets:
        assert market_at(other, market.id, t0) == market_at(one, market.id, t0)
        before = history_before(one.prices.get(market.id, ()), t0)
        assert history_before(other.prices.get(market.id, ()), t0) == before
        assert price_at(other.prices.get(market.id, ()), t0) == price_at(
            one.prices.get(market.id, ()), t0
        )


def test_questions_known_only_at_their_freeze_are_swept_there_once_whatever_the_fractions(
    tmp_path,
):
    """Without a venue history a question's one price and its text are known at
    freeze_datetime: a later cutoff would score against a stale price, an earlier one read an
    unfrozen text. So every rule maps to one cutoff, the second after the freeze."""
    assert run_import(FIXTURE, tmp_path / "store").returncode == 0
    runs = tmp_path / "runs"
    sweep = run_cli(
        "sweep", "--store", str(tmp_path / "store"), "-f", "market", "--fractions",
        "0.25,0.5,1.0", "--out", str(runs), "--db", str(runs / "h.db"), "--json",
    )  # fmt: skip
    assert sweep.returncode == 0, sweep.stderr
    freeze = {
        f"fb:2025-10-26:{q['source']}:{q['id']}": datetime.fromisoformat(q["freeze_datetime"])
        for q in load(ROUND)["questions"]
    }
    with sqlite3.connect(runs / "h.db") as db:
        rows = db.execute("SELECT market_id, t0 FROM forecasts").fetchall()
    assert rows and len({m for m, _ in rows}) == len(rows)
    for market_id, t0 in rows:
        want = freeze[market_id] + timedelta(seconds=1)
        assert datetime.fromisoformat(t0.replace("Z", "+00:00")) == want
