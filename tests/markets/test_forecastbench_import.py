import json
import shutil

import pytest

from hindcast.errors import ArchiveIntegrityError, InputFormatError
from hindcast.markets.importers import import_forecastbench
from hindcast.markets.store import open_version, write_version
from tests.helpers import SAMPLE_MARKETS, at

SOURCE = SAMPLE_MARKETS / "forecastbench"


def copy_source(tmp_path):
    lines = (SOURCE / "markets.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    prices = (SOURCE / "prices_daily.csv").read_text(encoding="utf-8")
    return lines, prices


def write(tmp_path, lines, prices):
    (tmp_path / "markets.jsonl").write_text("".join(lines), encoding="utf-8")
    (tmp_path / "prices_daily.csv").write_text(prices, encoding="utf-8")
    return tmp_path / "markets.jsonl", tmp_path / "prices_daily.csv"


def test_effective_resolution_is_the_earlier_of_date_and_first_seen(tmp_path):
    lines, prices = copy_source(tmp_path)
    row = json.loads(lines[0])
    row["resolution_date"], row["resolution_first_seen"] = "2025-12-07", "2025-12-05T10:00:00+00:00"
    bundle = import_forecastbench(
        *write(tmp_path, [json.dumps(row) + "\n"], prices.splitlines()[0] + "\n")
    )
    (r,) = bundle.resolutions
    assert r.resolved_at == at("2025-12-05T10:00:00") and r.known_at == at("2025-12-05T10:00:00")
    row["resolution_first_seen"] = "2025-12-09T02:00:00+00:00"
    (r,) = import_forecastbench(
        *write(tmp_path, [json.dumps(row) + "\n"], prices.splitlines()[0] + "\n")
    ).resolutions
    assert r.resolved_at == at("2025-12-07T00:00:00") and r.known_at == at("2025-12-09T02:00:00")


def test_malformed_market_rows_are_all_reported_with_line_numbers(tmp_path):
    lines, prices = copy_source(tmp_path)
    broken = json.loads(lines[4])
    del broken["resolution_first_seen"]
    lines[2] = '{"id": "0xabc", truncated\n'
    lines[4] = json.dumps(broken) + "\n"
    with pytest.raises(InputFormatError) as err:
        import_forecastbench(*write(tmp_path, lines, prices))
    message = str(err.value)
    assert "markets.jsonl:3: invalid JSON" in message
    assert "markets.jsonl:5: missing field 'resolution_first_seen'" in message
    assert "nothing was written" in message and len(err.value.problems) == 2


def test_malformed_price_rows_name_the_csv_line(tmp_path):
    lines, prices = copy_source(tmp_path)
    rows = prices.splitlines(keepends=True)
    rows[7] = rows[7].replace(rows[7].split(",")[2], "1.7", 1)
    rows[9] = "0xdeadbeef,2025-10-01,0.5,v2_value_at_date,2025-10-02T00:00:00+00:00\n"
    with pytest.raises(InputFormatError) as err:
        import_forecastbench(*write(tmp_path, lines, "".join(rows)))
    assert "prices_daily.csv:8: price 1.7 outside [0, 1]" in str(err.value)
    assert "prices_daily.csv:10: price for unknown market '0xdeadbeef'" in str(err.value)


def test_a_failed_import_writes_nothing(tmp_path):
    lines, prices = copy_source(tmp_path)
    lines[0] = "not json\n"
    store = tmp_path / "store"
    with pytest.raises(InputFormatError):
        write_version(store, import_forecastbench(*write(tmp_path, lines, prices)))
    assert not store.exists()


def test_a_write_that_dies_half_way_leaves_no_version_and_keeps_latest(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    store = tmp_path / "store"
    bundle = import_forecastbench(SOURCE / "markets.jsonl", SOURCE / "prices_daily.csv")
    first = write_version(store, bundle)
    calls = []
    real = pq.write_table

    def dying(*args, **kwargs):  # fault injection in the third-party writer: the disk fills up
        calls.append(1)
        if len(calls) == 2:
            raise OSError("No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", dying)
    smaller = import_forecastbench(SOURCE / "markets.jsonl", None)
    with pytest.raises(OSError):
        write_version(store, smaller)
    assert [p.name for p in (store / "versions").iterdir()] == [first]
    assert (store / "LATEST").read_text().strip() == first


def test_store_round_trips_and_version_ids_follow_content(tmp_path):
    bundle = import_forecastbench(SOURCE / "markets.jsonl", SOURCE / "prices_daily.csv")
    first = write_version(tmp_path / "a", bundle)
    assert write_version(tmp_path / "b", bundle) == first
    assert open_version(tmp_path / "a").bundle.content_hash() == bundle.content_hash()


def test_one_changed_byte_in_a_store_file_is_detected(tmp_path):
    shutil.copytree(SAMPLE_MARKETS, tmp_path / "s")
    version = open_version(tmp_path / "s")
    target = version.path / "prices.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    with pytest.raises(ArchiveIntegrityError, match="changed: prices.parquet"):
        open_version(tmp_path / "s")


def test_the_shipped_sample_store_is_exactly_what_its_shipped_source_imports_to():
    bundle = import_forecastbench(SOURCE / "markets.jsonl", SOURCE / "prices_daily.csv")
    assert open_version(SAMPLE_MARKETS).bundle.content_hash() == bundle.content_hash()


def test_staging_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    leftover = tmp_path / "store" / "versions" / f".staging-{dead}-abc"
    leftover.mkdir(parents=True)
    (leftover / "markets.parquet").write_bytes(b"half")
    write_version(tmp_path / "store", import_forecastbench(SOURCE / "markets.jsonl", None))
    assert not leftover.exists()
    assert [
        p.name for p in (tmp_path / "store" / "versions").iterdir() if p.name.startswith(".")
    ] == []
