"""The `--at` walk (issue 38): the hindcast functions a sweep of one instant passes through from
the command to the stored row — the stack when the runner starts (`run_tasks`), the stack when a
forecaster is asked (its task, created by the runner's gather), and the storing thread's stack
at `forecast_row`, joined in that order. Stops: its frames; files: the distinct files; returns:
a stop in a file already left earlier on the walk."""

import os
import sys
import threading
from pathlib import Path

MARKS = ("run_tasks", "forecast", "forecast_row")


def _stack(frame, pkg: str, root: Path) -> list[tuple[str, str]]:
    stack = []
    while frame is not None:
        if frame.f_code.co_filename.startswith(pkg):
            stack.append((os.path.relpath(frame.f_code.co_filename, root), frame.f_code.co_name))
        frame = frame.f_back
    return stack[::-1]


def walk(argv: list[str], root: Path) -> list[tuple[str, str]]:
    pkg = str(root / "hindcast") + os.sep
    found: dict[str, list] = {}

    def prof(frame, event, arg):
        name = frame.f_code.co_name
        if event != "call" or name not in MARKS or name in found:
            return
        if name == "forecast" and "/forecasters/" not in frame.f_code.co_filename:
            return
        found[name] = _stack(frame, pkg, root)

    sys.setprofile(prof)
    threading.setprofile(prof)
    from hindcast.cli.main import app

    try:
        app(argv, standalone_mode=False)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    path: list[tuple[str, str]] = []
    for mark in MARKS:
        path += [f for f in found.get(mark, []) if f not in path]
    return path


def measure(path: list[tuple[str, str]]) -> tuple[int, int, int]:
    left, returns, current = set(), 0, None
    for file, _ in path:
        if file != current:
            if file in left:
                returns += 1
            if current is not None:
                left.add(current)
            current = file
    return len(path), len({f for f, _ in path}), returns


DEFAULT = [
    "sweep",
    "-f",
    "market",
    "--market",
    "0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc",
    "--at",
    "2025-11-01T00:00:00Z",
]

if __name__ == "__main__":
    # `python scripts/measure_walk.py [hindcast sweep arguments]` (default: one sample market at
    # one instant), run in a temporary folder: its run database and exports go there
    import tempfile

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        path = walk((sys.argv[1:] or DEFAULT) + ["--out", folder], root)
        for file, name in path:
            print(f"  {file}:{name}")
        print("stops {} files {} returns {}".format(*measure(path)))
