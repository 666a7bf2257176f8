"""The frozen market store: versions of (markets, resolutions, prices) as Parquet + manifest.

Layout: `ROOT/versions/<version-id>/{markets,resolutions,prices}.parquet, manifest.json` (plus
`meta.parquet` and `descriptions.parquet` when the bundle carries them) and
`ROOT/LATEST` naming the newest version. The version id is derived from the content, so
writing the same bundle twice yields the same version and writes nothing new.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hindcast import frozen
from hindcast.errors import MarketDataError
from hindcast.markets.bundle import EXTRA_DEFAULTS, DescriptionVersion, MarketBundle, MarketMeta
from hindcast.markets.price_table import read_prices, read_rows
from hindcast.records import Market, Resolution

FORMAT = "hindcast-market-store/1"


@dataclass(frozen=True)
class StoreVersion:
    id: str
    path: Path
    bundle: MarketBundle


def write_version(root: Path, bundle: MarketBundle, provenance: dict | None = None) -> str:
    """Freeze a bundle as a new version (or find the identical one) and make it LATEST.

    Every table is built in memory before anything is written, so a bundle that cannot be
    stored changes nothing on disk; the version is written into a staging folder, renamed
    into place when complete, and only then named by LATEST (replaced atomically)."""
    version_id = "m-" + bundle.content_hash()[:16]
    versions = Path(root) / "versions"
    if not (versions / version_id).exists():
        tables = _tables(bundle)
        staging = frozen.staging_dir(versions)
        try:
            _write_tables(staging, tables)
            frozen.write_manifest(
                staging,
                {
                    "format": FORMAT,
                    "version": version_id,
                    "content_sha256": bundle.content_hash(),
                    "counts": _counts(bundle),
                    "provenance": provenance or {},
                },
            )
            frozen.publish(staging, versions / version_id)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    frozen.write_text_atomic(Path(root) / "LATEST", version_id + "\n")
    return version_id


def open_version(root: Path, version: str | None = None) -> StoreVersion:
    """Read a version (LATEST by default), verifying every file against its manifest."""
    root = Path(root)
    version = version or _latest(root)
    path = root / "versions" / version
    if not path.is_dir():
        raise MarketDataError(f"market store {root} has no version {version!r}")
    manifest = frozen.require_intact(path)
    if manifest.get("format") != FORMAT:
        raise MarketDataError(f"{path}: unknown store format {manifest.get('format')!r}")
    return StoreVersion(version, path, _read_tables(path))


def _latest(root: Path) -> str:
    try:
        return (root / "LATEST").read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise MarketDataError(
            f"{root} is not a market store (no LATEST file); import or pull markets first"
        ) from exc


def _counts(bundle: MarketBundle) -> dict:
    return {
        "markets": len(bundle.markets),
        "resolutions": len(bundle.resolutions),
        "price_points": sum(len(h) for h in bundle.prices.values()),
    }


def _tables(bundle: MarketBundle) -> dict:
    """The version's Arrow tables (a value of the wrong type fails here, before any write)."""
    import pyarrow as pa

    fractional = any(r.fraction is not None for r in bundle.resolutions)
    tables = {
        "markets": pa.Table.from_pylist(
            [_market_row(m) for m in sorted(bundle.markets, key=lambda m: m.id)], _MARKET_SCHEMA()
        ),
        "resolutions": pa.Table.from_pylist(
            [_resolution_row(r, fractional) for r in sorted(bundle.resolutions, key=_by_market)],
            _RESOLUTION_SCHEMA(fractional),
        ),
        "prices": pa.Table.from_pylist(
            [
                {"market_id": k, "t": p.t, "p": p.p}
                for k in sorted(bundle.prices)
                for p in bundle.prices[k]
            ],
            _PRICE_SCHEMA(),
        ),
    }
    if bundle.meta:
        extended = any(m.extra() for m in bundle.meta.values())
        tables["meta"] = pa.Table.from_pylist(
            [_meta_row(bundle.meta[k], extended) for k in sorted(bundle.meta)],
            _META_SCHEMA(extended),
        )
    if bundle.descriptions:
        tables["descriptions"] = pa.Table.from_pylist(
            [
                {"market_id": k, "version": i, "valid_from": v.valid_from, "text": v.text}
                for k in sorted(bundle.descriptions)
                for i, v in enumerate(bundle.descriptions[k])
            ],
            _DESCRIPTION_SCHEMA(),
        )
    return tables


def _write_tables(folder: Path, tables: dict) -> None:
    import pyarrow.parquet as pq

    for name, table in tables.items():
        pq.write_table(table, folder / f"{name}.parquet", compression="zstd")


