"""Embedders register like forecasters; an index searches with the embedder it was built with;
loading the shipped model prints nothing on stderr."""

from __future__ import annotations

import json
import re
import textwrap
import zlib
from datetime import datetime, timezone

import numpy as np
import pytest

from hindcast.archive import embed
from hindcast.archive.embed import (
    MiniLMBf16Embedder,
    MiniLMEmbedder,
    UnknownEmbedderError,
    get_embedder,
    register,
)
from hindcast.archive.index import build_index, open_index
from hindcast.archive.retriever import TimeBoundRetriever
from hindcast.archive.snapshot import build_snapshot, open_snapshot
from tests.helpers import run_cli

T0 = datetime(2025, 3, 20, tzinfo=timezone.utc)
TITLES = [
    "Fed cuts interest rates again",
    "Central bank holds rates steady",
    "Volcano erupts in Iceland",
    "Election polls tighten in Ohio",
    "Interest rate futures rally",
    "New vaccine approved by regulator",
    "Stocks fall as rates rise",
    "Storm hits the Gulf coast",
    "Senate passes budget bill",
    "Inflation cools, rate cut odds rise",
    "Late headline after t0 about rates",
]


class TrigramEmbedder:
    """A custom embedder defined here: hashed character trigrams (no relation to `hash-N`)."""

    dims = 64

    def __init__(self, name: str = "trigrams-test"):
        self.name = name

    def embed(self, texts):
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()} "
            for i in range(len(padded) - 2):
                out[row, zlib.crc32(padded[i : i + 3].encode()) % self.dims] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def _created(i: int) -> int:
    return int(
        datetime(2025, 3, 1 + 2 * i, tzinfo=timezone.utc).timestamp()
    )  # the last one is after T0


@pytest.fixture()
def tiny(tmp_path):
    """A one-month snapshot of eleven headlines, the last created after T0."""
    rows = [
        {
            "id": f"h{i}",
            "created_utc": _created(i),
            "title": t,
            "source": "test",
            "kind": "headline",
        }
        for i, t in enumerate(TITLES)
    ]
    inbox = tmp_path / "news_2025-03.jsonl"
    inbox.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    archive = tmp_path / "archive"
    return open_snapshot(archive, build_snapshot([inbox], "headlines", "headlines", archive))


def test_a_custom_embedder_instance_indexes_and_searches(tiny):
    emb = TrigramEmbedder()
    info = build_index(tiny, emb)
    assert (info["embedder"], info["dims"], info["embedder_dtype"]) == (
        "trigrams-test",
        64,
        "float32",
    )
    query = "rate cut interest"
    hits = TimeBoundRetriever(tiny, T0).search(
        query, k=5, mode="vector"
    )  # resolves the recorded name
    scores = emb.embed(TITLES[:-1]) @ emb.embed([query])[0]
    expected = [f"h{i}" for i in np.argsort(-scores, kind="stable")[:5]]
    assert [h.doc.id for h in hits] == expected
    np.testing.assert_allclose([h.score for h in hits], np.sort(scores)[::-1][:5], rtol=1e-5)


def test_an_unregistered_recorded_name_is_one_clear_line(tiny):
    """A new process without the plugin: the CLI search fails in one line saying how to fix it."""
    build_index(tiny, TrigramEmbedder("trigrams-not-installed"))
    out = run_cli(
        "archive",
        "search",
        "--archive",
        str(tiny.archive),
        "--query",
        "rates",
        "--t0",
        "2025-03-20T00:00:00Z",
    )
    assert out.returncode == 1
    assert out.stderr == (
        "hindcast: error: index built with embedder 'trigrams-not-installed'; register it with "
        "hindcast.archive.embed.register('trigrams-not-installed', factory) or install its plugin\n"
    )


