"""The service's configuration (`hindcast.toml`), parsed once into frozen records.

Every path is relative to the config file. Sections (each job's section is optional: a
job without one is not scheduled):

    [service]      db, lock, log, runs_out
    [jobs]         pull, inbox, sweeps, export — intervals for `schedule run` ("1h", "1d")
    [markets]      store, gamma_url, clob_url, data_url, since, lookback, page_size, timeout,
    attempts
    [archive]      root, embedder; [[archive.inbox]] path, source, format, pattern
    [[sweeps]]     name and either spec = "file.toml" or inline [sweeps.markets] /
                   [sweeps.cutoffs] / [[sweeps.forecasters]] / [sweeps.run] (the sweep spec layout)
    [[leaderboards]]  sweep, out, formats, by
    [live]         sweep, every, log, max_markets — the live arm (docs/live.md): the named
                   sweep's forecasters on the markets open at each tick (needs [markets]);
                   job `live`, run last
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from hindcast import archive, forecasters, leaderboard, replay, timeutil
from hindcast.errors import ConfigError, HindcastError, ScheduleError

JOBS = ("pull", "inbox", "sweeps", "export", "live")  # also the order of `schedule once`
REFUSED_SPEC_KEYS = {
    "version": "a scheduled sweep always reads the newest market store version",
    "snapshot": "a scheduled sweep always reads the newest indexed archive snapshot",
    "limit": "a limit would apply to each batch of newly resolved markets, not to the sweep",
    "subsets": (
        "forecaster subsets would be drawn per batch of newly resolved markets, not per sweep"
    ),
}

# constrained values (type, what it must be); a wrong one is `_WRONG`
_TEXT = (TypeAdapter(replay.Text), "non-empty text")
_PAGE_SIZE = (TypeAdapter(Annotated[int, Field(strict=True, ge=1, le=100)]), "an integer 1…100")
_ATTEMPTS = (TypeAdapter(Annotated[int, Field(strict=True, ge=1)]), "an integer 1…")
_SECONDS = (
    TypeAdapter(Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]),
    "a number of seconds > 0",
)
_WRONG = "{where} {name}: expected {wanted}, got {value!r}"


@dataclass(frozen=True)
class MarketsJob:
    store: Path
    gamma_url: str | None = None
    clob_url: str | None = None
    since: datetime | None = None  # the first watermark
    lookback: timedelta = timedelta(days=7)  # re-listed before the watermark: late resolutions
    page_size: int = 100  # Gamma's keyset pages hold at most 100
    data_url: str | None = None
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
    spec: replay.ReplaySpec


@dataclass(frozen=True)
class BoardConfig:
    sweep: str
    out: Path
    formats: tuple[str, ...] = ("csv", "json", "md")
    by: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class LiveConfig:
    sweep: str  # whose forecasters (and archive, market filters) forecast open markets
    log: Path  # the hash-chained forecast log (schedule.livelog)
    every: timedelta = timedelta(days=1)  # a market is forecast again once this old
    max_markets: int = 100  # open markets a tick forecasts at most (largest volume first)


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
    live: LiveConfig | None = None

    def sweep(self, name: str) -> SweepConfig:
        return next(s for s in self.sweeps if s.name == name)


def load(path: Path) -> ScheduleConfig:
    """Read and validate the whole config — every section, key, value, forecaster spec, inbox
    format and store path — before any job runs; the first problem is one ScheduleError
    naming the file and the setting."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScheduleError(f"config {path}: {exc}") from exc
    try:
        return parse(data, path)
    except HindcastError as exc:  # ours, the sweep spec layout's, a leaderboard format's …
        raise ScheduleError(_located(str(exc), path)) from exc


def _located(message: str, path: Path) -> str:
    return message if message.startswith(f"config {path}") else f"config {path}: {message}"


