"""`hindcast import-inspect` reads what a log says and checks it (issue 36, items 3, 5, 13): the
sample's own answer wins over the score's metadata (a tampered score refuses the log); a string,
NaN or out-of-range probability, missing retrievals, an epoch outside the eval or two samples
for one (market, t0, epoch) are one line naming the sample, nothing stored; credentials in a log
(its model URL, task arguments, tool arguments, an error) are stored nowhere.

One real `inspect eval hindcast/replay` run (subprocess, the shipped fake chat model) is made
once; each case rewrites a copy of its log with Inspect's own writer."""

from __future__ import annotations

import importlib.util
import math
import sqlite3
from pathlib import Path

import pytest

from tests.adapters.inspect_support import fake_model, inspect_eval
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="needs the inspect extra"
)
SECRET = "planted-log-secret-6a5b4c"


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("inspect-checks")
    with fake_model().serve() as url:
        args = ("-T", "limit=2", "-T", "fractions=0.5", "-M", f"cache={tmp / 'responses.db'}")
        return inspect_eval(tmp, f"hindcast/openai-compatible:{url}#fake", *args)


def variant(log: Path, folder: Path, change) -> Path:
    from inspect_ai.log import read_eval_log, write_eval_log

    made = read_eval_log(str(log))
    change(made)
    path = folder / "changed.json"  # (an .eval zip keeps one entry per sample id and epoch)
    write_eval_log(made, str(path))
    return path


def meta(sample) -> dict:
    return next(iter(sample.scores.values())).metadata["hindcast"]


def set_probability(value):
    def change(made):
        meta(made.samples[0])["probability"] = value

    return change


def drop_retrievals(made):
    del meta(made.samples[0])["retrievals"]


def epoch_outside(made):
    made.samples[0].epoch = 3


def twice(made):
    made.samples.append(made.samples[0].model_copy(deep=True))


def no_market(made):
    del made.samples[0].metadata["market_id"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (set_probability(0.99), "has a score probability 0.99 but its answer holds"),
        (set_probability("0.5"), "has a score probability '0.5' that is not a number"),
        (set_probability(math.nan), "has a score probability nan"),
        (set_probability(1.5), "has a score probability 1.5"),
        (drop_retrievals, "has no retrievals list"),
        (epoch_outside, "has epoch 3, outside the eval's 1..1"),
        (twice, "appears twice for epoch 1"),
        (no_market, "has no valid market_id and t0"),
    ],
)
def test_a_log_that_says_what_its_samples_do_not_is_refused_in_one_line(
    log, tmp_path, change, said
):
    changed, db = variant(log, tmp_path, change), tmp_path / "runs.db"
    done = run_cli("import-inspect", str(changed), "--db", str(db))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and said in done.stderr, done.stderr
    assert "sample " in done.stderr and "nothing was stored" in done.stderr
    assert not db.exists()


def plant(made):
    made.eval.model = (
        f"hindcast/openai-compatible:http://u:{SECRET}@127.0.0.1:9/v1?api_key={SECRET}#fake"
    )
    made.eval.task_args = {**made.eval.task_args, "note": f"postgresql://u:{SECRET}@h/db"}
    meta(made.samples[0])["retrievals"].append(
        {"op": "search", "query": f"rates token={SECRET}", "ids": []}
    )


def test_no_credential_of_a_log_is_stored_or_printed(log, tmp_path):
    changed, db = variant(log, tmp_path, plant), tmp_path / "runs.db"
    done = run_cli("import-inspect", str(changed), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    shown = run_cli("runs", "show", "--db", str(db), "--json", done.stdout.split('"')[3])
    dump = "\n".join(sqlite3.connect(db).iterdump())
    assert "rates token=***" in dump  # the planted call is there, without its value
    for text in (dump, done.stdout, done.stderr, shown.stdout, shown.stderr):
        assert SECRET not in text
    for path in tmp_path.iterdir():
        if path != changed:
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_untouched_log_imports(log, tmp_path):
    done = run_cli("import-inspect", str(log), "--db", str(tmp_path / "runs.db"), "--json")
    assert done.returncode == 0 and '"stored": 2' in done.stdout, done.stdout + done.stderr


def test_the_documented_ids_form_plans_that_market(tmp_path):
    """`-T ids=0x05af…` as the docs print it: Inspect reads it as YAML, a hex integer without its
    leading zero; the task matches it back to the store's market id."""
    from inspect_ai.log import read_eval_log

    from tests.adapters.support import sample_market

    market = sample_market()
    assert market.startswith("0x0")  # the leading zero a hex integer loses
    with fake_model().serve() as url:
        args = ("-T", f"ids={market}", "-T", "fractions=0.5", "-M", "cache=none")
        made = inspect_eval(tmp_path, f"hindcast/openai-compatible:{url}#fake", *args)
    assert [s.metadata["market_id"] for s in read_eval_log(str(made)).samples] == [market]
