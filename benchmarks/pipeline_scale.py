"""A user's sweep at scale, step by step: 10,000 markets imported, swept, analysed, exported.

The markets are the shipped sample's 57 real held-in markets (markets/sample/forecastbench:
ForecastBench's markets.jsonl and their real daily prices) replicated with new ids until there
are N (default 10,000): each copy keeps its question, dates and price history. Each step runs as
the real `hindcast` command in its own process, measured for wall time and peak RSS:

1. import      `hindcast markets import forecastbench` of the N markets
   engine      the baselines below swept in this process by `replay.run_sweep` without the
               exports: the forecasting window (plan → last stored forecast) and scoring
2. baselines   `hindcast sweep -f market -f constant -f base-rate --fractions 0.25,0.5,0.75,1.0`
               (N × 4 × 3 forecasts; the issue's target: ≤ 60 s on 2 cores)
3. with-model  the same baselines plus zero-shot on a fake chat model (hindcast.llm.fake, real
               HTTP on 127.0.0.1) answering after 0.5 s, on 500 of the markets (a new run: the
               forecasters are part of the run id)
4. analyze     `hindcast analyze RUN` of the baselines' run
5. export      `hindcast leaderboard RUN --format csv`

It prints one line per step and, at the end, one JSON document (also written to --json): each
step's seconds and peak MiB, the run database's size (and evidence bytes per baseline forecast),
and report.html's size. The machine is what it is: say its CPU and its load beside any figure.

Usage: python benchmarks/pipeline_scale.py [--markets 10000] [--model-markets 500]
       [--latency 0.5] [--work DIR] [--json FILE] [--skip-model] [--skip-engine]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "markets" / "sample" / "forecastbench"
BASELINES = ("market", "constant", "base-rate")
FRACTIONS = "0.25,0.5,0.75,1.0"
CREATED = "2026-01-01T00:00:00+00:00"  # a pinned creation instant: run ids and bytes repeatable


def replicate(n: int, folder: Path) -> tuple[Path, Path]:
    """markets.jsonl and prices_daily.csv of `n` markets: the sample's, copied with new ids."""
    markets = [json.loads(line) for line in (SAMPLE / "markets.jsonl").open(encoding="utf-8")]
    header, *rows = (SAMPLE / "prices_daily.csv").read_text(encoding="utf-8").splitlines()
    prices: dict[str, list[str]] = {}
    for row in rows:
        prices.setdefault(row.split(",", 1)[0], []).append(row.split(",", 1)[1])
    out_markets, out_prices = folder / "markets.jsonl", folder / "prices_daily.csv"
    with (
        out_markets.open("w", encoding="utf-8") as mf,
        out_prices.open("w", encoding="utf-8") as pf,
    ):
        pf.write(header + "\n")
        for k in range(n):
            market = markets[k % len(markets)]
            copy = k // len(markets)
            new_id = market["id"] if copy == 0 else _new_id(market["id"], copy)
            mf.write(json.dumps({**market, "id": new_id}, ensure_ascii=False) + "\n")
            pf.writelines(f"{new_id},{rest}\n" for rest in prices.get(market["id"], ()))
    return out_markets, out_prices


def _new_id(old: str, copy: int) -> str:
    return "0x" + hashlib.sha256(f"{old}/{copy}".encode()).hexdigest()


