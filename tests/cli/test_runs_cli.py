import json

import pytest

from tests.helpers import run_cli


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    run_cli("sweep", "-f", "market", "-f", "constant", "--limit", "5", "--out", str(folder), check=True)
    return folder


def test_runs_list_and_show_carry_the_provenance(out):
    (run,) = json.loads(run_cli("runs", "list", "--out", str(out), "--json", check=True).stdout)
    assert run["forecasts"] == 5 * 4 * 2 and run["failed"] == 0 and run["forecasters"] == ["market", "constant"]
    shown = json.loads(run_cli("runs", "show", run["run"], "--out", str(out), "--json", check=True).stdout)
    manifest = shown["manifest"]
    assert manifest["market_store"]["version"].startswith("m-")
    assert manifest["identity"]["fractions"] == [0.25, 0.5, 0.75, 1.0]
    assert manifest["scoring_policies"]["outcome"] == "exclude-non-binary"
    assert manifest["packages"]["hindcast-replay"] and "git_revision" in manifest
    assert set(manifest["forecasters"]) == {"market", "constant"}


def test_rescore_slices_stored_forecasts_without_forecasting(out):
    (run,) = json.loads(run_cli("runs", "list", "--out", str(out), "--json", check=True).stdout)
    proc = run_cli("rescore", run["run"], "--by", "fraction", "--out", str(out), check=True)
    assert "fraction=f=0.25" in proc.stdout and "re-scored from stored forecasts" in proc.stdout
    assert run_cli("rescore", run["run"], "--by", "colour", "--out", str(out)).returncode == 2
    missing = run_cli("runs", "show", "r-000000000000", "--out", str(out))
    assert missing.returncode == 1 and "no run 'r-000000000000'" in missing.stderr
