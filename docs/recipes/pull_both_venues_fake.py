# recipe: docs/recipes/pull_both_venues_fake.py
"""Polymarket and Kalshi into one store (the shipped fakes on 127.0.0.1), a sweep, a leaderboard by venue."""
import csv
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from hindcast.markets.fake_kalshi import FakeKalshi
from hindcast.markets.fake_kalshi import serve as serve_kalshi
from hindcast.markets.fake_polymarket import FakePolymarket, population
from hindcast.markets.fake_polymarket import serve as serve_polymarket


def hindcast(*args: str) -> str:
    print("$ hindcast", " ".join(args))
    done = subprocess.run([sys.executable, "-m", "hindcast", *args], capture_output=True, text=True)
    print(done.stderr, end="")
    if done.returncode != 0:
        sys.exit(done.returncode)
    return done.stdout


start = datetime(2025, 6, 1, tzinfo=UTC)
with serve_polymarket(FakePolymarket(population(20, start), now=start + timedelta(days=260))) as url:
    hindcast("markets", "pull", "--store", "markets/store", "--gamma-url", f"{url}/gamma",
             "--clob-url", f"{url}/clob", "--data-url", f"{url}/data", "--json")
with serve_kalshi(FakeKalshi.generate(live=10, historical=10)) as url:
    kalshi = json.loads(hindcast("markets", "pull", "--venue", "kalshi", "--kalshi-url", url,
                                 "--store", "markets/store", "--json"))
print("kalshi counts:", json.dumps(kalshi["counts"]))
run = json.loads(hindcast("sweep", "--store", "markets/store", "-f", "market", "-f", "constant", "-f", "base-rate",
                          "--json"))["run_id"]
hindcast("leaderboard", run, "--out", "reports", "--by", "venue", "--format", "csv")
with open("reports/leaderboard.csv", encoding="utf-8") as table:
    for row in csv.DictReader(table):
        print(f"{row['slice']:18} {row['forecaster']:10} Brier {float(row['brier']):.4f} over {row['n_markets']} markets")