def step(name: str, args: list[str], results: dict, env: dict | None = None) -> str:
    """Run `hindcast ARGS` in its own process: its wall time and peak RSS recorded under `name`."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "hindcast", *args],
            cwd=ROOT,
            stdout=out,
            stderr=err,
            text=True,
            env={**os.environ, "HINDCAST_CREATED_AT": CREATED, **(env or {})},
        )
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - start
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    peak = round(usage.ru_maxrss / 1024, 1)  # Linux: KiB
    if proc.returncode != 0:
        raise SystemExit(f"{name}: exit {proc.returncode}\n{stderr[-3000:]}")
    results[name] = {"seconds": round(seconds, 2), "peak_mib": peak}
    print(f"{name:<11} {seconds:8.1f} s  peak {peak} MiB", flush=True)
    return stdout


def engine_window(store: Path, db: Path) -> dict:
    """The baselines swept in this process by `replay.run_sweep` with no export: seconds from
    the plan to the last stored forecast (the forecasting window), then scoring the stored run
    (`load_scored`), and the whole call (prepare included)."""
    import asyncio
    import resource

    from hindcast.replay import ReplaySpec, load_scored, run_sweep
    from hindcast.runs import RunStore
    from hindcast.timeutil import parse_utc

    marks: dict[str, float] = {}
    count = [0]

    def advance() -> None:
        count[0] += 1
        marks["last"] = time.monotonic()

    runs = RunStore(f"sqlite:///{db}")
    spec = ReplaySpec(
        store=store, forecasters=BASELINES, fractions=tuple(map(float, FRACTIONS.split(",")))
    )
    start = time.monotonic()
    result = asyncio.run(
        run_sweep(
            spec,
            run_store=runs,
            out_dir=db.parent,
            now=parse_utc(CREATED),
            on_plan=lambda n: marks.setdefault("plan", time.monotonic()),
            advance=advance,
        )
    )
    whole = time.monotonic() - start
    scoring = time.monotonic()
    load_scored(runs, result.run_id)
    window = marks["last"] - marks["plan"]
    return {
        "forecasts": count[0],
        "prepare_s": round(marks["plan"] - start, 2),
        "window_s": round(window, 2),
        "per_second": round(count[0] / window, 1),
        "call_s": round(whole, 2),
        "load_scored_s": round(time.monotonic() - scoring, 2),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "db_mib": round(db.stat().st_size / 2**20, 1),
    }


def run_id_of(out: str) -> str:
    for line in out.splitlines():
        if line.startswith("run "):
            return line.split()[1]
    raise SystemExit(f"no run id in:\n{out[-2000:]}")


def evidence_bytes(db: Path, run_id: str) -> dict:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT forecaster, count(*), sum(length(evidence_json)), max(length(evidence_json)) "
            "FROM forecasts WHERE run_id = ? GROUP BY forecaster",
            (run_id,),
        ).fetchall()
    return {f: {"rows": n, "mean": round(total / n, 1), "max": top} for f, n, total, top in rows}


def sweep_args(store: Path, out: Path, db: Path, forecasters: list[str], more=()) -> list[str]:
    flags = [x for f in forecasters for x in ("-f", f)]
    return [
        "sweep",
        "--store",
        str(store),
        *flags,
        "--fractions",
        FRACTIONS,
        "--out",
        str(out),
        "--db",
        str(db),
        *more,
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--markets", type=int, default=10_000)
    parser.add_argument("--model-markets", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--skip-model", action="store_true")
    parser.add_argument(
        "--skip-engine", action="store_true", help="no in-process engine window (step 1b)"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="pipeline-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict = {"markets": args.markets, "work": str(work), "steps": {}}
    steps = results["steps"]

    start = time.monotonic()
    markets_file, prices_file = replicate(args.markets, work)
    steps["replicate"] = {"seconds": round(time.monotonic() - start, 2), "peak_mib": None}
    store, out, db = work / "store", work / "runs", work / "runs" / "hindcast.db"
    step(
        "import",
        [
            "markets",
            "import",
            "forecastbench",
            "--markets-file",
            str(markets_file),
            "--price-history",
            str(prices_file),
            "--store",
            str(store),
        ],
        steps,
    )
    if not args.skip_engine:
        steps["engine"] = engine_window(store, work / "engine.db")
        print(f"engine      {steps['engine']}", flush=True)
    swept = step("baselines", sweep_args(store, out, db, list(BASELINES)), steps)
    run_id = run_id_of(swept)
    planned = int(swept.split(" forecasts planned")[0].rsplit(" ", 1)[1])
    steps["baselines"]["forecasts"] = planned
    steps["baselines"]["per_second"] = round(planned / steps["baselines"]["seconds"], 1)
    results["run_id"] = run_id
    results["db_mib_after_baselines"] = round(db.stat().st_size / 2**20, 1)
    results["evidence_bytes"] = evidence_bytes(db, run_id)
    report = out / run_id / "report.html"
    results["report_mib"] = round(report.stat().st_size / 2**20, 2) if report.exists() else None
    if not args.skip_model:
        _with_model(args, store, out, db, steps, results)
    step("analyze", ["analyze", run_id, "--db", str(db)], steps)
    step(
        "export",
        ["leaderboard", run_id, "--format", "csv", "--out", str(work / "export"), "--db", str(db)],
        steps,
    )
    results["db_mib"] = round(db.stat().st_size / 2**20, 1)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


def _with_model(args, store: Path, out: Path, db: Path, steps: dict, results: dict) -> None:
    from hindcast.llm.fake import FakeChatModel, answer

    fake = FakeChatModel(default=answer('{"probability": 0.42}', delay=args.latency))
    with fake.serve() as url:
        zero_shot = f"zero-shot:model=openai-compatible:{url}#fake-model"
        swept = step(
            "with-model",
            sweep_args(
                store,
                out,
                db,
                [*BASELINES, zero_shot],
                ("--subset", f"{zero_shot}={args.model_markets}"),
            ),
            steps,
        )
    steps["with-model"]["model_requests"] = len(fake.requests)
    results["model_run_id"] = run_id_of(swept)


if __name__ == "__main__":
    main()
