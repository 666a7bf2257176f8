"""A real local Ray cluster for tests: `ray start --head` on 127.0.0.1 plus a second worker process
(`ray start --address …`), each `--num-cpus 1`, session files below a test temp folder.

Each `ray start --block` runs in its own session; stopping kills every process of those two
sessions (and only those: never `ray stop`, which would stop every Ray of this
user on the machine)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
STARTED = "Ray runtime started"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalCluster:
    """Head + worker nodes on loopback; `address` is what `--ray` takes."""

    def __init__(self, temp: Path, cpus: int = 1):
        self.temp, self.cpus, self.port = Path(temp), cpus, free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def start(self, timeout: float = 120.0, nodes: int = 2) -> "LocalCluster":
        """The head, then `nodes - 1` worker nodes (each its own `ray start --block` process)."""
        head = [
            "--head",
            "--port",
            str(self.port),
            "--include-dashboard",
            "false",
            "--dashboard-port",
            str(free_port()),
            "--ray-client-server-port",
            str(free_port()),
            "--temp-dir",
            str(self.temp / "ray"),
        ]
        self._node("head", head, timeout)
        for number in range(1, nodes):
            self._node(f"worker{number}", ["--address", self.address], timeout)
        return self

    def _node(self, name: str, args: list[str], timeout: float) -> None:
        log = self.temp / f"{name}.log"
        command = [
            RAY,
            "start",
            "--block",
            "--disable-usage-stats",
            "--node-ip-address",
            "127.0.0.1",
            "--num-cpus",
            str(self.cpus),
            "--dashboard-agent-listen-port",
            str(free_port()),
            "--metrics-export-port",
            str(free_port()),
            *args,
        ]
        with log.open("w") as out:
            self.procs.append(
                subprocess.Popen(
                    command,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    env=ray_env(),
                )
            )
        deadline = time.monotonic() + timeout
        while STARTED not in log.read_text(errors="replace"):
            if self.procs[-1].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"ray {name} did not start:\n{log.read_text(errors='replace')[-3000:]}"
                )
            time.sleep(0.3)

    def processes(self) -> list[int]:
        """Every live process of the cluster's sessions (ray start, GCS, raylets, workers …)."""
        sessions = {p.pid for p in self.procs}
        out = subprocess.run(
            ["ps", "-eo", "pid=,sid=,stat="], capture_output=True, text=True
        ).stdout
        rows = [line.split() for line in out.splitlines()]
        return [
            int(pid) for pid, sid, stat in rows if int(sid) in sessions and not stat.startswith("Z")
        ]

    def stop(self, timeout: float = 10.0) -> None:
        for proc in reversed(
            self.procs
        ):  # worker first: `ray start --block` stops its node on SIGTERM
            _signal(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.3)
        deadline = time.monotonic() + timeout
        while self.processes() and time.monotonic() < deadline:  # SIGKILL, until none is left
            for pid in self.processes():  # (a raylet may fork a worker before it dies)
                _kill(pid)
            time.sleep(0.2)
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.temp / "ray", ignore_errors=True)


def ray_env() -> dict:
    """The environment of the cluster and of the commands that use it: loopback only, so no token
    authentication (Ray would otherwise write ~/.ray/auth_token), no inherited RAY_ADDRESS."""
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    return env


def _signal(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
