"""The bad-input corpus: every kind of broken input a user can hand to a `hindcast` command.

    python tests/bad_inputs/make_corpus.py OUT    # every case folder under OUT, to look at by hand

Generated at test time (into pytest's tmp folder), nothing binary is committed: each case
derives its input from what the repository ships (`markets/sample/forecastbench`,
`tests/fixtures/pushshift`) or writes it from scratch, deterministically.

A case runs in its own copy of a *world*: a working folder that already holds a market
store (`store/`, a copy of `markets/sample`), a run database with one stored run
(`runs/hindcast.db`, made by a real baseline sweep) and an archive with a frozen snapshot
and a draft that holds a rejects file (`archive/`). The bad input is written beside them
and the command is run from that folder as a user would; `tests/bad_inputs/test_bad_inputs.py`
checks that it fails with one line naming the input and leaves the world byte-identical.
"""

from __future__ import annotations

import codecs
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_FB = ROOT / "markets" / "sample" / "forecastbench"
PUSHSHIFT = ROOT / "tests" / "fixtures" / "pushshift"
RUN = "{run}"  # replaced by the world's stored run id
SWEEP_STORE = "--store"  # the sweep's market-store flag
T0 = "2025-10-01T00:00:00Z"
LINE2 = r"markets\.jsonl:2\b"
BYTES = r"(byte|offset) \d+"


@dataclass(frozen=True)
class Case:
    """One command on one broken input.

    `names`: what the first stderr line (`hindcast: error: …`) must contain (the file, the
    setting). `where`: a regex stderr must match (a line `file:N`, a byte offset), since an
    error may list its rows under the one line. `outcome` "either": the input is odd but
    may be accepted (a UTF-8 byte-order mark, a database with no run); a failure must
    still be one line, and an accepted input must leave the folder as it was unless the
    command writes (`changes_ok`). `read_only`: folders made read-only while the command runs."""

    id: str
    argv: tuple[str, ...]
    write: Callable[[Path], None]
    names: tuple[str, ...]
    where: str = ""
    outcome: str = "error"
    read_only: tuple[str, ...] = ()
    timeout: float = 120
    changes_ok: bool = False  # "either" case of a writing command: accepted, it may write


# ---- valid inputs, from the shipped sample ----------------------------------------------------
def market_rows(n: int = 3) -> list[dict]:
    lines = (SAMPLE_FB / "markets.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:n]]


def price_lines(n_per_market: int = 3) -> list[str]:
    """The CSV header and a few daily prices of each of `market_rows()`."""
    ids = {r["id"] for r in market_rows()}
    header, *rows = (SAMPLE_FB / "prices_daily.csv").read_text(encoding="utf-8").splitlines()
    kept, count = [], {}
    for row in rows:
        market = row.split(",", 1)[0]
        if market in ids and count.get(market, 0) < n_per_market:
            kept.append(row)
            count[market] = count.get(market, 0) + 1
    return [header, *kept]


def jsonl(rows: list) -> str:
    return "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows
    )


def headline_rows() -> list[dict]:
    base = 1_756_684_800  # 2025-09-01T00:00:00Z
    return [
        {
            "id": f"h{i}",
            "created_utc": base + i * 3_600,
            "title": f"Headline number {i} about rates",
            "source": "test",
            "kind": "news_headline",
        }
        for i in range(6)
    ]


def news_parquet(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {
            "id": f"n{i}",
            "created_at": f"2025-09-0{i + 1}T12:00:00+00:00",
            "title": f"News {i}",
            "text": "Body " * 40,
            "url": f"https://example.org/{i}",
            "source": "wire",
        }
        for i in range(6)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)


# ---- writers: each takes the case folder -------------------------------------------------------
def write(name: str, data: str | bytes | Callable[[], str | bytes]) -> Callable[[Path], None]:
    def go(folder: Path) -> None:
        value = data() if callable(data) else data
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(value if isinstance(value, bytes) else value.encode("utf-8"))

    return go


