"""What the Inspect AI tests share: the entry point as pyproject.toml declares it, a real
`inspect eval` subprocess, a small real archive (shipped headlines, hash embedder) and a
scripted fake chat model that calls every t0-bound tool before answering."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from hindcast.llm.fake import FakeChatModel, answer, error, tool_call

ROOT = Path(__file__).resolve().parents[2]
INSPECT = Path(sys.executable).with_name("inspect")


def declared_entry_points() -> dict[str, str]:
    """`[project.entry-points.inspect_ai]` of pyproject.toml."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["entry-points"]["inspect_ai"]


def entry_point_path(folder: Path) -> Path | None:
    """A folder for PYTHONPATH whose dist-info declares pyproject's `inspect_ai` entry points, when
    the installed hindcast-replay does not declare them yet (an editable install made before they
    existed); None when it does."""
    try:
        installed = {
            e.name: e.value
            for e in metadata.distribution("hindcast-replay").entry_points
            if e.group == "inspect_ai"
        }
    except metadata.PackageNotFoundError:
        installed = {}
    declared = declared_entry_points()
    if installed == declared:
        return None
    info = folder / "hindcast_inspect_entry_points-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hindcast-inspect-entry-points\nVersion: 0\n"
    )
    (info / "entry_points.txt").write_text(
        "[inspect_ai]\n" + "".join(f"{k} = {v}\n" for k, v in declared.items())
    )
    return folder


def environment(tmp: Path, *extra: Path) -> dict:
    """Our environment with the checkout (and `extra` folders) importable,
    from any working folder."""
    paths = [str(ROOT), *map(str, extra)]
    entry = entry_point_path(tmp / "entry-points")
    if entry is not None:
        paths.append(str(entry))
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")]),
        "INSPECT_DISPLAY": "none",
        "INSPECT_LOG_LEVEL": "warning",
    }


def inspect_eval(
    tmp: Path, model: str, *options: str, cwd: Path | None = None, extra: tuple = ()
) -> Path:
    """`inspect eval hindcast/replay --model MODEL OPTIONS…` in a fresh folder; the log it wrote."""
    logs = tmp / "logs"
    where = cwd or tmp / "elsewhere"
    where.mkdir(parents=True, exist_ok=True)
    before = set(logs.glob("*.eval"))
    done = subprocess.run(
        [
            str(INSPECT),
            "eval",
            "hindcast/replay",
            "--model",
            model,
            "--log-dir",
            str(logs),
            *options,
        ],
        cwd=where,
        env=environment(tmp, *extra),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (
        f"inspect eval exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    (log,) = set(logs.glob("*.eval")) - before
    return log


# ---- the scripted model -----------------------------------------------------------------------
def probability_of(user_text: str) -> float:
    """The fake model's answer: a function of the question message alone."""
    return round(int(hashlib.sha256(user_text.encode()).hexdigest()[:4], 16) / 0xFFFF, 4)


def _first_id(tool_messages: list[dict]) -> str:
    try:
        hits = json.loads(tool_messages[0]["content"])
    except (ValueError, IndexError, KeyError):
        return "no-such-document"
    return hits[0]["id"] if isinstance(hits, list) and hits else "no-such-document"


def scripted(garbage: set[str] = frozenset(), outage: set[str] = frozenset()):
    """A step function: with tools offered, call every t0-bound tool once (search, read and thread
    of its first hit, price history, past resolutions, the question),
    then answer `{"probability": p}`; for a question containing a `garbage` text answer without a
    number; for one containing an `outage` text, HTTP 401 (an outage)."""

    def step(body: dict):
        messages = body["messages"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        user = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
        if any(o in user for o in outage):
            return error(401, '{"error": {"message": "invalid api key"}}')
        done = [m for m in messages if m["role"] == "tool"]
        if body.get("tools"):
            plan = [
                ("search", {"query": user.split("Question:")[-1][:60], "k": 3}),
                ("read", {"doc_id": _first_id(done)}),
                ("thread", {"submission_id": _first_id(done)}),
                ("price_history", {}),
                ("resolved_before", {}),
                ("question", {}),
            ]
            if len(done) < len(plan):
                return tool_call(*plan[len(done)])
        if any(g in user for g in garbage):
            return answer("Hard to say; it depends.")
        return answer(json.dumps({"probability": probability_of(user)}))

    return step


def fake_model(**kwargs) -> FakeChatModel:
    return FakeChatModel(default=scripted(**kwargs), model="fake")


def small_archive(folder: Path):
    """Real shipped headlines (a few per month, plus every one on the Fed or rates) frozen and
    indexed with the hash embedder: a real snapshot and LanceDB index, cheap to build."""
    from tests.integration.archive_support import build_archive, real_headlines

    months = [
        "2025-07",
        "2025-08",
        "2025-09",
        "2025-10",
        "2025-11",
        "2025-12",
        "2026-01",
        "2026-02",
        "2026-03",
    ]
    (folder / "inputs").mkdir(parents=True, exist_ok=True)
    return build_archive(
        folder / "archive", real_headlines(folder / "inputs", months, ("fed", "rate"), per_month=30)
    )
