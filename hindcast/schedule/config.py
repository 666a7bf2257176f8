"""The service's configuration (`hindcast.toml`), parsed once into frozen records.

Every path is relative to the config file. Sections (each job's section is optional: a
job without one is not scheduled):

    [service]      db, lock, log, runs_out
    [jobs]         pull, inbox, sweeps, export — intervals for `schedule run` ("1h", "1d")
    [markets]      store, gamma_url, clob_url, since, lookback, page_size, timeout, attempts
    [archive]      root, embedder; [[archive.inbox]] path, source, format, pattern
    [[sweeps]]     name and either spec = "file.toml" or inline [sweeps.markets] /
                   [sweeps.cutoffs] / [[sweeps.forecasters]] / [sweeps.run] (the sweep spec layout)
    [[leaderboards]]  sweep, out, formats, by
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from hindcast.errors import HindcastError
from hindcast.replay.spec import ReplaySpec, load_toml, parse_offset, spec_from_mapping
from hindcast.timeutil import parse_utc

JOBS = ("pull", "inbox", "sweeps", "export")  # also the order of `schedule once`
REFUSED_SPEC_KEYS = {
    "version": "a scheduled sweep always reads the newest market store version",
    "snapshot": "a scheduled sweep always reads the newest indexed archive snapshot",
    "limit": "a limit would apply to each batch of newly resolved markets, not to the sweep",
    "subsets": "forecaster subsets would be drawn per batch of newly resolved markets, not per sweep",
}


class ScheduleError(HindcastError):
    """The re-run service cannot do what it was asked (bad config, unknown job …)."""


@dataclass(frozen=True)
class MarketsJob:
    store: Path
    gamma_url: str | None = None
    clob_url: str | None = None
    since: datetime | None = None  # the first watermark
    lookback: timedelta = timedelta(days=7)  # re-listed before the watermark: late resolutions
    page_size: int = 500
    timeout: float = 30.0
    attempts: int = 5


@dataclass(frozen=True)
class Inbox:
    path: Path
    source: str
    format: str
    pattern: str = "*"


@dataclass(frozen=True)
class ArchiveJob:
    root: Path
    inboxes: tuple[Inbox, ...]
    embedder: str = "minilm"


@dataclass(frozen=True)
class SweepConfig:
    name: str
    spec: ReplaySpec


@dataclass(frozen=True)
class BoardConfig:
    sweep: str
    out: Path
    formats: tuple[str, ...] = ("csv", "json", "md")
    by: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class ScheduleConfig:
    path: Path
    db_url: str
    lock: Path
    log: Path | None
    runs_out: Path
    every: dict[str, timedelta]
    markets: MarketsJob | None = None
    archive: ArchiveJob | None = None
    sweeps: tuple[SweepConfig, ...] = ()
    leaderboards: tuple[BoardConfig, ...] = ()
    jobs: tuple[str, ...] = field(default=())

    def sweep(self, name: str) -> SweepConfig:
        return next(s for s in self.sweeps if s.name == name)


def load(path: Path) -> ScheduleConfig:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScheduleError(f"config {path}: {exc}") from exc
    return parse(data, path)


def parse(data: dict, path: Path) -> ScheduleConfig:
    base = path.parent
    _only(data, {"service", "jobs", "markets", "archive", "sweeps", "leaderboards"}, "the config")
    service = _table(data, "service")
    _only(service, {"db", "lock", "log", "runs_out"}, "[service]")
    db_url = _db_url(service.get("db", "runs/hindcast.db"), base)
    markets = _markets(data["markets"], base) if "markets" in data else None
    sweeps = tuple(_sweep(t, base, markets) for t in _array(data, "sweeps"))
    config = ScheduleConfig(
        path=path, db_url=db_url, lock=_lock_path(service.get("lock"), db_url, base),
        log=base / service["log"] if "log" in service else None,
        runs_out=base / service.get("runs_out", "runs/exports"), every=_intervals(_table(data, "jobs")),
        markets=markets, archive=_archive(data["archive"], base) if "archive" in data else None,
        sweeps=sweeps, leaderboards=tuple(_board(t, base) for t in _array(data, "leaderboards")))
    _check_names(config)
    return replace(config, jobs=_configured(config))


def _configured(c: ScheduleConfig) -> tuple[str, ...]:
    present = {"pull": c.markets is not None, "inbox": c.archive is not None,
               "sweeps": bool(c.sweeps), "export": bool(c.leaderboards)}
    return tuple(job for job in JOBS if present[job])


def _check_names(c: ScheduleConfig) -> None:
    names = [s.name for s in c.sweeps]
    _require(len(set(names)) == len(names), f"config {c.path}: a sweep name is used twice ({', '.join(names)})")
    for board in c.leaderboards:
        _require(board.sweep in names, f"config {c.path}: leaderboard {board.out} names sweep {board.sweep!r}, "
                                       f"which is not configured (sweeps: {', '.join(names) or 'none'})")


# -- sections -------------------------------------------------------------------------------
def _markets(t: dict, base: Path) -> MarketsJob:
    _only(t, {"store", "gamma_url", "clob_url", "since", "lookback", "page_size", "timeout", "attempts"}, "[markets]")
    _require("store" in t, "[markets] needs store = \"…\" (the market store the pulls write into)")
    return MarketsJob(store=base / t["store"], gamma_url=t.get("gamma_url"), clob_url=t.get("clob_url"),
                      since=_instant(t["since"], "[markets] since") if "since" in t else None,
                      lookback=_interval(t.get("lookback", "7d"), "[markets] lookback"),
                      page_size=int(t.get("page_size", 500)), timeout=float(t.get("timeout", 30.0)),
                      attempts=int(t.get("attempts", 5)))


def _archive(t: dict, base: Path) -> ArchiveJob:
    _only(t, {"root", "embedder", "inbox"}, "[archive]")
    _require("root" in t and t.get("inbox"), "[archive] needs root = \"…\" and at least one [[archive.inbox]]")
    inboxes = []
    for box in t["inbox"]:
        _only(box, {"path", "source", "format", "pattern"}, "[[archive.inbox]]")
        _require({"path", "source", "format"} <= set(box), "[[archive.inbox]] needs path, source and format")
        inboxes.append(Inbox(base / box["path"], box["source"], box["format"], box.get("pattern", "*")))
    return ArchiveJob(base / t["root"], tuple(inboxes), t.get("embedder", "minilm"))


def _sweep(t: dict, base: Path, markets: MarketsJob | None) -> SweepConfig:
    name = t.get("name")
    _require(isinstance(name, str) and name.strip() != "", "every [[sweeps]] needs a name")
    where = f"sweep {name!r}"
    _only(t, {"name", "spec", "markets", "archive", "cutoffs", "forecasters", "run"}, where)
    inline = sorted(set(t) - {"name", "spec"})
    _require("spec" not in t or not inline, f"{where}: give spec = \"file\" or inline sections, not both "
                                            f"(inline: {', '.join(inline)})")
    mapping = load_toml(base / t["spec"]) if "spec" in t else _inline(t, base)
    refused = sorted(k for k in REFUSED_SPEC_KEYS if mapping.get(k) not in (None, [], ()))
    _require(not refused, f"{where}: " + "; ".join(f"{k} is refused: {REFUSED_SPEC_KEYS[k]}" for k in refused))
    if "store" not in mapping:
        _require(markets is not None, f"{where}: no market store (give [markets] store, here or in [markets])")
        mapping["store"] = markets.store
    return SweepConfig(name, spec_from_mapping(mapping))


def _inline(t: dict, base: Path) -> dict:
    """The sweep spec layout nested under [[sweeps]] → the flat keys `spec_from_mapping` takes."""
    flat = {k: v for section in ("markets", "cutoffs", "run") for k, v in _table(t, section).items()}
    if "store" in flat:
        flat["store"] = base / flat["store"]
    archive = _table(t, "archive")
    if "root" in archive:
        flat["archive"] = base / archive["root"]
    flat.update({"snapshot": archive["snapshot"]} if "snapshot" in archive else {})  # refused, by name
    forecasters = t.get("forecasters", [])
    if forecasters:
        flat["forecasters"] = [f["spec"] for f in forecasters]
        flat["subsets"] = [(f["spec"], f["markets"]) for f in forecasters if "markets" in f]
    return flat


def _board(t: dict, base: Path) -> BoardConfig:
    _only(t, {"sweep", "out", "formats", "by", "title"}, "[[leaderboards]]")
    _require("sweep" in t and "out" in t, "every [[leaderboards]] needs sweep = \"…\" and out = \"…\"")
    from hindcast.leaderboard.export import check_formats
    from hindcast.leaderboard.publish import check_slice

    formats = check_formats(t.get("formats", BoardConfig.formats))
    return BoardConfig(t["sweep"], base / t["out"], formats, check_slice(t.get("by")), t.get("title"))


def _intervals(t: dict) -> dict[str, timedelta]:
    _only(t, set(JOBS), "[jobs]")
    return {job: _interval(t.get(job, "1h"), f"[jobs] {job}") for job in JOBS}


# -- values ---------------------------------------------------------------------------------
def _db_url(value: str, base: Path) -> str:
    return value if "://" in value else f"sqlite:///{base / value}"


def _lock_path(value: str | None, db_url: str, base: Path) -> Path:
    if value is not None:
        return base / value
    _require(db_url.startswith("sqlite:///"), "[service] lock = \"…\" is needed when db is not a SQLite file")
    return Path(db_url.removeprefix("sqlite:///")).with_suffix(".schedule.lock")


def _interval(value, where: str) -> timedelta:
    try:
        return parse_offset(str(value))
    except HindcastError as exc:
        raise ScheduleError(f"{where}: {exc}") from exc


def _instant(value, where: str) -> datetime:
    try:
        return parse_utc(value.isoformat() if isinstance(value, datetime) else str(value))
    except ValueError as exc:
        raise ScheduleError(f"{where}: {value!r} is not a date or ISO instant ({exc})") from exc


def _table(data: dict, name: str) -> dict:
    value = data.get(name, {})
    _require(isinstance(value, dict), f"[{name}] must be a table")
    return value


def _array(data: dict, name: str) -> list[dict]:
    value = data.get(name, [])
    _require(isinstance(value, list), f"[[{name}]] must be an array of tables")
    return value


def _only(t: dict, allowed: set, where: str) -> None:
    unknown = sorted(set(t) - allowed)
    _require(not unknown, f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ScheduleError(message)
