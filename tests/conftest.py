"""Fixtures shared by every test package. Only what the repository ships is read."""

from __future__ import annotations

import importlib.util
import py_compile
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import write_sample_headlines

# Property tests do not depend on the machine's speed or on earlier runs: no per-example deadline
# and no "too slow" health check (a loaded 2-core machine is slow), and no example database in
# the working directory (.hypothesis/); a test's own @settings still override these.
settings.register_profile(
    "hindcast", deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("hindcast")

# Under PYTHONDONTWRITEBYTECODE=1 (set in CI's environment) no process writes bytecode, so each of
# the suite's ~thousand `python -m hindcast …` subprocesses compiled every module of the package
# it imports from source (0.2-0.3 s of CPU for a sweep's imports). The session compiles the
# package once (0.4 s) into its own __pycache__ folders, which every process reads, and removes
# what it wrote when it ends: the checkout is left as the variable asks.
_COMPILED: list[Path] = []


def pytest_configure(config):
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        _COMPILED.extend(_compile(Path(__file__).resolve().parents[1] / "hindcast"))


def pytest_unconfigure(config):
    for path in _COMPILED:  # files first, then the folders the session made (if left empty)
        if path.suffix == ".pyc":
            path.unlink(missing_ok=True)
        elif not any(path.iterdir()):
            path.rmdir()


def _compile(package: Path) -> list[Path]:
    """Compile `package`'s modules whose bytecode is missing or older than the source; the .pyc
    files and __pycache__ folders written that were not there (files first)."""
    files, folders = [], []
    for source in sorted(package.rglob("*.py")):
        target = Path(importlib.util.cache_from_source(str(source)))
        if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
            continue
        if not target.parent.exists():
            folders.append(target.parent)
        existed = target.exists()
        if py_compile.compile(str(source), str(target), quiet=1) and not existed:
            files.append(target)
    return files + folders


def pytest_addoption(parser, pluginmanager):
    """`--embedder KEY`: see `default_embedder`. Without pytest-xdist (`pytest -p no:xdist`, or
    not installed) the suite runs in this process: pyproject's addopts `-n logical
    --maxprocesses 4 --dist loadfile --no-loadscope-reorder --max-worker-restart 0` are accepted
    and ignored then."""
    parser.addoption(
        "--embedder",
        default="minilm",
        help="the embedder the cpu_default tests build and read their indexes with [default: "
        "minilm, what this CPU makes the default]; .ci/run passes minilm-bf16 on a CPU without "
        "native bf16, so that the bf16 path runs there too",
    )
    if pluginmanager.has_plugin("xdist"):
        return
    group = parser.getgroup("xdist", "xdist not loaded: tests run in this process")
    # _addoption: pytest reserves lowercase short flags (-n) for plugins; this stands in for one
    group._addoption("-n", "--numprocesses", dest="numprocesses", default=None, help="ignored")
    group.addoption("--maxprocesses", dest="maxprocesses", default=None, help="ignored")
    group.addoption("--dist", dest="dist", default="no", help="ignored")
    group.addoption(
        "--no-loadscope-reorder", dest="loadscopereorder", action="store_false", help="ignored"
    )
    group.addoption("--max-worker-restart", dest="maxworkerrestart", default=None, help="ignored")


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: unknown when xdist is not loaded
def pytest_xdist_auto_num_workers(config):
    """`-n logical` (addopts): one worker more than the CPUs this process may run on, at most
    `--maxprocesses`. A quarter of the suite's wall time is spent waiting (subprocesses starting,
    servers, loopback fakes): with two workers on 2 CPUs the cores were busy 74 % of a full run
    (20 min 35 s), with three 93 % (17 min 24 s, same tree). PYTEST_XDIST_AUTO_NUM_WORKERS still
    sets the number."""
    import os

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").isdigit():
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cpus or 1) + 1


