# recipe: docs/recipes/pull_polymarket_fake.py
"""`hindcast markets pull` against the shipped fake of Polymarket's 2026 APIs on 127.0.0.1."""
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from hindcast.markets.fake_polymarket import FakePolymarket, population, serve

start = datetime(2025, 6, 1, tzinfo=UTC)
fake = FakePolymarket(population(150, start), now=start + timedelta(days=260))  # 150 resolved markets
with serve(fake) as url:
    command = ["hindcast", "markets", "pull", "--store", "markets/store", "--gamma-url", f"{url}/gamma",
               "--clob-url", f"{url}/clob", "--data-url", f"{url}/data", "--json"]
    print("$", " ".join(command))
    done = subprocess.run([sys.executable, "-m", "hindcast", *command[1:]], capture_output=True, text=True)
print(done.stderr, end="")
summary = json.loads(done.stdout)
print("counts:", json.dumps(summary["counts"]))
print("price routes:", json.dumps(summary["price_routes"]))
sys.exit(done.returncode)