def together(*writers: Callable[[Path], None]) -> Callable[[Path], None]:
    def go(folder: Path) -> None:
        for w in writers:
            w(folder)

    return go


def nothing(folder: Path) -> None:
    """The input is the world itself, or a path that does not exist."""


def markets_with(line2: str | dict | bytes) -> Callable[[], bytes]:
    """The three valid markets, line 2 replaced."""

    def make() -> bytes:
        rows = market_rows()
        two = line2 if isinstance(line2, bytes) else jsonl([line2]).encode("utf-8")
        return jsonl(rows[:1]).encode() + two.rstrip(b"\n") + b"\n" + jsonl(rows[2:]).encode()

    return make


def market_changed(**changes) -> dict:
    return {**market_rows()[1], **changes}


def prices_with(line3: str | bytes) -> Callable[[], bytes]:
    def make() -> bytes:
        header, first, _, *rest = price_lines()
        three = line3 if isinstance(line3, bytes) else line3.encode("utf-8")
        return (
            f"{header}\n{first}\n".encode()
            + three
            + b"\n"
            + "".join(r + "\n" for r in rest).encode()
        )

    return make


def price_row(**changes) -> str:
    header, *rows = price_lines()
    cells = dict(zip(header.split(","), rows[1].split(",")))
    return ",".join({**cells, **changes}.values())


def cut(path: Path, fraction: float) -> Callable[[], bytes]:
    return lambda: path.read_bytes()[: int(path.stat().st_size * fraction)]


