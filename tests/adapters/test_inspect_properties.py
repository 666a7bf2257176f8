"""Nothing after t0 reaches an Inspect sample: adding post-t0 documents (worded like the questions,
some created exactly at the last sample's t0), post-t0 prices and flipping every resolution that was
not public before any sample's t0 leaves every sample's input, metadata and target, and every
request the model received (the tool outputs included), byte for byte the same."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from datetime import timedelta

import pytest

from hindcast.llm.cache import canonical
from hindcast.markets.store import open_version, write_version
from hindcast.records import PricePoint
from hindcast.replay.plan import prepare, question_at
from hindcast.replay.spec import ReplaySpec
from tests.adapters.inspect_support import fake_model
from tests.helpers import SAMPLE_MARKETS, sample_headlines
from tests.integration.archive_support import (
    build_archive,
    real_headlines,
    write_headlines,
)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="needs the inspect extra"
)
FLIP = {"yes": "no", "no": "yes"}
MONTHS = ["2025-09", "2025-10", "2025-11", "2025-12"]


def later_world(bundle, cutoffs):
    """The bundle with prices at and after each t0 and every resolution not public before the
    last t0 flipped (nothing a forecaster at any of these t0s may know)."""
    last = max(c.t0 for c in cutoffs)
    prices = dict(bundle.prices)
    for c in cutoffs:
        known = {p.t for p in prices.get(c.market_id, ())}
        extra = tuple(
            PricePoint(t, 0.999) for t in (c.t0, c.t0 + timedelta(minutes=7)) if t not in known
        )
        prices[c.market_id] = tuple(sorted(prices.get(c.market_id, ()) + extra, key=lambda p: p.t))
    flipped = tuple(
        dataclasses.replace(r, status=FLIP.get(r.status, r.status)) if r.known_at >= last else r
        for r in bundle.resolutions
    )
    assert flipped != bundle.resolutions
    return dataclasses.replace(bundle, prices=prices, resolutions=flipped)


def later_documents(folder, cutoffs, questions):
    """Documents worded like each question, created exactly at the last sample's t0 and after it
    (after every sample's t0: a document created between two samples' t0s is
    history for the later one)."""
    last = max(c.t0 for c in cutoffs)
    docs = [
        (
            f"leak-{i}-{k}",
            last + timedelta(hours=h),
            f"{questions[c.market_id]} — resolved, says report",
        )
        for i, c in enumerate(cutoffs)
        for k, h in enumerate((0, 1, 24 * 40))
    ]
    return write_headlines(folder / "later.jsonl", docs)


def run(tmp, name, store, archive):
    import inspect_ai
    from inspect_ai.log import read_eval_log

    from hindcast.adapters.inspect_task import replay

    fake = fake_model()
    with fake.serve() as url:
        task = replay(
            store=str(store),
            archive=str(archive.archive),
            snapshot=archive.id,
            limit=5,
            fractions="0.5",
        )
        (log,) = inspect_ai.eval(
            task,
            model=f"hindcast/openai-compatible:{url}#fake",
            model_args={"cache": "none"},
            log_dir=str(tmp / name / "logs"),
            display="none",
        )
    log = read_eval_log(log.location)
    samples = sorted(
        (
            s.id,
            json.dumps([m.model_dump(exclude={"id"}) for m in s.input], sort_keys=True),
            json.dumps(s.metadata, sort_keys=True),
            s.target,
        )
        for s in log.samples
    )
    return samples, sorted(canonical(b) for b in fake.requests), log


def test_post_t0_documents_prices_and_resolutions_change_nothing_a_sample_sees(tmp_path):
    bundle = open_version(SAMPLE_MARKETS).bundle
    plan = prepare(
        ReplaySpec(store=SAMPLE_MARKETS, limit=5, fractions=(0.5,), forecasters=("market",))
    )
    questions = {c.market_id: question_at(plan.bundle, c).question for c in plan.cutoffs}
    (tmp_path / "inputs").mkdir()
    inputs = real_headlines(tmp_path / "inputs", MONTHS, ("fed", "rate"), per_month=20)
    assert sample_headlines(MONTHS)
    base = build_archive(tmp_path / "base", inputs)
    more = build_archive(
        tmp_path / "more", inputs + [later_documents(tmp_path, plan.cutoffs, questions)]
    )

    later = later_world(bundle, plan.cutoffs)
    flipped = {r.market_id for r, o in zip(later.resolutions, bundle.resolutions) if r != o}
    assert flipped & set(
        questions
    )  # some sampled markets' own outcomes differ between the two worlds
    from hindcast.archive.retriever import TimeBoundRetriever

    afterwards = max(c.t0 for c in plan.cutoffs) + timedelta(
        days=60
    )  # the added documents are there, later
    assert any(
        h.doc.id.startswith("leak-")
        for h in TimeBoundRetriever(more, afterwards).search(
            next(iter(questions.values())), 5, "hybrid"
        )
    )
    write_version(tmp_path / "store-more", later)

    samples, requests, log = run(tmp_path, "base", SAMPLE_MARKETS, base)
    samples_more, requests_more, log_more = run(tmp_path, "more", tmp_path / "store-more", more)

    assert len(samples) == 5 and samples_more == samples
    assert (
        len(requests) == 5 * 7 and requests_more == requests
    )  # six tool calls and an answer per sample
    tool_outputs = [
        m["content"] for r in requests for m in json.loads(r)["messages"] if m["role"] == "tool"
    ]
    assert any('"id"' in t for t in tool_outputs) and not any("leak-" in t for t in tool_outputs)
    # the scorer did read the other store: a flipped market's Brier differs (p² against (1 − p)²)
    scores = {
        s.metadata["market_id"]: next(iter(s.scores.values())).value["brier"] for s in log.samples
    }
    scores_more = {
        s.metadata["market_id"]: next(iter(s.scores.values())).value["brier"]
        for s in log_more.samples
    }
    assert all((scores[m] != scores_more[m]) == (m in flipped) for m in scores)