def _read_tables(folder: Path) -> MarketBundle:
    markets = tuple(Market(**row) for row in read_rows(folder / "markets.parquet"))
    resolutions = tuple(Resolution(**row) for row in read_rows(folder / "resolutions.parquet"))
    return MarketBundle(
        markets,
        resolutions,
        read_prices(folder / "prices.parquet"),
        _read_meta(folder),
        _read_descriptions(folder),
    )


def _read_meta(folder: Path) -> dict[str, MarketMeta]:
    rows = _optional_rows(folder / "meta.parquet")
    return {
        row["market_id"]: MarketMeta(
            **{
                **row,
                "tags": tuple(row["tags"]),
                "outcomes": tuple(row["outcomes"]),
                "resolution_statuses": tuple(row.get("resolution_statuses") or ()),
            }
        )
        for row in rows
    }


def _read_descriptions(folder: Path) -> dict[str, tuple[DescriptionVersion, ...]]:
    grouped: dict[str, list[DescriptionVersion]] = {}
    for row in sorted(
        _optional_rows(folder / "descriptions.parquet"),
        key=lambda r: (r["market_id"], r["version"]),
    ):
        grouped.setdefault(row["market_id"], []).append(
            DescriptionVersion(row["text"], row["valid_from"])
        )
    return {k: tuple(v) for k, v in grouped.items()}


def _optional_rows(path: Path) -> list[dict]:
    """Rows of a table older versions may lack (meta, descriptions): none when absent."""
    return read_rows(path) if path.exists() else []


def _meta_row(m: MarketMeta, extended: bool) -> dict:
    """A meta row; the issue-23 columns only in a store that has a non-default value in them
    (a store without them reads back with their defaults, and old bundles write as they did)."""
    names = [f for f in MarketMeta.__dataclass_fields__ if extended or f not in EXTRA_DEFAULTS]
    row = {f: getattr(m, f) for f in names}
    extra = {"resolution_statuses": list(m.resolution_statuses)} if extended else {}
    return {**row, "tags": list(m.tags), "outcomes": list(m.outcomes), **extra}


def _market_row(m: Market) -> dict:
    return {f: getattr(m, f) for f in Market.__dataclass_fields__}


def _resolution_row(r: Resolution, fractional: bool) -> dict:
    """A resolution row; the `fraction` column only in a store holding a fractional outcome
    (stores without one are written as before)."""
    names = [f for f in Resolution.__dataclass_fields__ if fractional or f != "fraction"]
    return {f: getattr(r, f) for f in names}


def _by_market(r: Resolution) -> str:
    return r.market_id


def _ts():
    import pyarrow as pa

    return pa.timestamp("us", tz="UTC")


def _MARKET_SCHEMA():
    import pyarrow as pa

    return pa.schema(
        [
            ("id", pa.string()),
            ("question", pa.string()),
            ("description", pa.string()),
            ("url", pa.string()),
            ("slug", pa.string()),
            ("topic", pa.string()),
            ("opened_at", _ts()),
            ("scheduled_close", _ts()),
            ("volume", pa.float64()),
            ("source", pa.string()),
        ]
    )


def _RESOLUTION_SCHEMA(fractional: bool = False):
    import pyarrow as pa

    return pa.schema(
        [
            ("market_id", pa.string()),
            ("status", pa.string()),
            ("resolved_at", _ts()),
            ("known_at", _ts()),
            *([("fraction", pa.float64())] if fractional else []),
        ]
    )


def _PRICE_SCHEMA():
    import pyarrow as pa

    return pa.schema([("market_id", pa.string()), ("t", _ts()), ("p", pa.float64())])


def _META_SCHEMA(extended: bool = False):
    import pyarrow as pa

    extra = (
        [
            ("venue", pa.string()),
            ("price_route", pa.string()),
            ("price_bucket_seconds", pa.int64()),
            ("price_definition", pa.string()),
            ("disputed", pa.bool_()),
            ("rules_updated_at", _ts()),
            ("resolution_statuses", pa.list_(pa.string())),
        ]
        if extended
        else []
    )
    return pa.schema(
        [
            ("market_id", pa.string()),
            ("source_id", pa.string()),
            ("neg_risk", pa.bool_()),
            ("category", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("event", pa.string()),
            ("outcomes", pa.list_(pa.string())),
            ("yes_index", pa.int64()),
            ("yes_token", pa.string()),
            ("history_fidelity", pa.int64()),
            *extra,
        ]
    )


def _DESCRIPTION_SCHEMA():
    import pyarrow as pa

    return pa.schema(
        [
            ("market_id", pa.string()),
            ("version", pa.int64()),
            ("valid_from", _ts()),
            ("text", pa.string()),
        ]
    )
