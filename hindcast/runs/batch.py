"""Many forecasts in one transaction: what a sweep of cheap forecasters (the baselines) stores.

`claim_many` takes the claims of a batch in one INSERT … ON CONFLICT DO NOTHING and says which
it took (the others are another process's: the caller takes those one at a time, as
`RunStore.claim` does, stealing an expired or dead owner's); `add_many` stores a batch of
forecasts in one transaction — all or none, so a killed sweep loses the batch in flight and
nothing else — and says which keys it stored (a key already there is never duplicated);
`release_many` drops the batch's claims. On a dialect without ON CONFLICT (neither SQLite nor
PostgreSQL) each is done a row at a time through `RunStore`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Delete, Table, delete, tuple_

from hindcast.runs.store import VERSIONED, RunStore
from hindcast.runs.tables import CLAIMS, ForecastRow

Key = tuple[str, str, str, int]  # (forecaster, market, t0 ISO, repeat)


def claim_many(
    store: RunStore, run_id: str, wanted: Sequence[tuple[Key, int]], owner: str, until: float
) -> set[tuple[Key, int]]:
    """Take every claim of `wanted` ((key, attempt) pairs) no one holds, for `owner` until
    `until`: the pairs taken."""
    rows = [
        {
            "run_id": run_id,
            "forecaster": key[0],
            "market_id": key[1],
            "t0": key[2],
            "repeat": key[3],
            "attempt": attempt,
            "owner": owner,
            "expires_at": until,
        }
        for key, attempt in wanted
    ]
    return {((f, m, t0, r), a) for f, m, t0, r, a in _insert_new(store, CLAIMS, rows)}


def add_many(
    store: RunStore, rows: Sequence[dict], release: str | None = None
) -> set[tuple[Key, int]]:
    """Store `rows` (`runs.store.forecast_row`) in one transaction: the (key, attempt) pairs
    stored now (a pair stored already is left as it is). `release`: the claim owner whose claims
    on these rows are dropped in the same transaction (a process killed right after leaves no
    claim of a stored forecast)."""
    stored = _insert_new(store, FORECASTS, rows, release)
    return {((f, m, t0, r), a) for f, m, t0, r, a in stored}


def release_many(
    store: RunStore, run_id: str, taken: Sequence[tuple[Key, int]], owner: str
) -> None:
    """Drop `owner`'s claims on `taken` (stored, or given up)."""
    if not taken:
        return
    c = CLAIMS.c
    columns = tuple_(c.forecaster, c.market_id, c.t0, c.repeat, c.attempt)
    with store.engine.begin() as conn:
        conn.execute(
            delete(CLAIMS).where(
                c.run_id == run_id,
                c.owner == owner,
                columns.in_([(*key, attempt) for key, attempt in taken]),
            )
        )


FORECASTS = ForecastRow.__table__  # type: ignore[attr-defined]
KEY = ("forecaster", "market_id", "t0", "repeat", "attempt")  # of a claim and of a forecast


def _insert_new(
    store: RunStore, table: Table, rows: Sequence[dict], release: str | None = None
) -> list[tuple]:
    """Insert `rows` (column → value) into `table` in one transaction, skipping those whose key
    is there: the KEY columns of the rows inserted; with `release`, that owner's claims on the
    (forecast) rows are deleted in the same transaction."""
    if not rows:
        return []
    dialect = store.engine.dialect.name
    if dialect not in VERSIONED:
        kept = [v for v in rows if store._insert_or_integrity_error(table, dict(v))]
        return [tuple(v[k] for k in KEY) for v in kept]
    from sqlalchemy.dialects import postgresql, sqlite

    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(table).on_conflict_do_nothing().returning(*(table.c[k] for k in KEY))
    with store.engine.begin() as conn:
        inserted = [tuple(row) for row in conn.execute(statement, list(rows))]
        if release is not None:
            conn.execute(_claims_of(rows, release))
        return inserted


def _claims_of(rows: Sequence[dict], owner: str) -> Delete:
    """The DELETE of `owner`'s claims on the forecast rows `rows` (one run)."""
    c = CLAIMS.c
    columns = tuple_(c.forecaster, c.market_id, c.t0, c.repeat, c.attempt)
    return delete(CLAIMS).where(
        c.run_id == rows[0]["run_id"],
        c.owner == owner,
        columns.in_([tuple(r[k] for k in KEY) for r in rows]),
    )