def test_register_and_resolve_keys_and_recorded_names(monkeypatch):
    monkeypatch.setitem(embed._FACTORIES, "mine", lambda: TrigramEmbedder("mine"))
    assert get_embedder("mine").name == "mine" and "mine" in embed.names()
    register("mine", lambda: TrigramEmbedder("mine-2"))
    assert get_embedder("mine").name == "mine-2"
    assert (
        get_embedder("minilm-fp32").name
        == get_embedder("all-MiniLM-L6-v2").name
        == "all-MiniLM-L6-v2"
    )
    assert get_embedder("all-MiniLM-L6-v2-bf16").dtype == "bfloat16"
    assert get_embedder("hash").name == "hash-384" and get_embedder("hash-64").dims == 64
    with pytest.raises(UnknownEmbedderError, match="unknown embedder 'nope'"):
        get_embedder("nope")


def test_an_entry_point_plugin_is_found(tmp_path, monkeypatch):
    (tmp_path / "toy_embedder_plugin.py").write_text(
        textwrap.dedent("""
        from hindcast.archive.embed import HashEmbedder

        def factory():
            emb = HashEmbedder(32)
            emb.name = "toy-plugin"
            return emb
    """),
        encoding="utf-8",
    )
    dist = tmp_path / "toy_embedder_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-embedder-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[hindcast.embedders]\ntoy-plugin = toy_embedder_plugin:factory\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(embed, "_FACTORIES", embed._FACTORIES.copy())
    assert get_embedder("toy-plugin").dims == 32


def test_an_instance_does_not_replace_a_builtin(tiny):
    class Odd(TrigramEmbedder):
        pass

    build_index(
        tiny, Odd("hash-64")
    )  # the name is a built-in: it keeps resolving to HashEmbedder(64)
    assert type(get_embedder("hash-64")).__name__ == "HashEmbedder"


def test_bf16_minilm_is_close_to_fp32_and_recorded_as_such():
    texts = ["The Fed cut interest rates", "Central bank lowers rates", "A cat sleeps on the sofa"]
    fp32, bf16 = MiniLMEmbedder().embed(texts), MiniLMBf16Embedder().embed(texts)
    assert bf16.dtype == np.float32 and bf16.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(bf16, axis=1), 1.0, rtol=1e-6)
    assert (fp32 * bf16).sum(axis=1).min() > 0.999
    assert MiniLMBf16Embedder.name != MiniLMEmbedder.name


@pytest.mark.cpu_default
def test_embedding_prints_nothing_but_our_progress(tiny, capfd, monkeypatch, default_embedder):
    """The model is loaded afresh inside build_index: no "Loading weights" bar, no warning."""
    import sys

    monkeypatch.setattr(embed, "MINILM", embed.SharedModel(embed._load_minilm))
    capfd.readouterr()
    info = build_index(
        tiny,
        default_embedder,
        on_progress=lambda done, total: print(f"progress {done}/{total}", file=sys.stderr),
    )
    err = capfd.readouterr().err
    assert err and all(re.fullmatch(r"progress \d+/11", line) for line in err.splitlines()), err
    assert info["embedder"] == get_embedder(default_embedder).name


@pytest.mark.cpu_default
def test_with_two_indexes_and_none_named_the_cpu_default_is_searched(tiny):
    """Both precisions built (whatever this CPU is): with none named, the one `minilm` is here."""
    fp32, bf16 = build_index(tiny, "minilm-fp32"), build_index(tiny, "minilm-bf16")
    assert {fp32["embedder"], bf16["embedder"]} == {MiniLMEmbedder.name, MiniLMBf16Embedder.name}
    reader = open_index(tiny)
    assert reader.info["embedder"] == reader.embedder().name == get_embedder("minilm").name


@pytest.mark.cpu_default
def test_archive_embed_cli_keeps_stderr_empty(tiny, default_embedder):
    out = run_cli(
        "archive",
        "embed",
        "--archive",
        str(tiny.archive),
        *(() if default_embedder == "minilm" else ("--embedder", default_embedder)),
        env={"HF_HUB_OFFLINE": None},
    )
    assert out.returncode == 0 and out.stderr.strip() == "", (
        out.stderr
    )  # (the CLI's own progress ends in a newline)
    assert get_embedder(default_embedder).name in out.stdout
