"""`vector_search` of a sweep (issue 18): exact by default and then no part of the run id;
approx is part of what a run is, refused before any forecast on an index without an
approximate index, and its recall measured at build time is recorded in the run's manifest."""

from __future__ import annotations

import json

import pytest

from hindcast import api, replay
from hindcast.errors import ConfigError, HindcastError
from hindcast.llm.fake import answer
from hindcast.replay.identity import run_id, run_identity
from hindcast.replay.spec import spec_from_mapping
from hindcast.runs import identity_form, retrievals_form
from tests.helpers import SAMPLE_MARKETS, run_cli

BASE = {"store": str(SAMPLE_MARKETS), "forecasters": ["constant:p=0.3"], "fractions": [0.5]}


def test_exact_is_the_default_and_leaves_the_run_id_alone():
    plain = run_identity(spec_from_mapping(BASE), "v1", ["a"], "s-1")
    exact = run_identity(spec_from_mapping(BASE | {"vector_search": "exact"}), "v1", ["a"], "s-1")
    approx = run_identity(spec_from_mapping(BASE | {"vector_search": "approx"}), "v1", ["a"], "s-1")
    probed = run_identity(
        spec_from_mapping(BASE | {"vector_search": "approx", "nprobe": 7}), "v1", ["a"], "s-1"
    )
    assert plain == exact and "vector_search" not in identity_form(exact)
    assert len({run_id(plain), run_id(approx), run_id(probed)}) == 3


@pytest.mark.parametrize(
    "values, named",
    [
        ({"vector_search": "fuzzy"}, "vector_search (--vector-search) must be exact or approx"),
        ({"nprobe": 0, "vector_search": "approx"}, "nprobe (--nprobe) must be an integer ≥ 1"),
        ({"nprobe": 8}, "nprobe applies only to vector_search approx"),
        ({"ray": "bad address!", "archive": "a"}, "ray (--ray): Ray address 'bad address!'"),
        ({"ray": "auto"}, "ray applies only with an archive"),
    ],
)
def test_bad_values_are_one_line_naming_the_setting(values, named):
    with pytest.raises(ConfigError) as caught:
        spec_from_mapping(BASE | values)
    assert named in str(caught.value) and "\n" not in str(caught.value)


def test_toml_archive_table_takes_the_mode(tmp_path):
    from hindcast.replay.layout import load_toml

    path = tmp_path / "sweep.toml"
    path.write_text(
        '[archive]\nroot = "a"\nvector_search = "approx"\nnprobe = 12\nray = "auto"\n',
        encoding="utf-8",
    )
    flat = load_toml(path)
    assert (flat["vector_search"], flat["nprobe"], flat["ray"]) == ("approx", 12, "auto")


def test_where_the_archive_is_searched_is_not_part_of_the_run_id():
    alone = run_identity(spec_from_mapping(BASE | {"archive": "a"}), "v1", ["a"], "s-1")
    on_ray = run_identity(
        spec_from_mapping(BASE | {"archive": "a", "ray": "10.0.0.1:6379"}), "v1", ["a"], "s-1"
    )
    assert alone == on_ray


@pytest.fixture(scope="module")
def hash_archive(tmp_path_factory):
    """A real archive (shipped headlines of every month, a few hundred each, hash embedder) without
    an approximate index."""
    from tests.integration.archive_support import real_headlines

    folder = tmp_path_factory.mktemp("vector-search")
    months = [
        "2025-07",
        "2025-08",
        "2025-09",
        "2025-10",
        "2025-11",
        "2025-12",
        "2026-01",
        "2026-02",
        "2026-03",
    ]
    inputs = real_headlines(folder, months, ("fed",), per_month=200)
    archive = folder / "archive"
    api.ingest(inputs, "news", "headlines", archive)
    api.embed(archive, api.freeze(archive), "hash")
    return archive


def _spec(archive, **extra):
    return spec_from_mapping(
        {
            **BASE,
            "archive": str(archive),
            "offsets": ["10d"],
            "fractions": [],
            "limit": 2,
            "forecasters": ["constant:p=0.3"],
            **extra,
        }
    )


def test_approx_on_an_index_without_an_approximate_index_is_refused_before_anything(hash_archive):
    before = sorted(p.relative_to(hash_archive) for p in hash_archive.rglob("*"))
    with pytest.raises(HindcastError, match=r"archive embed --approx"):
        replay.prepare(_spec(hash_archive, vector_search="approx"))
    assert sorted(p.relative_to(hash_archive) for p in hash_archive.rglob("*")) == before


def test_the_cli_refuses_it_in_one_line(hash_archive, tmp_path):
    done = run_cli(
        "sweep",
        "--archive",
        str(hash_archive),
        "--forecaster",
        "constant:p=0.3",
        "--offsets",
        "10d",
        "--limit",
        "2",
        "--vector-search",
        "approx",
        "--db",
        f"sqlite:///{tmp_path / 'h.db'}",
        "--out",
        str(tmp_path / "runs"),
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "archive embed --approx" in done.stderr
    assert not (tmp_path / "h.db").exists()


MODEL = "openai-compatible:http://fake.invalid/v1#searcher"
AGENT = f"retrieval-agent:model={MODEL},rounds=1,mode=vector"


def searches_fed(body):
    """Seed: search for the Fed; reflect: no follow-up; final: 0.5."""
    props = (
        body.get("response_format", {})
        .get("json_schema", {})
        .get("schema", {})
        .get("properties", {})
    )
    if "summary" in props:
        return answer(json.dumps({"summary": "read", "queries": []}))
    if "queries" in props:
        return answer(json.dumps({"queries": ["Fed rate cut decision"]}))
    return answer(json.dumps({"probability": 0.5}))


def test_an_approx_run_searches_approximately_and_records_the_measured_recall(
    hash_archive, tmp_path
):
    """A retrieval agent searching vectors in a sweep: the approx run reads documents (all from
    before t0), and its manifest records the recall measured when the approximate index was built;
    the exact run over the same inputs is another run."""
    import httpx

    from hindcast.archive import ann_index
    from hindcast.archive.index import open_index
    from hindcast.archive.snapshot import open_snapshot
    from hindcast.leaderboard.viewer import stored_details
    from hindcast.llm.fake import FakeChatModel
    from hindcast.llm.models import Models
    from hindcast.runs.store import RunStore
    from tests.helpers import at

    info = ann_index.build(open_index(open_snapshot(hash_archive)).root)
    store = RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    fake = FakeChatModel(default=searches_fed)
    ids = {}
    for mode in ("approx", "exact"):
        spec = _spec(
            hash_archive,
            forecasters=[AGENT],
            **({"vector_search": "approx"} if mode == "approx" else {}),
        )
        with Models(http=lambda: httpx.AsyncClient(transport=fake.transport())) as models:
            ids[mode] = api.sweep(
                spec,
                runs=store,
                out=tmp_path / "out",
                now=at("2026-11-30T00:00:00"),
                models=models,
            ).run_id
    manifest = json.loads(store.run(ids["approx"]).manifest_json)
    recorded = manifest["identity"]["index"]["vector_search"]
    assert recorded["mode"] == "approx" and recorded["recall@10"] == info["recall@10"]
    assert (
        "vector_search"
        not in json.loads(store.run(ids["exact"]).manifest_json)["identity"]["index"]
    )
    assert ids["approx"] != ids["exact"]
    read = [retrievals_form(d.retrievals) for d in stored_details(store, ids["approx"]).values()]
    assert any(c.get("ids") for calls in read for c in calls)
    store.close()
