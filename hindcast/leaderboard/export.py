"""Leaderboard and per-forecast files: CSV, JSON and Parquet (full precision, for recomputation)
and Markdown (for reading). The HTML report lives in `report`.

Floats are written exactly: CSV and JSON carry `repr(float)`, which reads back to the same
double; Parquet stores float64. Files are byte-reproducible: nothing depends on the clock.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path

from hindcast import frozen
from hindcast.errors import LeaderboardError
from hindcast.frozen import write_text_atomic
from hindcast.leaderboard import display
from hindcast.scoring import LeaderboardRow

# Measured wall-clock time: kept in the run database (`hindcast runs show`), never exported, so
# every export of a run is the same bytes whichever processes swept it (docs/team-postgresql.md).
WALL_CLOCK = frozenset({"latency_s", "mean_latency_s"})
COLUMNS = tuple(f.name for f in fields(LeaderboardRow) if f.name not in WALL_CLOCK)
FORECAST_COLUMNS = {
    "run_id": "string",
    "forecaster": "string",
    "market_id": "string",
    "t0": "string",
    "repeat": "int64",
    "label": "string",
    "fraction": "float64",
    "topic": "string",
    "probability": "float64",
    "error": "string",
    "market_price": "float64",
    "outcome": "float64",
    "brier": "float64",
    "market_brier": "float64",
    "regime": "string",
    "coverage": "string",
    "model_name": "string",
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "requests": "int64",
    "cache_hits": "int64",
    "retries": "int64",
    "fresh_prompt_tokens": "int64",
    "fresh_completion_tokens": "int64",
}
TABLE_FORMATS = ("csv", "json", "parquet", "md")
FORMATS = (*TABLE_FORMATS, "html")
EXTRA_FORMATS = ("forecastbench",)  # ForecastBench forecast-set JSON (leaderboard.forecastbench)
HEADERS = {key: column.header for key, column in display.COLUMNS.items()}
SHOWN = (
    "forecaster",
    "n_forecasts",
    "n_failed",
    "n_markets",
    "brier",
    "market_brier",
    "brier_diff",
    "skill_vs_market",
    "cost",
    "notes",
)
MARKDOWN = (
    "forecaster",
    "n_forecasts",
    "n_failed",
    "n_markets",
    "brier",
    "brier_ci",
    "market_brier",
    "brier_diff",
    "diff_ci",
    "skill_vs_market",
    "skill_ci",
    "log_score",
    "ece",
    "tokens",
    "requests",
    "retries",
    "cost",
    "notes",
)


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    unknown = [f for f in formats if f not in FORMATS + EXTRA_FORMATS]
    if unknown:
        raise LeaderboardError(
            f"unknown format(s) {', '.join(map(repr, unknown))}; choose from "
            + ", ".join(FORMATS + EXTRA_FORMATS)
        )
    return tuple(dict.fromkeys(formats))


def csv_text(columns: Sequence[str], records: Sequence[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow([_csv_value(record[c]) for c in columns])
    return out.getvalue()


def _csv_value(value) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def to_csv(rows: Sequence[LeaderboardRow]) -> str:
    return csv_text(COLUMNS, [asdict(r) for r in rows])


def json_text(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def leaderboard_json(
    rows: Sequence[LeaderboardRow], title: str, notes: Sequence[str] = (), by: str | None = None
) -> str:
    return json_text(
        {
            "title": title,
            "by": by,
            "notes": list(notes),
            "legend": list(display.LEGEND),
            "rows": [{c: asdict(r)[c] for c in COLUMNS} for r in rows],
        }
    )


def write_parquet(path: Path, columns: dict[str, str], records: Sequence[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in columns.items()])
    table = pa.Table.from_pylist([{c: r[c] for c in columns} for r in records], schema=schema)
    tmp = frozen.tmp_beside(path)
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def leaderboard_types() -> dict[str, str]:
    """Arrow type of each LeaderboardRow field, from its annotation."""
    return {f.name: _arrow_kind(f.type) for f in fields(LeaderboardRow) if f.name in COLUMNS}


def _arrow_kind(annotation) -> str:
    text = getattr(annotation, "__name__", str(annotation))
    return "float64" if "float" in text else "int64" if "int" in text else "string"


def cell(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"


def markdown_cell(row: LeaderboardRow, column: str) -> str:
    return display.COLUMNS[column].text(row).replace("|", "\\|")


def to_markdown(
    rows: Sequence[LeaderboardRow],
    title: str,
    notes: Sequence[str] = (),
    shown: Sequence[str] = SHOWN,
) -> str:
    if any(r.slice != "all" for r in rows):
        shown = ("slice", *shown)
    lines = [
        f"# {title}",
        "",
        "| " + " | ".join(HEADERS[c] for c in shown) + " |",
        "|" + "|".join("---" if display.COLUMNS[c].is_text else "---:" for c in shown) + "|",
    ]
    lines += ["| " + " | ".join(markdown_cell(r, c) for c in shown) + " |" for r in rows]
    return "\n".join(lines + [""] + [f"- {n}" for n in (*notes, *display.LEGEND)]) + "\n"


def write_all(
    rows: Sequence[LeaderboardRow], folder: Path, title: str, notes: Sequence[str] = ()
) -> dict[str, Path]:
    """leaderboard.csv and leaderboard.md (what `sweep` has always written)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"csv": folder / "leaderboard.csv", "md": folder / "leaderboard.md"}
    write_text_atomic(paths["csv"], to_csv(rows))
    write_text_atomic(paths["md"], to_markdown(rows, title, notes, MARKDOWN))
    return paths


def write_leaderboard(
    fmt: str,
    rows: Sequence[LeaderboardRow],
    folder: Path,
    title: str,
    notes: Sequence[str] = (),
    by: str | None = None,
) -> Path:
    path = folder / f"leaderboard.{fmt}"
    if fmt == "csv":
        write_text_atomic(path, to_csv(rows))
    elif fmt == "json":
        write_text_atomic(path, leaderboard_json(rows, title, notes, by))
    elif fmt == "parquet":
        write_parquet(path, leaderboard_types(), [asdict(r) for r in rows])
    elif fmt == "md":
        write_text_atomic(path, to_markdown(rows, title, notes, MARKDOWN))
    else:
        raise LeaderboardError(f"no leaderboard table in format {fmt!r}")
    return path


def write_forecasts(fmt: str, records: Sequence[dict], folder: Path) -> Path:
    """The per-forecast table: CSV, JSON (a list of objects) or Parquet."""
    path = folder / f"forecasts.{fmt}"
    if fmt == "csv":
        write_text_atomic(path, csv_text(tuple(FORECAST_COLUMNS), records))
    elif fmt == "json":
        write_text_atomic(path, json_text([{c: r[c] for c in FORECAST_COLUMNS} for r in records]))
    elif fmt == "parquet":
        write_parquet(path, FORECAST_COLUMNS, records)
    else:
        raise LeaderboardError(f"no per-forecast table in format {fmt!r}")
    return path
