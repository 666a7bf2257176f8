"""No credential is stored or printed anywhere: a test plants one in an endpoint URL, one in the
key variable a forecaster names (key_env) and one elsewhere in the environment, runs sweeps
(CLI and service) against a loopback fake model, then greps every file they wrote — run
database, response cache, exports, report, logs — and everything they printed."""

from __future__ import annotations

from pathlib import Path

from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import SAMPLE_MARKETS, run_cli

URL_USER, URL_PASSWORD = "planted-user-5150", "planted-pass-7777"
KEY = "sk-planted-key-var-4242"
OTHER = "sk-planted-environment-9999"
SECRETS = (URL_USER, URL_PASSWORD, KEY, OTHER)
ENV = {"PLANTED_KEY": KEY, "OPENAI_API_KEY": OTHER, "HINDCAST_TOKEN": OTHER}

SERVICE = """
[service]
db = "runs/hindcast.db"
log = "runs/schedule.log"
runs_out = "runs/exports"

[[sweeps]]
name = "planted"
[sweeps.markets]
store = "{store}"
ids = ["0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc"]
[sweeps.cutoffs]
fractions = [0.5]
[[sweeps.forecasters]]
spec = "{spec}"

[[leaderboards]]
sweep = "planted"
out = "leaderboards"
formats = ["csv", "json", "md", "html"]
"""


def sweep(out: Path, spec: str):
    return run_cli(
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "3",
        "--fractions",
        "0.5",
        "-f",
        spec,
        "--out",
        str(out),
        "--db",
        str(out / "hindcast.db"),
        env=ENV,
    )


def test_no_planted_credential_reaches_any_file_or_output(tmp_path):
    fake = FakeChatModel(default=answer('{"probability": 0.35}'), require_key=KEY)
    printed = []
    with fake.serve() as url:
        with_userinfo = url.replace("http://", f"http://{URL_USER}:{URL_PASSWORD}@")
        refused = sweep(tmp_path / "cli", f"zero-shot:model=openai-compatible:{with_userinfo}#m")
        assert refused.returncode == 1 and "key_env" in refused.stderr, refused.stderr
        keyed = sweep(
            tmp_path / "cli", f"zero-shot:model=openai-compatible:{url}#m,key_env=PLANTED_KEY"
        )
        assert keyed.returncode == 0, keyed.stderr
        shown = run_cli(
            "runs",
            "show",
            "--db",
            str(tmp_path / "cli" / "hindcast.db"),
            "--json",
            next(p.name for p in (tmp_path / "cli").iterdir() if p.name.startswith("r-")),
        )
        service = tmp_path / "service"
        service.mkdir()
        config = service / "hindcast.toml"
        config.write_text(
            SERVICE.format(
                store=SAMPLE_MARKETS,
                spec=f"zero-shot:model=openai-compatible:{url}#m,key_env=PLANTED_KEY",
            )
        )
        once = run_cli(
            "schedule", "once", "--config", str(config), "--now", "2026-11-30T00:00:00Z", env=ENV
        )
        assert once.returncode == 0, once.stdout + once.stderr
        config.write_text(
            SERVICE.format(
                store=SAMPLE_MARKETS, spec=f"zero-shot:model=openai-compatible:{with_userinfo}#m"
            )
        )
        bad = run_cli(
            "schedule", "once", "--config", str(config), "--now", "2026-11-30T00:00:00Z", env=ENV
        )
        assert bad.returncode == 1
        config.unlink()  # the user's own config holds what they wrote; everything hindcast wrote is checked
        printed += [
            refused.stdout,
            refused.stderr,
            keyed.stdout,
            keyed.stderr,
            shown.stdout,
            shown.stderr,
            once.stdout,
            once.stderr,
            bad.stdout,
            bad.stderr,
        ]
    assert len(fake.requests) == 4 and {h.get("authorization") for h in fake.headers} == {
        f"Bearer {KEY}"
    }
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in written}
    assert {".db", ".html", ".csv", ".json", ".md", ".log"} <= kinds, kinds
    assert any(p.name == "responses.db" for p in written)
    for path in written:
        data = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, (secret, path)
    for text in printed:
        for secret in SECRETS:
            assert secret not in text, (secret, text)
