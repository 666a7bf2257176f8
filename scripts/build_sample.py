"""Derive the shipped sample (markets/sample, archive/sample) from ../shared/data.

Usage: python scripts/build_sample.py [--shared ../shared/data] [--out .]

Every choice, so the sample can be rebuilt and audited:

1. Markets come from ForecastBench's Polymarket files (CC BY-SA 4.0). A market is eligible
   when it resolved (resolution_date) between 2025-09-01 and 2026-03-31, resolved Yes or
   No, has at least 10 daily prices known before its effective resolution, and has a price
   (daily or freeze point) known before each default cutoff (lifetime fractions 0.25, 0.5, 0.75, 1.0) — so
   the market yardstick exists on every row of the default sweep.
2. Every eligible market is taken: on 2026-11-30 that is 57 markets (51 No, 6 Yes;
   politics 21, sports 12, geopolitics 7, economy 6, entertainment 4, finance 3, crypto 2,
   tech 1, other 1 by hindcast.markets.topics). Most resolved markets of the window have
   no price before their early cutoffs; rule 1 keeps the market yardstick on every row
   rather than padding the sample with rows where it is missing.
3. markets/sample/forecastbench/ keeps the chosen rows verbatim (markets.jsonl and
   prices_daily.csv, in the upstream order) and markets/sample/ is the market store
   imported from them with `import_forecastbench` — the same code users run.
4. archive/sample/ holds every shared headline (2025-07-24 → 2026-03-31, all months the
   chosen markets' lifetimes overlap the feed), ingested and frozen by the archive code.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from collections import Counter
from pathlib import Path

from hindcast.markets.importers import import_forecastbench, price_instant
from hindcast.markets.prices import price_at
from hindcast.markets.store import write_version
from hindcast.replay.cutoffs import DEFAULT_FRACTIONS, fraction_cutoff, lifetime

MIN_PRICES = 10
WINDOW = ("2025-09-01", "2026-03-31")


def daily_counts(prices_csv: Path, resolutions: dict) -> Counter:
    """Daily price rows per market stamped before the market's effective resolution."""
    counts = Counter()
    with prices_csv.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if price_instant(row) < resolutions[row["condition_id"]].resolved_at:
                counts[row["condition_id"]] += 1
    return counts


def eligible(bundle, prices_csv: Path) -> list[str]:
    resolutions = {r.market_id: r for r in bundle.resolutions}
    counts, chosen = daily_counts(prices_csv, resolutions), []
    for market in bundle.markets:
        r, history = resolutions[market.id], bundle.prices.get(market.id, ())
        if r.outcome is None or not (WINDOW[0] <= r.resolved_at.date().isoformat() <= WINDOW[1]):
            continue
        if counts[market.id] < MIN_PRICES:
            continue
        life = lifetime(market, r, history)
        if all(price_at(history, fraction_cutoff(life, f).t0) for f in DEFAULT_FRACTIONS):
            chosen.append(market.id)
    return chosen


def write_forecastbench_subset(shared: Path, folder: Path, ids: set[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (
        (shared / "polymarket/markets.jsonl").open(encoding="utf-8") as src,
        (folder / "markets.jsonl").open("w", encoding="utf-8") as dst,
    ):
        dst.writelines(line for line in src if json.loads(line)["id"] in ids)
    with (
        (shared / "polymarket/prices_daily.csv").open(newline="", encoding="utf-8") as src,
        (folder / "prices_daily.csv").open("w", newline="", encoding="utf-8") as dst,
    ):
        reader = csv.reader(src)
        writer = csv.writer(dst, lineterminator="\n")
        writer.writerow(next(reader))
        writer.writerows(row for row in reader if row[0] in ids)


def build_markets(shared: Path, out: Path) -> list[str]:
    full = import_forecastbench(
        shared / "polymarket/markets.jsonl", shared / "polymarket/prices_daily.csv"
    )
    ids = eligible(full, shared / "polymarket/prices_daily.csv")
    root = out / "markets/sample"
    shutil.rmtree(root / "versions", ignore_errors=True)
    write_forecastbench_subset(shared, root / "forecastbench", set(ids))
    sample = import_forecastbench(
        root / "forecastbench/markets.jsonl", root / "forecastbench/prices_daily.csv"
    )
    version = write_version(
        root,
        sample,
        provenance={
            "source": "ForecastBench Polymarket subset (CC BY-SA 4.0)",
            "built_by": "scripts/build_sample.py",
        },
    )
    shutil.copyfile(shared / "polymarket/LICENSE", root / "LICENSE")
    print(f"markets/sample: {len(ids)} markets, version {version}")
    print("  topics:", dict(Counter(m.topic for m in sample.markets)))
    print("  outcomes:", dict(Counter(r.status for r in sample.resolutions)))
    return ids


def build_archive(shared: Path, out: Path) -> None:
    from hindcast.archive.snapshot import build_snapshot

    root = out / "archive/sample"
    inputs = sorted((shared / "news/headlines").glob("news_*.jsonl"))
    snapshot = build_snapshot(inputs, source="news-headlines", fmt="headlines", archive_dir=root)
    print(f"archive/sample: snapshot {snapshot} from {len(inputs)} monthly files")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--skip-archive", action="store_true")
    args = parser.parse_args()
    build_markets(args.shared, args.out)
    if not args.skip_archive:
        build_archive(args.shared, args.out)


if __name__ == "__main__":
    main()
