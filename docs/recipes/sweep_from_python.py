# recipe: docs/recipes/sweep_from_python.py
"""A sweep from Python: the three baselines on the shipped sample, then the leaderboard."""
from datetime import datetime, timezone

import hindcast

result = hindcast.sweep(
    store=hindcast.sample("markets"),  # the shipped market store (or a path to yours)
    forecasters=["market", "constant", "base-rate"],
    fractions=[0.5, 1.0],  # ask at half of each market's life and the day before resolution
    out="runs",  # run database runs/hindcast.db, exports in runs/<run id>/
    now=datetime.now(timezone.utc),  # the instant the run is recorded at (the library never reads the clock)
)
print(f"run {result.run_id}: {result.markets} markets, {result.planned} forecasts "
      f"({result.executed} made now, the rest already stored)")

for row in result.board:  # LeaderboardRow records, best Brier first within each slice
    if row.slice == "all":
        print(f"{row.forecaster:<10} Brier {row.brier:.4f} over {row.n_markets} markets")

frame = result.to_polars()  # the same rows as a polars DataFrame
print(frame.filter(frame["slice"] == "all").select("forecaster", "brier", "brier_diff_vs_market", "n_markets"))
print("exports:", ", ".join(sorted(result.paths)))