# The heaviest test files, heaviest first (from `pytest --durations` of full runs: together about
# half of the suite's time). Under `--dist loadfile` a file is one unit of work and pytest-xdist
# hands the units out in the order of the collection when addopts says `--no-loadscope-reorder`
# (by default it orders them by their number of tests): these start first, so the last unit
# handed out is a short one and the workers finish together. The other files follow in
# pytest-xdist's own order (most tests first). A file missing here only costs time.
HEAVY_FIRST = (
    "tests/archive/test_properties.py",
    "tests/integration/test_local_model.py",
    "tests/archive/test_ray_cluster.py",
    "tests/test_recipes.py",
    "tests/leaks/test_leakset.py",
    "tests/bad_inputs/test_bad_inputs.py",
    "tests/adapters/test_inspect_task.py",
    "tests/cli/test_planted_secrets_db.py",
    "tests/cli/test_archive_cli.py",
    "tests/schedule/test_crash_safety.py",
    "tests/adapters/test_inspect_import_checks.py",
    "tests/replay/test_outages.py",
    "tests/leaks/test_leaks.py",
    "tests/cli/test_refused_before_writing.py",
    "tests/cli/test_conventions.py",
    "tests/cli/test_cli_conventions_sweep_runs.py",
    "tests/markets/test_polymarket_2026_traps.py",
)


def pytest_collection_modifyitems(config, items):
    """In a pytest-xdist worker: the files of HEAVY_FIRST first, then by number of tests (each
    worker collects, so every worker orders its collection the same way)."""
    if not hasattr(config, "workerinput"):
        return
    files: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        files[path] = files.get(path, 0) + 1
    heavy = {path: rank for rank, path in enumerate(HEAVY_FIRST)}
    order = {
        path: rank
        for rank, path in enumerate(
            sorted(files, key=lambda f: (heavy.get(f, len(heavy)), -files[f]))
        )
    }
    items.sort(key=lambda item: order[item.nodeid.split("::", 1)[0]])


@pytest.fixture(scope="session")
def default_embedder(pytestconfig) -> str:
    """The embedder key the tests of the embedding default use (`--embedder`): `minilm`, which
    is all-MiniLM-L6-v2 in the precision this CPU computes natively (bf16 or fp32), unless CI
    forces the other one. Tests assert the rule (`get_embedder(key).name`), never one CPU's
    outcome."""
    return pytestconfig.getoption("--embedder")


@pytest.fixture(scope="session", autouse=True)
def converted_model_cache(tmp_path_factory):
    """The local model converted once per test session and shared by its xdist workers
    (hindcast.llm.converted): never the user's own cache, so every run starts as a fresh
    machine does, and a worker that finds the folder skips the ~20 s conversion."""
    import os

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "model-cache"
    os.environ["HINDCAST_MODEL_CACHE"] = str(root)
    yield root


@pytest.fixture(scope="session")
def sample_headline_files(tmp_path_factory) -> list[Path]:
    """The 46,809 shipped real headlines (archive/sample) written back as `headlines`-format
    JSONL inputs, one `news_YYYY-MM.jsonl` per creation month, once per test session."""
    return write_sample_headlines(tmp_path_factory.mktemp("sample-headlines"))


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server started for this session (tests/pg.py),
    stopped by pid at the end."""
    from tests import pg

    bin_dir = pg.pg_bin()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL server binaries not installed (apt-get install postgresql; .ci/run "
            "installs it)"
        )
    server = pg.start(bin_dir)
    try:
        yield server
    finally:
        pg.stop(server)


@pytest.fixture(params=["sqlite", "postgresql"])
def new_db_url(request, tmp_path):
    """On each backend, a function returning the URL of a new, empty run database: a new SQLite
    file, or a new database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        names = iter(range(1_000_000))
        return lambda: f"sqlite:///{tmp_path / f'runs{next(names)}.db'}"
    return request.getfixturevalue("pg_server").create_database


@pytest.fixture
def db_url(new_db_url) -> str:
    """A new, empty run database URL on each backend: a SQLite file, a new PostgreSQL database."""
    return new_db_url()
