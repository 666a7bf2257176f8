"""README command 1's run is the same run on every CPU: `hindcast sweep` with nothing given builds
the shipped sample's index from the vectors shipped with it (MiniLM bf16, whatever the CPU makes
the default; nothing embedded, the model not loaded) and plans the run the README prints. .ci/run
runs this again under AVX2 emulation, where the default embedder is fp32. An index that truly
differs (built with the other precision) is another run."""

from __future__ import annotations

import json
import shutil

import pytest

from hindcast import replay
from hindcast.archive import embed
from hindcast.cli.sweep import _spec
from tests.helpers import SAMPLE_ARCHIVE, SAMPLE_MARKETS

README_RUN = "r-d2100c35549b"  # README.md, "How to read the output"
SAMPLE_INDEX = {"embedder": "all-MiniLM-L6-v2-bf16", "dims": 384, "embedder_dtype": "bfloat16"}


@pytest.fixture()
def checkout(tmp_path, monkeypatch):
    """A folder holding copies of the shipped samples (no index), as the working directory; the
    MiniLM model cannot be loaded in this process."""

    def no_model():
        raise AssertionError("the model was loaded")

    shutil.copytree(SAMPLE_MARKETS, tmp_path / "markets" / "sample")
    shutil.copytree(
        SAMPLE_ARCHIVE, tmp_path / "archive" / "sample", ignore=shutil.ignore_patterns("index")
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(embed, "MINILM", embed.SharedModel(no_model))
    return tmp_path


@pytest.mark.cpu_default
def test_the_default_run_is_the_readme_run_on_every_cpu(checkout):
    plan = replay.prepare(_spec(None, {}))  # the sample defaults, the index built on the way
    assert plan.identity.index == SAMPLE_INDEX
    assert plan.run_id == README_RUN
    assert len(plan.markets) == 57


@pytest.mark.cpu_default
def test_an_index_of_the_other_precision_is_another_run(tmp_path):
    """The same snapshot indexed in fp32 and in bf16 (as two kinds of CPU build it by default): the
    vectors truly differ, and so do the identities and run ids."""
    from hindcast.archive import build_index, open_snapshot
    from hindcast.archive.snapshot import build_snapshot

    inbox = tmp_path / "news.jsonl"
    inbox.write_text(
        "".join(
            json.dumps({"id": f"h{i}", "created_utc": 1_756_684_800 + 86_400 * i, "title": t})
            + "\n"
            for i, t in enumerate(["Fed cuts rates", "Storm hits the coast", "Polls tighten"])
        ),
        encoding="utf-8",
    )
    runs = {}
    for key in ("minilm-fp32", "minilm-bf16"):
        archive = tmp_path / key
        snapshot = open_snapshot(archive, build_snapshot([inbox], "news", "headlines", archive))
        build_index(snapshot, key)
        spec = replay.spec_from_mapping(
            {"store": str(SAMPLE_MARKETS), "archive": str(archive), "forecasters": ["market"]}
        )
        runs[key] = replay.prepare(spec)
    fp32, bf16 = runs["minilm-fp32"], runs["minilm-bf16"]
    assert fp32.identity.snapshot == bf16.identity.snapshot
    assert (fp32.identity.index["embedder_dtype"], bf16.identity.index["embedder_dtype"]) == (
        "float32",
        "bfloat16",
    )
    assert fp32.run_id != bf16.run_id