def parse(data: dict, path: Path) -> ScheduleConfig:
    base = path.parent
    _only(
        data,
        {"service", "jobs", "markets", "archive", "sweeps", "leaderboards", "live"},
        "the config",
        "[{}]",
    )
    service = _table(data, "service")
    _only(service, {"db", "lock", "log", "runs_out"}, "[service]")
    for key in service:
        _text(service, key, "[service]")
    db_url = _db_url(service.get("db", "runs/hindcast.db"), base)
    markets = _markets(_table(data, "markets"), base) if "markets" in data else None
    archive = _archive(_table(data, "archive"), base) if "archive" in data else None
    sweeps = tuple(
        _sweep(t, number, path, markets) for number, t in enumerate(_array(data, "sweeps"), start=1)
    )
    config = ScheduleConfig(
        path=path,
        db_url=db_url,
        lock=_lock_path(service.get("lock"), db_url, base),
        log=base / service["log"] if "log" in service else None,
        runs_out=base / service.get("runs_out", "runs/exports"),
        every=_intervals(_table(data, "jobs")),
        markets=markets,
        archive=archive,
        sweeps=sweeps,
        leaderboards=tuple(_board(t, base) for t in _array(data, "leaderboards")),
        live=_live(_table(data, "live"), base, markets) if "live" in data else None,
    )
    _check_names(config)
    for sweep in sweeps:
        _check_inputs(sweep, config)
    return replace(config, jobs=_configured(config))


def _configured(c: ScheduleConfig) -> tuple[str, ...]:
    present = {
        "pull": c.markets is not None,
        "inbox": c.archive is not None,
        "sweeps": bool(c.sweeps),
        "export": bool(c.leaderboards),
        "live": c.live is not None,
    }
    return tuple(job for job in JOBS if present[job])


def _check_names(c: ScheduleConfig) -> None:
    names = [s.name for s in c.sweeps]
    _require(
        len(set(names)) == len(names),
        f"config {c.path}: a sweep name is used twice ({', '.join(names)})",
    )
    for board in c.leaderboards:
        _require(
            board.sweep in names,
            f"config {c.path}: leaderboard {board.out} names sweep {board.sweep!r}, "
            f"which is not configured (sweeps: {', '.join(names) or 'none'})",
        )
    _require(
        c.live is None or c.live.sweep in names,
        f"config {c.path}: [live] sweep {c.live and c.live.sweep!r} is not configured "
        f"(sweeps: {', '.join(names) or 'none'})",
    )


def _check_inputs(sweep: SweepConfig, c: ScheduleConfig) -> None:
    """A sweep's market store must exist or be the one the configured pull fills; the same
    for its archive and the configured inbox; its forecaster specs must build."""
    where, spec = f"sweep {sweep.name!r}", sweep.spec
    pulled = c.markets is not None and _same(spec.store, c.markets.store)
    _require(
        pulled or (Path(spec.store) / "LATEST").is_file(),
        f"{where}: market store {spec.store} does not exist (no LATEST) and no configured pull "
        "fills it ("
        + (f"[markets] store is {c.markets.store}" if c.markets else "no [markets] section")
        + "); "
        "pull or import into it first, or point the sweep's store at the pulled one",
    )
    ingested = (
        c.archive is not None and spec.archive is not None and _same(spec.archive, c.archive.root)
    )
    _require(
        spec.archive is None or ingested or Path(spec.archive).is_dir(),
        f"{where}: archive {spec.archive} does not exist and no configured [archive] inbox "
        "fills it",
    )
    for forecaster in spec.forecasters:
        _check_forecaster(forecaster, where)


def _check_forecaster(spec: str, where: str) -> None:
    registry = forecasters.registry
    try:
        name, _ = registry.parse_spec(spec)
        known = registry.names()
        _require(
            name in known,
            f"{where}: unknown forecaster {name!r} in {spec!r}{replay.did_you_mean(name, known)}",
        )
        registry.check([spec])  # its parameters (built lazily: no model is called or loaded)
    except ScheduleError:
        raise
    except HindcastError as exc:
        raise ScheduleError(f"{where}: {exc}") from exc


