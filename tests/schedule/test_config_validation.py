"""The service config is validated whole at load, before any job runs: every key (unknown ones
with the nearest known name), every value's type, forecaster specs, inbox formats and sweep
store paths. A bad config is one line naming the file and the setting, exit 1, and nothing
is written anywhere."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hindcast.cli.schedule import app
from hindcast.schedule.config import ScheduleError, load
from tests.helpers import SAMPLE_MARKETS
from tests.schedule.conftest import run_process, write_config


def tree(root):
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else "dir")
        for p in sorted(root.rglob("*"))
    }


def edited(tmp_path, old: str, new: str, extra: str = ""):
    path = write_config(tmp_path, "http://127.0.0.1:9", extra)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


BAD = [  # (replace this, with this, message)
    (
        "timeout = 10",
        'timeout = 10\npage_size = "lots"',
        r"\[markets\] page_size: expected an integer 1…100, got 'lots'",
    ),
    (
        "timeout = 10",
        "timeout = 10\npage_size = 101",
        r"\[markets\] page_size: expected an integer 1…100",
    ),
    ("attempts = 1", 'attempts = "1"', r"\[markets\] attempts: expected an integer 1…"),
    ("timeout = 10", 'timeout = "ten"', r"\[markets\] timeout: expected a number of seconds > 0"),
    ('lookback = "2d"', "lookback = 2", r"\[markets\] lookback: expected text like"),
    ('since = "2026-01-01"', "since = 2026", r"\[markets\] since: 2026 is not a date"),
    (
        "timeout = 10",
        "timeout = 10\npagesize = 10",
        r"\[markets\]: unknown key pagesize \(did you mean page_size\?\)",
    ),
    ("[jobs]", "[job]", r"the config: unknown key \[job\] \(did you mean \[jobs\]\?\)"),
    (
        "[service]",
        '[service]\nrun_out = "x"',
        r"\[service\]: unknown key run_out \(did you mean runs_out\?\)",
    ),
    (
        'spec = "constant"',
        'spec = "constnat"',
        r"sweep 'baselines': forecasters: unknown forecaster 'constnat' in 'constnat' \(did "
        r"you mean constant\?\)",
    ),
    (
        'spec = "constant"',
        'spec = "constant:q=0.3"',
        r"sweep 'baselines': forecaster spec 'constant:q=0.3'",
    ),
    (
        "[sweeps.run]",
        "[sweeps.runs]",
        r"sweep 'baselines': unknown key \[sweeps.runs\] \(did you mean \[sweeps.run\]\?\)",
    ),
    (
        "concurrency = 2",
        "concurency = 2",
        r"unknown key concurency in \[sweeps.run\] \(did you mean concurrency\?\)",
    ),
    (
        "concurrency = 2",
        "concurrency = 2\nretry_failed = 1",
        r"retry_failed must be true or false, got 1",
    ),
    (
        "concurrency = 2",
        'concurrency = 2\nmax_cost = "3"',
        r"max_cost must be a number of dollars ≥ 0",
    ),
    ("concurrency = 2", "concurrency = 2\nmax_tokens = 0", r"max_tokens must be an integer ≥ 1"),
    (
        "concurrency = 2",
        "concurrency = 2\nbreaker_threshold = true",
        r"breaker_threshold must be an integer ≥ 1",
    ),
    (
        '[[sweeps.forecasters]]\nspec = "market"',
        "[[sweeps.forecasters]]\nmarkets = 2",
        r"\[\[sweeps.forecasters\]\] entry 1 has no spec",
    ),
    (
        "[sweeps.cutoffs]",
        '[sweeps.markets]\nstore = "nowhere"\n[sweeps.cutoffs]',
        r"sweep 'baselines': market store .*nowhere does not exist \(no LATEST\) and no "
        r"configured pull fills it",
    ),
    (
        "[sweeps.cutoffs]",
        '[sweeps.archive]\nroot = "no-archive"\n[sweeps.cutoffs]',
        r"sweep 'baselines': archive .*no-archive does not exist and no configured "
        r"\[archive\] inbox fills it",
    ),
]


@pytest.mark.parametrize("old, new, message", BAD, ids=[b[2][:40] for b in BAD])
def test_a_bad_setting_is_refused_at_load_naming_file_and_setting(tmp_path, old, new, message):
    path = edited(tmp_path, old, new)
    with pytest.raises(ScheduleError, match=message) as info:
        load(path)
    assert str(info.value).startswith(f"config {path}: ") and "\n" not in str(info.value)


def test_an_unknown_inbox_format_is_refused_at_load(tmp_path):
    extra = (
        '\n[archive]\nroot = "archive"\n[[archive.inbox]]\npath = "inbox"\nsource = '
        '"news"\nformat = "newz"\n'
    )
    with pytest.raises(
        ScheduleError,
        match=r"\[\[archive.inbox\]\] inbox: format 'newz' is unknown "
        r"\(did you mean news\?\)",
    ):
        load(write_config(tmp_path, "http://x", extra))


def test_a_sweep_store_without_a_pull_must_exist(tmp_path):
    path = write_config(tmp_path, "http://x")
    text = path.read_text()
    markets = text[text.index("[markets]") : text.index("[[sweeps]]")]
    path.write_text(
        text.replace(markets, "").replace(
            "[sweeps.cutoffs]", '[sweeps.markets]\nstore = "markets/store"\n[sweeps.cutoffs]'
        )
    )
    with pytest.raises(
        ScheduleError, match=r"market store .*markets/store does not exist .*no \[markets\] section"
    ):
        load(path)
    path.write_text(
        path.read_text().replace('store = "markets/store"', f'store = "{SAMPLE_MARKETS}"')
    )
    assert load(path).sweep("baselines").spec.store == SAMPLE_MARKETS  # an existing store: fine


def test_the_run_integrity_keys_in_the_inline_sweep_layout(tmp_path):
    path = edited(
        tmp_path,
        "concurrency = 2",
        "concurrency = 2\nretry_failed = true\nmax_cost = 1.5\n"
        "max_tokens = 5000\nbreaker_threshold = 2",
    )
    spec = load(path).sweep("baselines").spec
    assert (spec.retry_failed, spec.max_cost, spec.max_tokens, spec.breaker_threshold) == (
        True,
        1.5,
        5000,
        2,
    )


def test_a_bad_config_stops_before_any_job_runs(tmp_path, server):
    """Before: the pull ran (and wrote a store version) before the sweep found
    its unknown forecaster."""
    path = write_config(tmp_path, server.url)
    path.write_text(path.read_text().replace('spec = "base-rate"', 'spec = "base-rat"'))
    before = tree(tmp_path)
    proc = run_process(path, "once", "--now", "2026-03-02T00:00:00Z")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == (
        f"hindcast: error: config {path}: sweep 'baselines': forecasters: unknown forecaster "
        "'base-rat' in 'base-rat' (did you mean base-rate?)\n"
    )
    assert server.fake.requests == [] and tree(tmp_path) == before


@pytest.mark.parametrize("command", [["once"], ["status"], ["run"]])
def test_every_schedule_command_says_one_line_and_exits_1(tmp_path, command):
    path = edited(tmp_path, "timeout = 10", 'timeout = 10\npage_size = "x"')
    before = tree(tmp_path)
    result = CliRunner().invoke(app, [*command, "--config", str(path)])
    assert result.exit_code == 1 and result.stdout == ""
    assert (
        result.stderr
        == f"hindcast: error: config {path}: [markets] page_size: expected an integer 1…100, "
        "got 'x'\n"
    )
    assert tree(tmp_path) == before


def test_an_unreadable_config_is_one_line(tmp_path):
    missing = tmp_path / "nope.toml"
    result = CliRunner().invoke(app, ["once", "--config", str(missing)])
    assert result.exit_code == 1 and result.stderr.startswith(
        f"hindcast: error: config {missing}: "
    )
    (tmp_path / "latin1.toml").write_bytes('[service]\ndb = "caf\xe9"\n'.encode("latin-1"))
    result = CliRunner().invoke(app, ["status", "--config", str(tmp_path / "latin1.toml")])
    assert (
        result.exit_code == 1
        and len(result.stderr.splitlines()) == 1
        and "latin1.toml" in result.stderr
    )
