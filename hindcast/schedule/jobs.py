"""The service's jobs. Each takes the config, the service state and `now`, is idempotent, and
can be killed anywhere: the next run completes it with nothing duplicated.

- pull: resolved markets whose scheduled end is at or after `since` (the watermark minus
  the lookback), plus every market *closed* at or after `since` whatever its end date (a
  newest-closed-first listing paged down to `since`: markets without `endDate` and markets
  closing long after it), plus the store's watch list of markets closed before they
  resolved (asked for by id) → a new market store version; the watermark becomes the
  instant the listing began. The lookback only absorbs Gamma's indexing delay. The pull's
  own work cache makes a killed pull resume.
- inbox: new dump files (by name and sha256) → the archive draft → a frozen snapshot →
  its index; files are marked ingested only once the snapshot is indexed.
- sweeps: see `hindcast.schedule.sweeps`.
- export: each configured leaderboard rewritten from the stored rows (atomic files).
- live: see `hindcast.schedule.live`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from hindcast import archive, leaderboard, markets
from hindcast.api import embed, freeze, ingest, pull
from hindcast.errors import StoppedError
from hindcast.frozen import sha256_file
from hindcast.schedule.config import MarketsJob, ScheduleConfig
from hindcast.schedule.live import run_live
from hindcast.schedule.state import State
from hindcast.schedule.sweeps import run_series, series_scores
from hindcast.timeutil import iso, parse_utc

if TYPE_CHECKING:
    from hindcast.llm import Models
    from hindcast.runs import RunStore

PULL_PENDING, WATERMARK = "markets:pull-pending", "markets:watermark"


@dataclass(frozen=True)
class JobContext:
    config: ScheduleConfig
    state: State
    store: RunStore
    now: datetime
    advance: Callable[[], None]  # raises Interrupted when the service is stopping
    models: Models | None = None  # the run-integrity models (keys, response cache), by the service


# -- pull -------------------------------------------------------------------------------------
def pull_markets(ctx: JobContext) -> dict:
    job = ctx.config.markets
    since, listed_at = _pull_window(ctx.state, job, ctx.now)
    before = _latest_ids(job.store)
    summary = pull(
        job.store,
        markets.PullQuery(since=since, page_size=job.page_size, closed_since=since),
        now=ctx.now,
        gamma_url=job.gamma_url,
        clob_url=job.clob_url,
        data_url=job.data_url,
        attempts=job.attempts,
        timeout=job.timeout,
        user_agent="hindcast-schedule",
    )
    ctx.state.set_many({WATERMARK: iso(listed_at), PULL_PENDING: None})
    new = sorted(_latest_ids(job.store) - before)
    return {
        "version": summary.version,
        "since": since and iso(since),
        "watermark": iso(listed_at),
        "listed": summary.listed,
        "stored": summary.stored,
        "new_markets": len(new),
        "counts": summary.counts().as_dict(),
        "failed": summary.failed[:20],
        "changed": bool(new),
    }


def _pull_window(state: State, job: MarketsJob, now: datetime) -> tuple[datetime | None, datetime]:
    """(since, listing instant): a pull begun before (and killed) keeps its window, so its
    work cache is found again and the watermark never passes what was really listed."""
    pending = state.get(PULL_PENDING)
    if pending:
        return (pending["since"] and parse_utc(pending["since"])), parse_utc(pending["listed_at"])
    mark = state.get(WATERMARK)
    since = parse_utc(mark) - job.lookback if mark else job.since
    state.set(PULL_PENDING, {"since": since and iso(since), "listed_at": iso(now)})
    return since, now


def _latest_ids(store: Path) -> set[str]:
    return (
        {m.id for m in markets.open_version(store).bundle.markets}
        if (Path(store) / "LATEST").exists()
        else set()
    )


# -- inbox ------------------------------------------------------------------------------------
def ingest_inbox(ctx: JobContext) -> dict:

    job = ctx.config.archive
    new = new_inbox_files(job, ctx.state.ingested())
    if not new:
        return {"files": 0, "changed": False}
    for box, path, _ in new:
        ingest([path], box.source, box.format, job.root)
    snapshot_id = freeze(job.root)
    info = embed(job.root, snapshot_id, job.embedder)
    ctx.state.record_ingest(
        [(p.name, sha, box.source) for box, p, sha in new], snapshot_id, ctx.now
    )
    return {
        "files": len(new),
        "snapshot": snapshot_id,
        "documents": info.get("documents"),
        "changed": True,
    }


def new_inbox_files(job, seen: set[tuple[str, str]]) -> list[tuple]:
    """(inbox, path, sha256) of every file in an inbox not ingested with this content."""
    found = [
        (box, p)
        for box in job.inboxes
        for p in sorted(Path(box.path).glob(box.pattern))
        if p.is_file() and not p.name.startswith(".")
    ]
    hashed = [(box, p, sha256_file(p)) for box, p in found]
    return [(box, p, sha) for box, p, sha in hashed if (p.name, sha) not in seen]


def indexed_snapshot(config: ScheduleConfig, state: State) -> Callable[[Path], str | None]:
    """The snapshot a sweep of an archive reads: for the service's own archive the newest one
    it has finished indexing (LATEST may be frozen but not yet embedded); else LATEST."""

    def snapshot_for(root: Path) -> str | None:
        own = config.archive is not None and Path(root).resolve() == config.archive.root.resolve()
        return (
            (state.get("archive:indexed") or archive.latest(root)) if own else archive.latest(root)
        )

    return snapshot_for


# -- sweeps -----------------------------------------------------------------------------------
def run_sweeps(ctx: JobContext) -> dict:
    snapshot_for = indexed_snapshot(ctx.config, ctx.state)
    done, stopped = [], []
    for s in (
        ctx.config.sweeps
    ):  # a sweep stopped by a budget or breaker does not keep the others from running
        try:
            done.append(
                run_series(
                    s,
                    ctx.state,
                    ctx.store,
                    ctx.config.runs_out,
                    ctx.now,
                    snapshot_for,
                    ctx.advance,
                    models=ctx.models,
                )
            )
        except StoppedError as exc:
            stopped.append(f"sweep {s.name!r}: {exc}")
    if stopped:
        raise StoppedError("; ".join(stopped))
    return {"sweeps": done, "changed": any(d["batches"] for d in done)}


# -- export -----------------------------------------------------------------------------------
def export_leaderboards(ctx: JobContext) -> dict:
    written = []
    for board in ctx.config.leaderboards:
        scores = series_scores(board.sweep, ctx.state, ctx.store)
        if scores is None:
            continue
        title = board.title or f"hindcast leaderboard — sweep {board.sweep}"
        published = leaderboard.publish.publish(
            [scores], board.out, board.formats, title=title, by=board.by
        )
        written.append(
            {
                "sweep": board.sweep,
                "out": str(board.out),
                "rows": len(scores.rows),
                "files": sorted(published.paths),
            }
        )
    return {"leaderboards": written, "changed": bool(written)}


# -- live -------------------------------------------------------------------------------------
def live_arm(ctx: JobContext) -> dict:
    """See `hindcast.schedule.live`."""
    return run_live(ctx, indexed_snapshot(ctx.config, ctx.state))


JOB_FUNCTIONS = {
    "pull": pull_markets,
    "inbox": ingest_inbox,
    "sweeps": run_sweeps,
    "export": export_leaderboards,
    "live": live_arm,
}