def _same(a: Path, b: Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


# -- sections -------------------------------------------------------------------------------
def _markets(t: dict, base: Path) -> MarketsJob:
    _only(
        t,
        {
            "store",
            "gamma_url",
            "clob_url",
            "data_url",
            "since",
            "lookback",
            "page_size",
            "timeout",
            "attempts",
        },
        "[markets]",
    )
    _require("store" in t, '[markets] needs store = "…" (the market store the pulls write into)')
    return MarketsJob(
        store=base / _text(t, "store", "[markets]"),
        gamma_url=_url(t, "gamma_url"),
        clob_url=_url(t, "clob_url"),
        data_url=_url(t, "data_url"),
        since=_instant(t["since"], "[markets] since") if "since" in t else None,
        lookback=_interval(t.get("lookback", "7d"), "[markets] lookback"),
        page_size=_checked(t, "page_size", _PAGE_SIZE, "[markets]", 100),
        timeout=float(_checked(t, "timeout", _SECONDS, "[markets]", 30.0)),
        attempts=_checked(t, "attempts", _ATTEMPTS, "[markets]", 5),
    )


def _archive(t: dict, base: Path) -> ArchiveJob:
    _only(t, {"root", "embedder", "inbox"}, "[archive]")
    _require(
        bool("root" in t and t.get("inbox")),
        '[archive] needs root = "…" and at least one [[archive.inbox]]',
    )
    embedder = _text(t, "embedder", "[archive]") if "embedder" in t else "minilm"
    _check_embedder(embedder)
    inboxes = []
    for box in _array(t, "inbox", "archive.inbox"):
        _only(box, {"path", "source", "format", "pattern"}, "[[archive.inbox]]")
        _require(
            {"path", "source", "format"} <= set(box),
            "[[archive.inbox]] needs path, source and format",
        )
        where = f"[[archive.inbox]] {box['path']}"
        fmt = _text(box, "format", where)
        _require(
            fmt in archive.FORMATS,
            f"{where}: format {fmt!r} is unknown{replay.did_you_mean(fmt, archive.FORMATS)}",
        )
        inboxes.append(
            Inbox(
                base / _text(box, "path", where),
                _text(box, "source", where),
                fmt,
                _text(box, "pattern", where) if "pattern" in box else "*",
            )
        )
    return ArchiveJob(base / _text(t, "root", "[archive]"), tuple(inboxes), embedder)


def _check_embedder(name: str) -> None:
    embed = archive.embed
    _require(
        embed.known(name),
        f"[archive] embedder {name!r} is unknown{replay.did_you_mean(name, embed.names())}",
    )


def _sweep(t: dict, number: int, path: Path, markets: MarketsJob | None) -> SweepConfig:
    _require(isinstance(t, dict), f"[[sweeps]] entry {number} must be a table")
    name: Any = t.get("name")  # raw TOML: checked next
    _require(
        isinstance(name, str) and name.strip() != "", f"[[sweeps]] entry {number} needs a name"
    )
    where = f"sweep {name!r}"
    _only(
        t,
        {"name", "spec", "markets", "archive", "cutoffs", "forecasters", "run"},
        where,
        "[sweeps.{}]",
    )
    inline = sorted(set(t) - {"name", "spec"})
    _require(
        "spec" not in t or not inline,
        f'{where}: give spec = "file" or inline sections, not both (inline: {", ".join(inline)})',
    )
    if "spec" in t:
        try:
            mapping = replay.load_toml(path.parent / _text(t, "spec", where))
        except ConfigError as exc:
            raise ScheduleError(f"{where}: {exc}") from exc
    else:
        body = {k: v for k, v in t.items() if k != "name"}
        mapping = replay.flatten_layout(
            body, path.parent, f"config {path}: {where}", prefix="sweeps."
        )
    refused = sorted(k for k in REFUSED_SPEC_KEYS if mapping.get(k) not in (None, [], ()))
    _require(
        not refused,
        f"{where}: " + "; ".join(f"{k} is refused: {REFUSED_SPEC_KEYS[k]}" for k in refused),
    )
    if "store" not in mapping:
        _require(
            markets is not None,
            f"{where}: no market store (give [sweeps.markets] store, or a [markets] section)",
        )
        assert markets is not None  # _require refused it
        mapping["store"] = markets.store
    try:
        return SweepConfig(name, replay.spec_from_mapping(mapping))
    except ConfigError as exc:
        raise ScheduleError(f"{where}: {exc}") from exc


def _board(t: dict, base: Path) -> BoardConfig:
    _only(t, {"sweep", "out", "formats", "by", "title"}, "[[leaderboards]]")
    _require("sweep" in t and "out" in t, 'every [[leaderboards]] needs sweep = "…" and out = "…"')
    where = f"[[leaderboards]] {t['out']}"
    formats = leaderboard.check_formats(t.get("formats", BoardConfig.formats))
    title = _text(t, "title", where) if "title" in t else None
    by = leaderboard.check_slice(_text(t, "by", where)) if "by" in t else None
    return BoardConfig(_text(t, "sweep", where), base / _text(t, "out", where), formats, by, title)


def _live(t: dict, base: Path, markets: MarketsJob | None) -> LiveConfig:
    _only(t, {"sweep", "every", "log", "max_markets"}, "[live]")
    _require(
        "sweep" in t, '[live] needs sweep = "…" (the configured sweep whose forecasters it runs)'
    )
    _require(
        markets is not None, "[live] needs a [markets] section (where open markets are listed)"
    )
    return LiveConfig(
        sweep=_text(t, "sweep", "[live]"),
        log=base / (_text(t, "log", "[live]") if "log" in t else "runs/live.jsonl"),
        every=_interval(t.get("every", "1d"), "[live] every"),
        max_markets=_checked(t, "max_markets", _ATTEMPTS, "[live]", 100),
    )


def _intervals(t: dict) -> dict[str, timedelta]:
    _only(t, set(JOBS), "[jobs]")
    return {job: _interval(t.get(job, "1h"), f"[jobs] {job}") for job in JOBS}


# -- values ---------------------------------------------------------------------------------
def _db_url(value: str, base: Path) -> str:
    return value if "://" in value else f"sqlite:///{base / value}"


def _lock_path(value: str | None, db_url: str, base: Path) -> Path:
    if value is not None:
        return base / value
    _require(
        db_url.startswith("sqlite:///"),
        '[service] lock = "…" is needed when db is not a SQLite file',
    )
    return Path(db_url.removeprefix("sqlite:///")).with_suffix(".schedule.lock")


def _interval(value: Any, where: str) -> timedelta:  # raw TOML: checked here
    _require(isinstance(value, str), f'{where}: expected text like "6h" or "1d", got {value!r}')
    try:
        return replay.parse_offset(value)
    except HindcastError as exc:
        raise ScheduleError(f"{where}: {exc}") from exc


def _instant(value: Any, where: str) -> datetime:  # raw TOML: checked here
    from datetime import date

    _require(isinstance(value, (str, date)), f"{where}: {value!r} is not a date or ISO instant")
    try:
        return timeutil.parse_utc(value.isoformat() if isinstance(value, datetime) else str(value))
    except (ValueError, OverflowError) as exc:
        raise ScheduleError(f"{where}: {value!r} is not a date or ISO instant ({exc})") from exc


def _text(t: dict, key: str, where: str) -> str:
    return _checked(t, key, _TEXT, where)


def _url(t: dict, key: str) -> str | None:
    if key not in t:
        return None
    value = _text(t, key, "[markets]")
    _require(
        value.startswith(("http://", "https://")),
        f"[markets] {key}: {value!r} is not an http(s) URL",
    )
    return value


def _checked(t: dict, key: str, kind: tuple, where: str, default: object = None) -> Any:
    """`t[key]` (else `default`) validated by `kind` (a constrained type's adapter and what
    it must be), its error put in one line by the sweep spec's translator."""
    value = t.get(key, default)
    try:
        return kind[0].validate_python(value)
    except ValidationError as exc:
        errors = [{**e, "loc": (key,)} for e in exc.errors()]
        wording = replay.Wording(_WRONG, wanted=lambda _: kind[1], error=ScheduleError)
        raise replay.config_error(errors, {key: value}, where, wording=wording) from None


def _table(data: dict, name: str) -> dict:
    value = data.get(name, {})
    _require(isinstance(value, dict), f"[{name}] must be a table")
    return value


def _array(data: dict, name: str, label: str | None = None) -> list[dict]:
    value = data.get(name, [])
    ok = isinstance(value, list) and all(isinstance(v, dict) for v in value)
    _require(ok, f"[[{label or name}]] must be an array of tables")
    return value


def _only(t: dict, allowed: set, where: str, shape: str = "{}") -> None:
    replay.refuse_unknown(t, allowed, where, ("key", shape, ""), error=ScheduleError)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ScheduleError(message)
