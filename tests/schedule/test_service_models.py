"""The service calls models exactly like `hindcast sweep`: keys from its environment (named by
`key_env=` in the config), responses cached persistently beside the run database (in it when
it is PostgreSQL). Subprocess tests of `hindcast schedule once` against a loopback fake that
requires a key, with the service's database on each backend (`service_db`)."""

from __future__ import annotations

from pathlib import Path

from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import SAMPLE_MARKETS, run_cli
from tests.schedule.conftest import SERVICE_HEAD, on_service_db, query, sweep_table

MARKETS = [
    "0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc",
    "0x0a7e45f69a8d2c45fc008fa9d8242efa13264ba540a782d82f613d673f1d1205",
]
KEY = "sk-service-key-0123"


def config(folder: Path, url: str, names: list[str]) -> Path:
    spec = f"zero-shot:model=openai-compatible:{url}#m,key_env=SVC_KEY"
    text = on_service_db(SERVICE_HEAD) + "".join(
        sweep_table(name, spec, SAMPLE_MARKETS, MARKETS, {"seed": seed})
        for seed, name in enumerate(names)
    )  # another seed: another run, same requests
    path = folder / "hindcast.toml"
    path.write_text(text, encoding="utf-8")
    return path


def once(path: Path, env: dict):
    return run_cli(
        "schedule",
        "once",
        "--config",
        str(path),
        "--now",
        "2026-11-30T00:00:00Z",
        env=env,
        timeout=300,
    )


def forecasts(folder: Path) -> list[tuple]:
    return query(folder, "SELECT forecaster, market_id, probability, error FROM forecasts")


def test_configured_sweeps_use_the_key_and_the_persistent_cache(tmp_path, service_db):
    fake = FakeChatModel(default=answer('{"probability": 0.7}'), require_key=KEY)
    with fake.serve() as url:
        first = once(config(tmp_path, url, ["a"]), {"SVC_KEY": KEY})
        assert first.returncode == 0 and "sweeps: ok" in first.stdout, first.stdout + first.stderr
        rows = forecasts(tmp_path)
        assert len(rows) == len(MARKETS) and all(p == 0.7 and e is None for _, _, p, e in rows), (
            rows
        )
        assert len(fake.requests) == len(MARKETS)
        assert all(h["authorization"] == f"Bearer {KEY}" for h in fake.headers)
        if service_db.startswith("postgresql"):  # the cache is a table of the run database
            assert query(tmp_path, "SELECT COUNT(*) FROM responses") == [(len(MARKETS),)]
        else:
            assert (tmp_path / "runs" / "responses.db").is_file()

        second = once(
            config(tmp_path, url, ["a", "b"]), {"SVC_KEY": KEY}
        )  # a new sweep, identical requests
        assert second.returncode == 0, second.stdout + second.stderr
        assert len(forecasts(tmp_path)) == 2 * len(MARKETS)
        assert len(fake.requests) == len(MARKETS)  # 0 model calls: replayed from responses.db
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path


def test_without_its_key_a_configured_sweep_stores_nothing_and_is_asked_again(tmp_path, service_db):
    fake = FakeChatModel(default=answer('{"probability": 0.7}'), require_key=KEY)
    with fake.serve() as url:
        path = config(tmp_path, url, ["a"])
        failed = once(path, {"SVC_KEY": None})
        assert failed.returncode == 4 and "sweeps: stopped" in failed.stdout, (
            failed.stdout + failed.stderr
        )
        assert forecasts(tmp_path) == [] and fake.requests == []
        again = once(path, {"SVC_KEY": KEY})
    assert again.returncode == 0, again.stdout + again.stderr
    assert [p for _, _, p, _ in forecasts(tmp_path)] == [0.7] * len(MARKETS)


def test_a_sweep_with_retry_failed_asks_again_once_for_each_failure(tmp_path, service_db):
    from tests.schedule.conftest import tick

    replies = iter(["no idea", "no idea", '{"probability": 0.55}', "no idea"])
    fake = FakeChatModel(default=lambda body: next(replies))
    with fake.serve() as url:
        path = config(tmp_path, url, ["a"])
        path.write_text(
            path.read_text()
            .replace("seed = 0", "seed = 0\nretry_failed = true")
            .replace(",key_env=SVC_KEY", ",repairs=0")
        )
        for n in range(3):
            statuses, _ = tick(path, at_now())
            assert statuses == {"sweeps": "ok"}, statuses
        attempts = query(
            tmp_path, "SELECT market_id, attempt, probability FROM forecasts ORDER BY 1, 2"
        )
    assert (
        len(fake.requests) == 4
    )  # two failures, each asked again once; nothing asked a third time
    assert sorted((a, p is not None) for _, a, p in attempts) == [
        (0, False),
        (0, False),
        (1, False),
        (1, True),
    ]


def at_now():
    from tests.helpers import at

    return at("2026-11-30T00:00:00")
