"""A run's forecasts as ForecastBench forecast sets, so ForecastBench's own scoring code can read
them (`hindcast leaderboard RUN --format forecastbench`).

The shape is what ForecastBench reads, at forecastingresearch/forecastbench commit `05f612e`
(2026-07-24): `src/orchestration/_io.py::read_forecast_file` requires `organization`,
`model`, `model_organization`, `question_set` (a name holding the round's due date,
YYYY-MM-DD) and a non-empty `forecasts` list; `src/resolve/_prepare.py::
check_and_prepare_forecast_file` keeps of each forecast `id`, `source`, `direction`,
`forecast` (in [0, 1]), `resolution_date` (null for a market question: it is overwritten) and
`reasoning`, and drops rows of an unknown source. Its own forecasters add `forecast_due_date`
and name files `<due date>.<organization>.<model>.json`.

One file per forecaster, round and cutoff rule (a hindcast run asks each question at several
instants; a forecast set holds one forecast per question). Only questions imported from
ForecastBench's question sets (`fb:<due date>:<source>:<id>`) belong to a round; other markets
and failed forecasts are left out and counted. `read_forecast_set` reads one back.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from hindcast.errors import LeaderboardError
from hindcast.frozen import write_text_atomic

ORGANIZATION = "hindcast"
SOURCES = (
    "manifold",
    "metaculus",
    "polymarket",
    "infer",
    "acled",
    "dbnomics",
    "fred",
    "wikipedia",
    "yfinance",
)
FOLDER = "forecastbench"
MARKETS = SOURCES[:4]
DATED = re.compile(r"^.+:\d{4}-\d{2}-\d{2}$")
COMBINATION = re.compile(r"^(.+)\+(.+):([+-]1)([+-]1):(\d{4}-\d{2}-\d{2})$")


def forecast_sets(records: Sequence[dict]) -> tuple[dict[str, dict], Counter]:
    """File name → forecast set, and the rows left out by reason."""
    sets: dict[str, dict] = {}
    left: Counter = Counter()
    for r in records:
        parts = r["market_id"].split(":", 3)
        if len(parts) != 4 or parts[0] != "fb" or parts[2] not in SOURCES:
            left["not a ForecastBench question (no round)"] += 1
            continue
        if r["probability"] is None:
            left["no forecast (a failure: counted, never imputed)"] += 1
            continue
        if r.get("repeat"):
            left["a repeat beyond the first"] += 1
            continue
        _, due, source, qid = parts
        model = f"{r['forecaster']} [{r['label']}]"
        name = f"{due}.{ORGANIZATION}.{_slug(r['forecaster'])}.{_slug(r['label'])}.json"
        entry = sets.setdefault(name, _header(due, model))
        qid, date, direction = _question(source, qid)
        entry["forecasts"].append(
            {
                "id": qid,
                "source": source,
                "forecast": r["probability"],
                "resolution_date": date,
                "direction": direction,
                "reasoning": f"hindcast run {r['run_id']}, t0 {r['t0']}",
            }
        )
    return sets, left


def checked_sets(records: Sequence[dict]) -> dict[str, dict]:
    """`forecast_sets`' sets, refused when there is none (checked before anything is written)."""
    sets, _ = forecast_sets(records)
    if not sets:
        raise LeaderboardError(
            "--format forecastbench: no forecast of a question imported from ForecastBench's "
            "question sets (import them with `hindcast markets import forecastbench-datasets`)"
        )
    return sets


def write_forecast_sets(sets: dict[str, dict], folder: Path) -> Path:
    """FOLDER/forecastbench/<file> for each set (`checked_sets`); the folder."""
    out = Path(folder) / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    for name, body in sorted(sets.items()):
        write_text_atomic(out / name, json.dumps(body, indent=2) + "\n")
    return out


def read_forecast_set(path: Path) -> dict[tuple[str, str], float]:
    """A forecast set's forecasts by (source, the question's part of its hindcast market id:
    `<id>`, a data question's `<id>:<date>`, a combination's `<A>+<B>:<±1±1>:<date>`)."""
    body = json.loads(Path(path).read_text(encoding="utf-8"))
    return {(f["source"], _hindcast_id(f)): float(f["forecast"]) for f in body["forecasts"]}


def _question(source: str, qid: str) -> tuple[str | list[str], str | None, list[int] | None]:
    """(id, resolution_date, direction) of an imported question (markets.fbdatasets_extra
    names data and combination questions): a market's date is null (ForecastBench overwrites
    it), a data question's and a combination's are their row's (ignored for market pairs)."""
    combo = COMBINATION.match(qid)
    if combo:
        a, b, da, db, date = combo.groups()
        return [a, b], date, [int(da), int(db)]
    if source not in MARKETS and DATED.match(qid):
        qid, date = qid.rsplit(":", 1)
        return qid, date, None
    return qid, None, None


def _hindcast_id(f: dict) -> str:
    if isinstance(f["id"], list):
        da, db = f["direction"]
        return f"{'+'.join(f['id'])}:{da:+d}{db:+d}:{f['resolution_date']}"
    return f"{f['id']}:{f['resolution_date']}" if f.get("resolution_date") else f["id"]


def _header(due: str, model: str) -> dict:
    return {
        "organization": ORGANIZATION,
        "model": model,
        "model_organization": ORGANIZATION,
        "question_set": f"{due}-llm.json",
        "forecast_due_date": due,
        "forecasts": [],
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"
