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


# ---- bots (issue 36): what a command: bot or an http: service hands back -------------------------
BOT_SECRETS = {
    "DATABASE_URL": "postgresql://runs:planted-db-pass-3131@127.0.0.1:5432/runs",
    "MY_AUTH": "planted-auth-token-8282",
    "OPENAI_API_KEY": "sk-planted-openai-6464",
    "PASSED_THING": "planted-passed-value-5353",
    "HTTP_BOT_KEY": "planted-http-key-7171",
}
LEAKED = ("planted-db-pass-3131", *list(BOT_SECRETS.values())[1:])

GREEDY_BOT = r"""
import asyncio, json, os, sys
json.load(sys.stdin)
parent = open(f"/proc/{os.getppid()}/environ", "rb").read().decode("utf-8", "replace")
everything = parent.replace("\0", "\n") + json.dumps(dict(os.environ))

async def tools():
    from mcp import Client
    async with Client(os.environ["HINDCAST_MCP_URL"]) as client:
        await client.call_tool("search", {"query": "q " + os.environ["PASSED_THING"], "k": 2})
        await client.call_tool("read", {"doc_id": os.environ["PASSED_THING"]})

asyncio.run(tools())
print(everything, file=sys.stderr)
usage = {"model": os.environ["PASSED_THING"], "prompt_tokens": 1, "completion_tokens": 1}
print(json.dumps({"probability": 0.5, "rationale": everything, "usage": usage}))
"""


def echoing_service():
    """An http: service answering with the Authorization header it was sent, everywhere."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Echo(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 — the standard library's name
            self.rfile.read(int(self.headers["Content-Length"]))
            auth = str(self.headers.get("Authorization"))
            body = {"probability": 0.6, "rationale": auth, "usage": {"model": auth}}
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_nothing_a_bot_or_service_hands_back_reaches_any_file_or_output(tmp_path):
    import shlex
    import sqlite3
    import sys

    bot = tmp_path / "greedy_bot.py"
    bot.write_text(GREEDY_BOT)
    command = f"command:cmd={shlex.quote(sys.executable)} {bot},pass_env=PASSED_THING"
    server = echoing_service()
    service = f"http:url=http://127.0.0.1:{server.server_address[1]}/f,key_env=HTTP_BOT_KEY"
    out, db = tmp_path / "out", tmp_path / "out" / "hindcast.db"
    try:
        swept = run_cli(
            "sweep",
            *("--store", str(SAMPLE_MARKETS), "--limit", "2", "--fractions", "0.5"),
            *("-f", command, "-f", service, "--out", str(out), "--db", str(db)),
            env=BOT_SECRETS,
        )
    finally:
        server.shutdown()
    assert swept.returncode == 0, swept.stderr
    run_id = next(p.name for p in out.iterdir() if p.name.startswith("r-"))
    shown = run_cli("runs", "show", "--db", str(db), "--json", run_id)
    board = run_cli("leaderboard", run_id, "--db", str(db), "--out", str(tmp_path / "board"))
    assert shown.returncode == 0 and board.returncode == 0, shown.stderr + board.stderr
    dump = "\n".join(sqlite3.connect(db).iterdump())
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != bot]
    assert {".db", ".csv", ".md", ".html"} <= {p.suffix for p in written}
    printed = (swept.stdout, swept.stderr, shown.stdout, shown.stderr, board.stdout, board.stderr)
    for secret in LEAKED:
        assert secret not in dump, secret
        for path in written:
            assert secret.encode() not in path.read_bytes(), (secret, path)
        for text in printed:
            assert secret not in text, (secret, text)
    assert "q ***" in dump and '"op": "refused"' in dump  # the bot's calls are there, masked
