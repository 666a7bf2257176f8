"""A run records where its archive lived, so a later export opens that snapshot again for the
report's viewer without being told; a folder that no longer holds it is skipped (documents by
id), while a folder given explicitly must hold it."""

from types import SimpleNamespace

import pytest

from hindcast.archive.snapshot import latest
from hindcast.errors import ArchiveIntegrityError
from hindcast.replay import recorded_snapshots
from hindcast.runs import identity_of, manifest, manifest_form
from tests.helpers import ROOT

SAMPLE = ROOT / "archive" / "sample"


def _scored(root, snapshot):
    identity = identity_of({"store_version": "m-x", "snapshot": snapshot})
    built = manifest.build(identity, ROOT / "markets" / "sample", {}, root)
    return SimpleNamespace(manifest=built)  # as a scored run holds it


def test_the_manifest_records_the_archive_folder_and_snapshot():
    built = manifest_form(_scored(SAMPLE, latest(SAMPLE)).manifest)
    assert built["archive"] == {"snapshot": latest(SAMPLE), "root": str(SAMPLE.resolve())}
    assert manifest_form(_scored(None, None).manifest)["archive"] is None


def test_an_export_opens_the_recorded_snapshot_and_skips_a_moved_one(tmp_path):
    sid = latest(SAMPLE)
    opened = recorded_snapshots([_scored(SAMPLE, sid), _scored(tmp_path / "moved", sid)], None)
    assert [s.id for s in opened] == [sid]


def test_a_folder_given_explicitly_must_hold_the_snapshot(tmp_path):
    with pytest.raises(ArchiveIntegrityError, match="has no snapshot"):
        recorded_snapshots([_scored(SAMPLE, latest(SAMPLE))], tmp_path)