def truncated_parquet() -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        news_parquet(Path(tmp) / "n.parquet")
        data = (Path(tmp) / "n.parquet").read_bytes()
    return data[: len(data) // 2]


def located(folder: Path, relative: str) -> Path:
    """`relative` with {snapshot}, {partition} and {version} of the world in `folder` filled in."""
    return folder / (relative.format(**_names(folder)) if "{" in relative else relative)


def corrupt_file(
    relative: str, keep: float = 0.0, garbage: bytes = b"this is not what it should be\n" * 64
):
    """Replace a file of the world: its first `keep` fraction, then garbage
    (keep=1.0: one byte flipped)."""

    def go(folder: Path) -> None:
        path = located(folder, relative)
        data = path.read_bytes()
        if keep >= 1.0:
            new = data[:-40] + bytes([data[-40] ^ 0xFF]) + data[-39:]
        else:
            new = data[: int(len(data) * keep)] + (garbage if keep == 0.0 else b"")
        path.chmod(0o644)
        path.write_bytes(new)

    return go


def rewrite(relative: str, text: str) -> Callable[[Path], None]:
    def go(folder: Path) -> None:
        path = located(folder, relative)
        path.chmod(0o644)
        path.write_text(text, encoding="utf-8")

    return go


def store_gone(folder: Path) -> None:
    """The market store the stored run recorded (an absolute path) is this folder's
    `store/`, and it is gone."""
    import sqlite3

    db = sqlite3.connect(folder / "runs" / "hindcast.db")
    with db:
        for (table,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%manifest_json%'"
        ):
            for rowid, text in db.execute(f"SELECT rowid, manifest_json FROM {table}").fetchall():
                manifest = json.loads(text)
                manifest["market_store"]["root"] = str(folder / "store")
                db.execute(
                    f"UPDATE {table} SET manifest_json = ? WHERE rowid = ?",
                    (json.dumps(manifest), rowid),
                )
    db.close()
    shutil.rmtree(folder / "store")


def foreign_sqlite(path_name: str) -> Callable[[Path], None]:
    def go(folder: Path) -> None:
        import sqlite3

        with sqlite3.connect(folder / path_name) as db:
            db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            db.execute("INSERT INTO notes (text) VALUES ('not a hindcast database')")
        db.close()

    return go


def utf16(text: str) -> bytes:
    return text.encode("utf-16")  # with its byte-order mark


def utf8_bom(text: str) -> bytes:
    return codecs.BOM_UTF8 + text.encode("utf-8")


# ---- the sweep spec and the service config, valid, then broken one setting at a time ----------
SPEC = """[markets]
store = "store"
limit = 2

[cutoffs]
fractions = [0.5]

[[forecasters]]
spec = "market"

[[forecasters]]
spec = "constant"
"""

CONFIG = """[service]
db = "runs/hindcast.db"
log = "runs/schedule.log"
runs_out = "runs/exports"

[jobs]
pull = "6h"
sweeps = "6h"

[markets]
store = "store"
gamma_url = "http://127.0.0.1:9"
clob_url = "http://127.0.0.1:9"
since = "2026-01-01"
lookback = "7d"
page_size = 100
timeout = 1
attempts = 1

[[sweeps]]
name = "baselines"
[sweeps.cutoffs]
fractions = [0.5]
[[sweeps.forecasters]]
spec = "market"
"""


def spec(text: str = SPEC) -> Callable[[Path], None]:
    return write("spec.toml", text)


def config(text: str) -> Callable[[Path], None]:
    return write("hindcast.toml", text)


def sweep_spec(case_id: str, text: str | bytes, names: tuple[str, ...], where: str = "") -> Case:
    return Case(
        case_id,
        ("sweep", "--spec", "spec.toml", "--out", "runs"),
        write("spec.toml", text),
        ("spec.toml", *names),
        where,
    )


def once(
    case_id: str,
    text: str | bytes,
    names: tuple[str, ...],
    where: str = "",
    command: str = "once",
    also: Callable[[Path], None] = nothing,
    config_named: bool = True,
) -> Case:
    """`schedule once` (or `status`, `run`) on a config broken in one place; the error names
    the config file (unless the broken input is another file the config points to)."""
    argv = ("schedule", command, "--config", "hindcast.toml") + (
        ("--now", "2026-03-01T00:00:00Z") if command == "once" else ()
    )
    named = ("hindcast.toml", *names) if config_named else names
    return Case(
        case_id,
        argv,
        together(write("hindcast.toml", text), also),
        named,
        where,
        timeout=60 if command == "run" else 120,
    )


def import_case(
    case_id: str,
    markets: Callable | bytes | str,
    names: tuple[str, ...],
    where: str = "",
    prices: Callable | bytes | str | None = None,
    outcome: str = "error",
    changes_ok: bool = False,
) -> Case:
    argv = (
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        "in/markets.jsonl",
        "--store",
        "store",
    )
    writers = [write("in/markets.jsonl", markets)]
    if prices is not None:
        argv += ("--price-history", "in/prices_daily.csv")
        writers.append(write("in/prices_daily.csv", prices))
    return Case(case_id, argv, together(*writers), names, where, outcome, changes_ok=changes_ok)


def valid_markets() -> bytes:
    return jsonl(market_rows()).encode("utf-8")


def valid_prices() -> bytes:
    return ("\n".join(price_lines()) + "\n").encode("utf-8")


def ingest(
    case_id: str,
    name: str,
    data,
    fmt: str,
    names: tuple[str, ...],
    where: str = "",
    extra: tuple[str, ...] = (),
    read_only: tuple[str, ...] = (),
) -> Case:
    argv = (
        "archive",
        "ingest",
        f"in/{name}",
        "--source",
        "news",
        "--format",
        fmt,
        "--archive",
        "archive",
        *extra,
    )
    writer = write(f"in/{name}", data) if data is not None else nothing
    return Case(case_id, argv, writer, names, where, read_only=read_only)


# ---- the cases ------------------------------------------------------------------------------------
def _import_cases() -> list[Case]:
    m = market_rows()
    return [
        import_case(
            "import-invalid-json",
            markets_with('{"id": "0x12", "question": }'),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case(
            "import-truncated-last-line",
            lambda: valid_markets()[:-200],
            ("markets.jsonl",),
            r"markets\.jsonl:3\b",
        ),
        import_case(
            "import-latin1",
            markets_with(
                json.dumps(market_changed(question="Caf\u00e9 price?"), ensure_ascii=False).encode(
                    "latin-1"
                )
            ),
            ("markets.jsonl",),
            rf"{LINE2}|{BYTES}",
        ),
        import_case("import-utf16", lambda: utf16(jsonl(m)), ("markets.jsonl",)),
        import_case(
            "import-nul-bytes",
            markets_with(json.dumps(market_changed()).replace(", ", ",\x00 ", 2).encode()),
            ("markets.jsonl",),
            rf"{LINE2}|{BYTES}",
        ),
        import_case(
            "import-utf8-bom",
            lambda: utf8_bom(jsonl(m)),
            ("markets.jsonl",),
            outcome="either",
            changes_ok=True,
        ),
        import_case(
            "import-question-not-text",
            markets_with(market_changed(question=5)),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case(
            "import-background-list",
            markets_with(market_changed(background=["a", "b"])),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case(
            "import-resolved-to-bool",
            markets_with(market_changed(resolved_to=True)),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case(
            "import-year-1-with-offset",
            markets_with(market_changed(resolution_first_seen="0001-01-01T00:30:00+01:00")),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case(
            "import-year-9999",
            markets_with(market_changed(resolution_date="9999-12-31")),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case(
            "import-impossible-date",
            markets_with(market_changed(market_info_open_datetime="2025-02-30T00:00:00Z")),
            ("markets.jsonl",),
            LINE2,
        ),
        import_case("import-duplicate-id", markets_with(m[0]), ("markets.jsonl",), LINE2),
        import_case("import-empty-file", b"", ("markets.jsonl",)),
        import_case(
            "import-json-array",
            lambda: json.dumps(m).encode(),
            ("markets.jsonl",),
            r"markets\.jsonl:1\b",
        ),
        Case(
            "import-missing-file",
            (
                "markets",
                "import",
                "forecastbench",
                "--markets-file",
                "in/nope.jsonl",
                "--store",
                "store",
            ),
            nothing,
            ("nope.jsonl",),
        ),
        import_case(
            "prices-missing-column",
            valid_markets,
            ("prices_daily.csv",),
            r"prices_daily\.csv:1\b",
            prices=lambda: (
                "\n".join(line.rsplit(",", 1)[0] for line in price_lines()) + "\n"
            ).encode(),
        ),
        import_case(
            "prices-not-a-number",
            valid_markets,
            ("prices_daily.csv",),
            r"prices_daily\.csv:3\b",
            prices=prices_with(price_row(p_yes="abc")),
        ),
        import_case(
            "prices-year-0",
            valid_markets,
            ("prices_daily.csv",),
            r"prices_daily\.csv:3\b",
            prices=prices_with(price_row(date="0000-01-01")),
        ),
        import_case(
            "prices-nul-byte",
            valid_markets,
            ("prices_daily.csv",),
            rf"prices_daily\.csv:3\b|{BYTES}",
            prices=prices_with(price_row(method="v2_value\x00at_date")),
        ),
        import_case(
            "prices-latin1",
            valid_markets,
            ("prices_daily.csv",),
            rf"prices_daily\.csv:3\b|{BYTES}",
            prices=prices_with(price_row(method="v2_value_at_d\u00e9te").encode("latin-1")),
        ),
        import_case(
            "prices-truncated-row",
            valid_markets,
            ("prices_daily.csv",),
            r"prices_daily\.csv:\d+\b",
            prices=lambda: valid_prices()[:-40],
        ),
    ]


def _ingest_cases() -> list[Case]:
    headlines = jsonl(headline_rows())
    return [
        ingest(
            "ingest-zst-truncated",
            "RS_2024-01.zst",
            cut(PUSHSHIFT / "RS_2024-01.zst", 0.5),
            "pushshift",
            ("RS_2024-01.zst",),
            BYTES,
        ),
        ingest(
            "ingest-zst-not-zstd",
            "RC_2024-01.zst",
            b"PK\x03\x04 this is a zip, not zstandard" * 20,
            "pushshift",
            ("RC_2024-01.zst",),
        ),
        ingest("ingest-zst-empty", "RC_2024-02.zst", b"", "pushshift", ("RC_2024-02.zst",)),
        ingest(
            "ingest-jsonl-cut-mid-line",
            "news_cut.jsonl",
            headlines.encode()[:-30],
            "headlines",
            ("news_cut.jsonl",),
            r"news_cut\.jsonl:6\b|" + BYTES,
        ),
        ingest(
            "ingest-parquet-garbage",
            "news.parquet",
            b"PAR1" + b"\x00garbage" * 50,
            "news",
            ("news.parquet",),
        ),
        ingest(
            "ingest-parquet-truncated", "news.parquet", truncated_parquet, "news", ("news.parquet",)
        ),
        ingest("ingest-missing-input", "nope.jsonl", None, "headlines", ("nope.jsonl",)),
        Case(
            "ingest-directory-input",
            (
                "archive",
                "ingest",
                "in",
                "--source",
                "news",
                "--format",
                "headlines",
                "--archive",
                "archive",
            ),
            write("in/x.jsonl", headlines),
            ("in",),
        ),
        ingest("ingest-unknown-format", "news.jsonl", headlines, "csv", ("csv",)),
        ingest(
            "ingest-bad-source-name",
            "news.jsonl",
            headlines,
            "headlines",
            ("../evil",),
            extra=("--source", "../evil"),
        ),
        ingest(
            "ingest-read-only-archive",
            "news.jsonl",
            headlines,
            "headlines",
            ("archive",),
            read_only=("archive",),
        ),
    ]


def _store_and_snapshot_cases() -> list[Case]:
    search = (
        "archive",
        "search",
        "--query",
        "rates",
        "--t0",
        T0,
        "--archive",
        "archive",
        "--mode",
        "text",
    )
    return [
        Case(
            "snapshot-manifest-garbage",
            search,
            corrupt_file("archive/snapshots/{snapshot}/manifest.json"),
            ("manifest.json",),
        ),
        Case(
            "snapshot-latest-names-nothing",
            search,
            rewrite("archive/LATEST", "a-0000000000000000\n"),
            ("a-0000000000000000",),
        ),
        Case(
            "snapshot-partition-truncated",
            ("archive", "verify", "--archive", "archive"),
            corrupt_file("archive/snapshots/{snapshot}/{partition}", keep=0.5),
            ("part-",),
        ),
        Case(
            "freeze-draft-part-garbage",
            ("archive", "freeze", "--archive", "archive"),
            write(
                "archive/draft/source=news/month=2025-09/headlines-x.jsonl-0000000000000000-00000.parquet",
                b"PAR1" + b"\x00garbage" * 50,
            ),
            ("headlines-x.jsonl-0000000000000000-00000.parquet",),
        ),
        Case(
            "search-t0-year-1",
            search[:4] + ("0001-01-01T00:30:00+01:00",) + search[5:],
            nothing,
            ("--t0",),
        ),
        Case(
            "show-t0-year-1",
            ("markets", "show", "0x2e43", "--store", "store", "--t0", "0001-01-01T00:30:00+01:00"),
            nothing,
            ("--t0",),
        ),
        Case(
            "sweep-at-year-1",
            (
                "sweep",
                SWEEP_STORE,
                "store",
                "-f",
                "market",
                "--limit",
                "1",
                "--at",
                "0001-01-01T00:30:00+01:00",
                "--out",
                "runs",
            ),
            nothing,
            ("--at",),
        ),
        Case(
            "store-latest-names-nothing",
            ("markets", "list", "--store", "store"),
            rewrite("store/LATEST", "m-0000000000000000\n"),
            ("m-0000000000000000",),
        ),
        Case(
            "store-table-byte-flipped",
            ("markets", "show", "0x2e43", "--store", "store"),
            corrupt_file("store/versions/{version}/markets.parquet", keep=1.0),
            ("markets.parquet",),
        ),
        Case(
            "store-manifest-garbage",
            (
                "sweep",
                SWEEP_STORE,
                "store",
                "-f",
                "market",
                "--limit",
                "1",
                "--fractions",
                "0.5",
                "--out",
                "runs",
            ),
            corrupt_file("store/versions/{version}/manifest.json"),
            ("manifest.json",),
        ),
    ]


def _spec_cases() -> list[Case]:
    return [
        sweep_spec("spec-toml-syntax", SPEC.replace("limit = 2", "limit = = 2"), (), r"line \d+"),
        sweep_spec("spec-misspelled-table", SPEC.replace("[markets]", "[market]"), ("market",)),
        sweep_spec(
            "spec-forecaster-without-spec", SPEC + "\n[[forecasters]]\nmarkets = 2\n", ("spec",)
        ),
        sweep_spec("spec-wrong-type", SPEC + '\n[run]\nrepeats = "two"\n', ("repeats",)),
        sweep_spec(
            "spec-duplicate-key", SPEC.replace("limit = 2", "limit = 2\nlimit = 3"), (), r"line \d+"
        ),
        sweep_spec(
            "spec-duplicate-forecaster", SPEC + '\n[[forecasters]]\nspec = "market"\n', ("market",)
        ),
        sweep_spec("spec-utf16", utf16(SPEC), ()),
        sweep_spec("spec-nul-byte", SPEC.replace("[cutoffs]", "[cutoffs]\x00"), ()),
        sweep_spec(
            "spec-year-1-cutoff",
            SPEC.replace("fractions = [0.5]", 'at = ["0001-01-01T00:30:00+01:00"]'),
            ("at",),
        ),
        sweep_spec(
            "spec-store-missing",
            SPEC.replace('store = "store"', 'store = "no-such-store"'),
            ("no-such-store",),
        ),
        sweep_spec(
            "spec-unknown-forecaster",
            SPEC.replace('spec = "constant"', 'spec = "oracle"'),
            ("oracle",),
        ),
        Case(
            "spec-missing-file",
            ("sweep", "--spec", "nope.toml", "--out", "runs"),
            nothing,
            ("nope.toml",),
        ),
    ]


def _run_store_cases() -> list[Case]:
    baseline = ("sweep", SWEEP_STORE, "store", "-f", "market", "--limit", "1", "--fractions", "0.5")
    return [
        Case(
            "sweep-db-garbage",
            baseline + ("--out", "runs", "--db", "sqlite:///bad.db"),
            write("bad.db", b"SQLite format 3\x00" + b"\x07" * 5000),
            ("bad.db",),
        ),
        Case(
            "sweep-db-truncated",
            baseline + ("--out", "runs"),
            corrupt_file("runs/hindcast.db", keep=0.3),
            ("hindcast.db",),
        ),
        Case(
            "sweep-out-read-only",
            baseline + ("--out", "ro"),
            write("ro/.keep", b""),
            ("ro",),
            read_only=("ro",),
        ),
        Case(
            "sweep-db-url-unknown",
            baseline + ("--out", "runs", "--db", "nosuchdb://x/y"),
            nothing,
            ("nosuchdb",),
        ),
        Case(
            "runs-list-db-garbage",
            ("runs", "list", "--db", "bad/hindcast.db"),
            write("bad/hindcast.db", b"\x00garbage" * 700),
            ("hindcast.db",),
        ),
        Case(
            "runs-show-db-truncated",
            ("runs", "show", RUN),
            corrupt_file("runs/hindcast.db", keep=0.3),
            ("hindcast.db",),
        ),
        Case(
            "runs-show-unknown-run",
            ("runs", "show", "r-000000000000"),
            nothing,
            ("r-000000000000",),
        ),
        Case(
            "runs-list-db-is-a-directory",
            ("runs", "list", "--db", "sqlite:///adir"),
            write("adir/x", b""),
            ("adir",),
        ),
        Case(
            "runs-list-foreign-sqlite",
            ("runs", "list", "--db", "sqlite:///other.db"),
            foreign_sqlite("other.db"),
            ("other.db",),
            outcome="either",
        ),
        Case(
            "runs-list-empty-folder",
            ("runs", "list", "--db", "empty/hindcast.db"),
            write("empty/.keep", b""),
            ("empty",),
            outcome="either",
        ),
        Case(
            "leaderboard-db-garbage",
            ("leaderboard", RUN, "--out", "exports", "--db", "sqlite:///bad.db"),
            write("bad.db", b"\x00garbage" * 700),
            ("bad.db",),
        ),
        Case(
            "leaderboard-unknown-run",
            ("leaderboard", "r-000000000000", "--out", "exports"),
            nothing,
            ("r-000000000000",),
        ),
        Case(
            "leaderboard-recorded-store-gone",
            ("leaderboard", RUN, "--out", "exports"),
            store_gone,
            ("store",),
        ),
        Case(
            "leaderboard-out-is-a-file",
            ("leaderboard", RUN, "--out", "afile"),
            write("afile", b"x"),
            ("afile",),
        ),
        Case(
            "leaderboard-out-read-only",
            ("leaderboard", RUN, "--out", "ro"),
            write("ro/.keep", b""),
            ("ro",),
            read_only=("ro",),
        ),
        Case(
            "rescore-models-syntax",
            ("rescore", RUN, "--models", "models.toml"),
            write("models.toml", '"gpt-4.1" = "2024-06-01\n'),
            ("models.toml",),
            r"line \d+",
        ),
        Case(
            "rescore-models-wrong-type",
            ("rescore", RUN, "--models", "models.toml"),
            write("models.toml", '"gpt-4.1" = 5\n'),
            ("models.toml", "gpt-4.1"),
        ),
        Case(
            "rescore-models-impossible-date",
            ("rescore", RUN, "--models", "models.toml"),
            write("models.toml", '"gpt-4.1" = "2024-02-30"\n'),
            ("models.toml", "gpt-4.1"),
        ),
        Case(
            "rescore-db-garbage",
            ("rescore", RUN, "--db", "bad/hindcast.db"),
            write("bad/hindcast.db", b"\x00garbage" * 700),
            ("hindcast.db",),
        ),
    ]


def _config_cases() -> list[Case]:
    return [
        once("config-toml-syntax", CONFIG.replace('pull = "6h"', 'pull = "6h'), (), r"line \d+"),
        once(
            "config-page-size-not-a-number",
            CONFIG.replace("page_size = 100", 'page_size = "lots"'),
            ("page_size",),
        ),
        once(
            "config-sweep-store-missing",
            CONFIG + '[sweeps.markets]\nstore = "no-such-store"\n',
            ("no-such-store",),
        ),
        once(
            "config-unknown-forecaster",
            CONFIG.replace('spec = "market"', 'spec = "oracle"'),
            ("oracle",),
        ),
        once(
            "config-unknown-inbox-format",
            CONFIG + '\n[archive]\nroot = "archive"\n[[archive.inbox]]\n'
            'path = "inbox"\nsource = "news"\nformat = "csv"\n',
            ("csv",),
        ),
        once(
            "config-duplicate-sweep-name",
            CONFIG + '\n[[sweeps]]\nname = "baselines"\n[[sweeps.forecasters]]\n'
            'spec = "constant"\n',
            ("baselines",),
        ),
        once(
            "config-sweep-spec-file-missing",
            CONFIG + '\n[[sweeps]]\nname = "more"\nspec = "nope.toml"\n',
            ("nope.toml",),
        ),
        once("config-utf16", utf16(CONFIG), (), command="status"),
        once(
            "config-db-garbage",
            CONFIG.replace('db = "runs/hindcast.db"', 'db = "bad.db"'),
            ("bad.db",),
            command="status",
            also=write("bad.db", b"\x00garbage" * 700),
            config_named=False,
        ),
        once(
            "config-lookback-unit",
            CONFIG.replace('lookback = "7d"', 'lookback = "7x"'),
            ("lookback",),
            command="run",
        ),
        once(
            "config-since-year-1",
            CONFIG.replace('since = "2026-01-01"', 'since = "0001-01-01T00:30:00+01:00"'),
            ("since",),
            command="run",
        ),
        Case(
            "config-missing-file",
            ("schedule", "once", "--config", "nope.toml"),
            nothing,
            ("nope.toml",),
        ),
    ]


def cases() -> list[Case]:
    found = (
        _import_cases()
        + _ingest_cases()
        + _store_and_snapshot_cases()
        + _spec_cases()
        + _run_store_cases()
        + _config_cases()
    )
    ids = [c.id for c in found]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    return found


# ---- the world ------------------------------------------------------------------------------------
def build_world(folder: Path, run_cli) -> dict:
    """store/ + runs/hindcast.db (one real baseline sweep) + archive/ (snapshot, draft, rejects).
    Returns the names cases refer to: run, snapshot, partition, version."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "markets" / "sample", folder / "store")
    swept = run_cli(
        "sweep",
        SWEEP_STORE,
        "store",
        "-f",
        "market",
        "-f",
        "constant",
        "--limit",
        "2",
        "--fractions",
        "0.5",
        "--out",
        "runs",
        cwd=folder,
    )
    if swept.returncode != 0:
        raise RuntimeError(f"the world's sweep failed:\n{swept.stderr}")
    run = next(w for line in swept.stdout.splitlines() for w in line.split() if w.startswith("r-"))
    _archive(folder)
    return {"run": run, **_names(folder)}


def _archive(folder: Path) -> None:
    from hindcast.archive.ingest import ingest as ingest_inputs
    from hindcast.archive.snapshot import freeze

    seed = folder / "seed"
    seed.mkdir()
    rows = headline_rows()
    (seed / "news_a.jsonl").write_text(jsonl(rows[:4] + ["{not json"]), encoding="utf-8")
    (seed / "news_b.jsonl").write_text(jsonl(rows[4:]), encoding="utf-8")
    ingest_inputs([seed / "news_a.jsonl"], "news", "headlines", folder / "archive")
    freeze(folder / "archive")
    ingest_inputs([seed / "news_b.jsonl"], "news", "headlines", folder / "archive")


def _names(folder: Path) -> dict:
    snapshot = (folder / "archive" / "LATEST").read_text().strip()
    partition = next(
        (folder / "archive" / "snapshots" / snapshot).glob("source=*/month=*/*.parquet")
    )
    return {
        "snapshot": snapshot,
        "version": (folder / "store" / "LATEST").read_text().strip(),
        "partition": str(partition.relative_to(folder / "archive" / "snapshots" / snapshot)),
    }


def instantiate(case: Case, world: dict) -> Case:
    """The case with the world's stored run id in its command."""
    return replace(case, argv=tuple(a.replace(RUN, world["run"]) for a in case.argv))


def main(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.helpers import run_cli

    world_dir = out / "_world"
    world = build_world(world_dir, run_cli)
    for case in cases():
        case = instantiate(case, world)
        shutil.copytree(world_dir, out / case.id)
        case.write(out / case.id)
        (out / case.id / "COMMAND").write_text("hindcast " + " ".join(case.argv) + "\n")
    print(f"{len(cases())} cases under {out} (world: {json.dumps(world)})")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
