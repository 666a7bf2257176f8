"""ForecastBench's data and combination questions, imported only when asked for
(`markets import forecastbench-datasets --include data,combination`; forecastbench-datasets.md).

Neither has a market price: each is replayed at its round's freeze instant only (its market
opens at `freeze_datetime`; nothing else is known). Each resolved row is one binary question:

- **data** (acled, dbnomics, fred, wikipedia, yfinance): one question per `(id,
  resolution_date)` row with `resolved: true`, keyed `fb:<due>:<source>:<id>:<date>`, its text
  the question set's with `{resolution_date}` and `{forecast_due_date}` substituted.
- **combination** (a list id and a direction pair, rounds up to 2025-08-31): one question per
  `(pair, direction, resolution_date)` row with `resolved: true`, keyed
  `fb:<due>:<source>:<id A>+<id B>:<±1±1>:<date>`, asking whether the first member resolves as
  its direction says (1: Yes, −1: No) and the second too, with both members' texts. Members come
  from the round's question set: a combination question's `combination_of`, else the round's
  single questions of those ids (the 2024-07-21 human set holds members of the LLM set's
  pairs). A row whose members are not there is skipped with that reason.
The outcome is `resolved_to`, which is 0 or 1 on every resolved row (anything else is an
InputFormatError naming the file and row).
"""

from __future__ import annotations

from collections.abc import Iterator

from hindcast.errors import InputFormatError
from hindcast.markets.bundle import MarketMeta
from hindcast.markets.topics import topic_of
from hindcast.records import Market, Resolution
from hindcast.timeutil import ONE_DAY, day_start, parse_utc

__all__ = ["DATA", "FREEZE_ONLY", "INCLUDE", "combination_items", "data_items"]

DATA = ("acled", "dbnomics", "fred", "wikipedia", "yfinance")
INCLUDE = ("data", "combination")
FREEZE_ONLY = "none: no market price (replay at the freeze instant only)"
NA = "N/A"


def data_items(q: dict, due: str, rows: list[dict], where: str) -> Iterator[tuple]:
    """(market, resolution, meta) of each resolved row of one data question."""
    freeze = parse_utc(q["freeze_datetime"])
    for row in rows:
        if not row["resolved"]:
            continue
        date = row["resolution_date"]
        key = f"fb:{due}:{q['source']}:{q['id']}:{date}"
        text = _fill(q["question"], due, date)
        description = _fill(_background(q), due, date)
        market = _market(key, text, description, _url(q), freeze)
        yield market, _resolution(key, row, where), _meta(key, q["id"], due, q["source"], freeze)


def combination_items(
    row: dict, due: str, members: tuple[dict, dict], where: str
) -> tuple[Market, Resolution, MarketMeta]:
    """The one question of a resolved combination row, from its two member questions."""
    a, b = members
    (ida, idb), (da, db) = row["id"], row["direction"]
    date = row["resolution_date"]
    source = row["source"]
    key = f"fb:{due}:{source}:{ida}+{idb}:{da:+d}{db:+d}:{date}"
    freeze = parse_utc(a["freeze_datetime"])
    said = {1: "Yes", -1: "No"}
    text = (
        f"Two questions. Will question 1 resolve {said[da]} and question 2 resolve {said[db]}?\n"
        f"Question 1: {_fill(a['question'], due, date)}\n"
        f"Question 2: {_fill(b['question'], due, date)}"
    )
    description = "\n\n".join(
        f"Question {n}: {_fill(_background(m), due, date)}" for n, m in ((1, a), (2, b))
    )
    market = _market(key, text, description, "", freeze)
    return market, _resolution(key, row, where), _meta(key, f"{ida}+{idb}", due, source, freeze)


def members_of(
    row: dict, combos: dict[tuple, dict], singles: dict[tuple, dict]
) -> tuple[dict, dict] | None:
    """A combination row's two member questions, or None when the round does not hold them."""
    ida, idb = row["id"]
    combo = combos.get((row["source"], ida, idb))
    if combo is not None and isinstance(combo.get("combination_of"), list):
        found = combo["combination_of"]
        if len(found) == 2 and all(isinstance(m, dict) for m in found):
            return found[0], found[1]
    a, b = singles.get((row["source"], ida)), singles.get((row["source"], idb))
    return (a, b) if a is not None and b is not None else None


def bad_combination(row: dict) -> str:
    ids, direction = row["id"], row["direction"]
    if len(ids) != 2 or not all(isinstance(i, str) and i for i in ids):
        return f"id {ids!r} is not two string ids"
    if not isinstance(direction, list) or len(direction) != 2 or set(direction) - {1, -1}:
        return f"direction {direction!r} is not two of 1 and -1"
    return ""


def _market(key: str, text: str, description: str, url: str, freeze) -> Market:
    return Market(
        id=key,
        question=text,
        description=description,
        url=url,
        topic=topic_of(text),
        opened_at=freeze,
        source="forecastbench",
    )


def _resolution(key: str, row: dict, where: str) -> Resolution:
    if row["resolved_to"] not in (0.0, 1.0):
        raise InputFormatError(
            where, [f"{key}: resolved_to {row['resolved_to']!r} of a resolved row is not 0 or 1"]
        )
    resolved = day_start(parse_utc(row["resolution_date"]))
    status = "yes" if row["resolved_to"] == 1.0 else "no"
    return Resolution(key, status, resolved, resolved + ONE_DAY)


def _meta(key: str, source_id: str, due: str, source: str, freeze) -> MarketMeta:
    return MarketMeta(
        market_id=key,
        source_id=source_id,
        event=due,
        outcomes=("Yes", "No"),
        venue=source,
        price_route=FREEZE_ONLY,
        price_definition="none",
        rules_updated_at=freeze,
        resolution_statuses=("resolved",),
    )


def _fill(text: str, due: str, date: str) -> str:
    return text.replace("{resolution_date}", date).replace("{forecast_due_date}", due)


def _background(q: dict) -> str:
    parts = [q.get("background"), q.get("resolution_criteria")]
    return "\n\n".join(p for p in parts if isinstance(p, str) and p.strip() and p != NA)


def _url(q: dict) -> str:
    url = q.get("url")
    return url if isinstance(url, str) and url != NA else ""
