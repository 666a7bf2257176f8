"""`probe_recall`: probe models on a market store, store the answers, report the rates.

    with probe_models(db_url) as models:
        run = probe_recall(["zero-shot:model=local"], Path("markets/sample"), models=models,
                           results=default_recall_path(db_url), limit=5)
    run.finding  # rates per model and regime

The answers (failures included) are merged into the results file before anything is
raised; an outage is never stored: the probe then raises `StoppedError` (exit 4, resumable)
naming how many questions were not asked, and the next run asks only those (the others
come from the response cache).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hindcast import environment, llm, replay, scoring
from hindcast.audit.probe import (
    DEFAULT_FRACTION,
    ProbeResult,
    items_from_store,
    models_of,
    probe,
)
from hindcast.audit.probe_report import recall_finding
from hindcast.audit.probe_store import load_recall, store_answers, where
from hindcast.errors import StoppedError
from hindcast.scoring import Finding


@dataclass(frozen=True)
class RecallRun:
    """One probe: what it asked and got, where it stored them (a file or a PostgreSQL URL),
    and its rates."""

    result: ProbeResult
    path: Path | str
    finding: Finding
    models: tuple[str, ...]
    markets: int

    def to_json(self) -> dict:
        return {
            "models": list(self.models),
            "markets": self.markets,
            "results": where(self.path),
            "answers": len(self.result.answers),
            "failures": sum(not a.ok for a in self.result.answers),
            "requests": self.result.requests,
            "cache_hits": self.result.cache_hits,
            "outages": list(self.result.outages),
            "skipped": list(self.result.skipped),
            "finding": self.finding.to_json(),
        }


def probe_models(
    db_url: str,
    out_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    no_cache: bool = False,
    concurrency: int = 4,
):
    """A Models value whose response cache is the sweeps' (responses.db beside the run database)."""
    return llm.Models.from_environment(
        environment.of(env),
        replay.cache_path(db_url, Path(out_dir or "runs")),
        no_cache=no_cache,
        concurrency=concurrency,
    )


def probe_recall(
    specs: Sequence[str],
    store: Path,
    *,
    models=None,
    results: Path | str,
    version: str | None = None,
    ids: Sequence[str] = (),
    limit: int | None = None,
    fraction: float = DEFAULT_FRACTION,
    cutoffs: Mapping | None = None,
    registry: Path | None = None,
    concurrency: int = 4,
    open_models=None,
) -> RecallRun:
    """Probe the models of `specs` on the store's markets; merge the answers into `results` (a
    file, or a PostgreSQL URL: the table `probe_answers` of that database).
    `cutoffs`: a model-cutoff table (None: the shipped registry, `registry` laid over it).
    `open_models()` (instead of `models`): the Models opened (and closed) once every input was
    checked, so a refused probe creates no response cache."""
    from contextlib import nullcontext

    asked = models_of(specs)
    items, skipped = items_from_store(Path(store), version, ids, limit, fraction)
    table = cutoffs if cutoffs is not None else scoring.load_cutoffs(registry)
    load_recall(results)  # results that cannot be read are refused before a cache is created
    with open_models() if open_models is not None else nullcontext(models) as opened:
        result = asyncio.run(_probe_and_close(asked, items, opened, table, concurrency))
    result = replace(result, skipped=tuple(skipped))
    path = store_answers(results, result.answers)
    run = RecallRun(
        result, path, recall_finding(result.answers), tuple(a.model for a in asked), len(items)
    )
    if result.outages:
        raise StoppedError(
            f"stopped: {len(result.outages)} probe question(s) not asked because a model could "
            f"not be reached (first: {result.outages[0]}); the {len(result.answers)} answer(s) "
            f"received are stored in {where(path)} — re-run the same command to ask the rest"
        )
    return run


async def _probe_and_close(asked, items, models, table, concurrency) -> ProbeResult:
    try:
        return await probe(asked, items, models, table, concurrency)
    finally:
        await models.aclose()
