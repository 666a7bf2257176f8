"""Leaderboard files: CSV (full precision, for recomputation) and Markdown (for reading)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path

from hindcast.frozen import write_text_atomic
from hindcast.scoring.aggregate import LeaderboardRow

COLUMNS = tuple(f.name for f in fields(LeaderboardRow))
HEADERS = {
    "forecaster": "forecaster", "n_forecasts": "n forecasts", "n_failed": "failed", "n_markets": "n markets",
    "brier": "Brier", "n_paired": "rows with market price", "forecaster_brier_paired": "Brier (those rows)",
    "market_brier": "market Brier (same rows)", "skill_vs_market": "skill vs market",
}
SHOWN = ("forecaster", "n_forecasts", "n_failed", "n_markets", "brier", "market_brier", "skill_vs_market")


def to_csv(rows: Sequence[LeaderboardRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in asdict(row).values()])
    return out.getvalue()


def cell(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def to_markdown(rows: Sequence[LeaderboardRow], title: str, notes: Sequence[str] = ()) -> str:
    lines = [f"# {title}", "", "| " + " | ".join(HEADERS[c] for c in SHOWN) + " |",
             "|" + "|".join("---" if c == "forecaster" else "---:" for c in SHOWN) + "|"]
    lines += ["| " + " | ".join(cell(getattr(r, c)) for c in SHOWN) + " |" for r in rows]
    return "\n".join(lines + [""] + [f"- {n}" for n in notes]) + "\n"


def write_all(rows: Sequence[LeaderboardRow], folder: Path, title: str, notes: Sequence[str] = ()) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"csv": folder / "leaderboard.csv", "md": folder / "leaderboard.md"}
    write_text_atomic(paths["csv"], to_csv(rows))
    write_text_atomic(paths["md"], to_markdown(rows, title, notes))
    return paths
