"""`hindcast archive …` flags of issue 18: `--ray [ADDRESS]` (error paths and a private local Ray),
`--device`, `embed --approx [--lists N]`, `search --vector-search exact|approx [--nprobe N]`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hindcast import api
from tests.archive.ray_cluster import free_port
from tests.helpers import ROOT, run_cli

PUSHSHIFT = sorted((ROOT / "tests" / "fixtures" / "pushshift").glob("*.zst"))
QUIET_RAY = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "RAY_ADDRESS": None}
INSTALL = "pip install 'hindcast-replay[ray]'"


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def frozen_archive(path: Path) -> Path:
    api.ingest(PUSHSHIFT, "reddit", "pushshift", path)
    api.freeze(path)
    return path


def ingest_args(archive: Path, *ray: str) -> list[str]:
    return [
        "archive",
        "ingest",
        *ray,
        *map(str, PUSHSHIFT),
        "--source",
        "reddit",
        "--format",
        "pushshift",
        "--archive",
        str(archive),
    ]


def test_ray_flag_without_ray_installed_says_how_to_install_it(tmp_path):
    archive = tmp_path / "a"
    code = (
        "import sys; sys.modules['ray'] = None\nfrom hindcast.cli.main import run\n"
        f"sys.argv = ['hindcast', *{ingest_args(archive, '--ray')!r}]\nrun()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 1
    assert INSTALL in one_line(proc)
    assert not archive.exists()


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_unreachable_ray_address_is_one_line_exit_4_and_nothing_written(tmp_path, scheme):
    address = f"{scheme}127.0.0.1:{free_port()}"  # a port bound, then closed: nothing listens there
    ingest = run_cli(*ingest_args(tmp_path / "a", "--ray", address), env=QUIET_RAY, timeout=120)
    assert ingest.returncode == 4
    assert one_line(ingest).startswith(
        f"hindcast: error: Ray cluster at {address} cannot be reached"
    )
    assert not (tmp_path / "a").exists()

    archive = frozen_archive(tmp_path / "b")
    embed = run_cli(
        "archive",
        "embed",
        "--archive",
        str(archive),
        "--embedder",
        "hash",
        "--ray",
        address,
        env=QUIET_RAY,
        timeout=120,
    )
    assert embed.returncode == 4
    assert "nothing was written" in one_line(embed)
    assert not (archive / "index").exists()


@pytest.mark.parametrize(
    "args, says",
    [
        (
            ["archive", "embed", "--ray=not an address"],
            "--ray 'not an address': use auto, local, HOST:PORT",
        ),
        (["archive", "embed", "--device", "cuda"], "--device 'cuda': use cpu, or cuda with --ray"),
        (["archive", "embed", "--device", "tpu", "--ray"], "--device 'tpu'"),
        (["archive", "embed", "--lists", "4"], "--lists: only with --approx"),
        (
            ["archive", "search", "--query", "x", "--t0", "2024-02-01T00:00:00Z", "--nprobe", "2"],
            "--nprobe: only with --vector-search approx",
        ),
        (
            [
                "archive",
                "search",
                "--query",
                "x",
                "--t0",
                "2024-02-01T00:00:00Z",
                "--vector-search",
                "fast",
            ],
            "--vector-search 'fast': use exact or approx",
        ),
    ],
)
def test_bad_flag_values_are_usage_errors(tmp_path, args, says):
    proc = run_cli(*args, "--archive", str(frozen_archive(tmp_path / "a")), timeout=120)
    assert proc.returncode == 2
    assert says in one_line(proc)


def test_ray_without_an_address_starts_a_private_local_ray_and_leaves_nothing_behind(
    tmp_path, request
):
    single = run_cli(*ingest_args(tmp_path / "one"), check=True, cwd=tmp_path)
    temp = Path(
        tempfile.mkdtemp(prefix="rt", dir="/tmp")
    )  # short: Ray's socket paths below it are long
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    # `--ray` before the inputs: a file name is not an address, so it is the first input
    on_ray = run_cli(
        *ingest_args(tmp_path / "ray", "--ray"),
        cwd=tmp_path,
        check=True,
        env={**QUIET_RAY, "RAY_TMPDIR": str(temp)},
        timeout=300,
    )
    assert on_ray.stdout.replace("ray/", "one/") == single.stdout
    assert on_ray.stderr == ""
    assert list(temp.iterdir()) == []  # the session folder is removed
    left = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    assert str(temp) not in left  # no Ray process of that session is still running
    assert files(tmp_path / "ray" / "draft") == files(tmp_path / "one" / "draft")
    assert files(tmp_path / "ray" / "rejects") == files(tmp_path / "one" / "rejects")


def test_a_ray_tmpdir_too_long_for_rays_sockets_is_one_line(tmp_path):
    proc = run_cli(
        *ingest_args(tmp_path / "a", "--ray"),
        env={**QUIET_RAY, "RAY_TMPDIR": str(tmp_path / ("x" * 60))},
    )
    assert proc.returncode == 1
    assert "too long a path for Ray's sockets" in one_line(proc)
    assert not (tmp_path / "a").exists()


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_embed_approx_then_search_approx_probing_every_list_equals_exact(tmp_path):
    archive = frozen_archive(tmp_path / "a")
    embed = run_cli(
        "archive",
        "embed",
        "--archive",
        str(archive),
        "--embedder",
        "hash",
        "--approx",
        "--partition",
        "codebook",
        "--lists",
        "2",
        check=True,
        timeout=300,
    )
    assert "approximate index: recall@10" in embed.stdout
    search = [
        "archive",
        "search",
        "--archive",
        str(archive),
        "--query",
        "the new rules",
        "--mode",
        "vector",
        "--t0",
        "2024-03-01T00:00:00Z",
        "--json",
    ]
    exact = run_cli(*search, check=True).stdout
    approx = run_cli(*search, "--vector-search", "approx", "--nprobe", "2", check=True).stdout
    assert exact.strip() and approx == exact


def test_search_approx_on_an_index_without_an_approximate_index_is_one_line(tmp_path):
    archive = frozen_archive(tmp_path / "a")
    run_cli(
        "archive", "embed", "--archive", str(archive), "--embedder", "hash", check=True, timeout=300
    )
    proc = run_cli(
        "archive",
        "search",
        "--archive",
        str(archive),
        "--query",
        "rules",
        "--t0",
        "2024-03-01T00:00:00Z",
        "--vector-search",
        "approx",
    )
    assert proc.returncode == 1
    assert "archive embed --approx" in one_line(proc)


def test_embed_approx_with_the_projected_partition_then_search_approx(tmp_path):
    archive = frozen_archive(tmp_path / "a")
    embed = ["archive", "embed", "--archive", str(archive), "--embedder", "hash", "--approx"]
    bad = run_cli(*embed, "--partition", "graph")
    assert bad.returncode == 2 and "--partition 'graph'" in bad.stderr
    assert "Traceback" not in bad.stderr and not (archive / "index").exists()
    proc = run_cli(*embed, "--partition", "projection", check=True, timeout=300)
    assert "approximate index: recall@10" in proc.stdout and "fixed projection" in proc.stdout
    search = ["archive", "search", "--archive", str(archive), "--query", "the new rules"]
    search += ["--mode", "vector", "--t0", "2024-03-01T00:00:00Z", "--json"]
    approx = run_cli(*search, "--vector-search", "approx", check=True).stdout.splitlines()
    exact = run_cli(*search, check=True).stdout.splitlines()
    assert all(json.loads(line)["created_at"] < "2024-03-01" for line in approx)
    assert len(approx) == len(exact) > 0  # never short; ids may differ from the exact scan's
