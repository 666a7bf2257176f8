"""Outside programs for the `command:` tests: one Python script whose behaviour the test names.

`python bot.py MODE [ARG]`; it always appends its stdin (the question JSON) as one line to
$BOT_LOG when that is set, then: `answer P` prints {"probability": P}; `exit1`; `sleep S` (sleeps,
then answers); `garbage`; `sigkill` (kills itself); `tempfail` (exit 75); `outside P` (1.5 etc.);
`tools` (calls every MCP tool through HINDCAST_MCP_URL with the official SDK, prints what they
answered in "rationale"); `stdio-tools` (the same through HINDCAST_MCP_COMMAND); `flaky` (sleeps
past any timeout for markets listed in $BOT_SLOW unless $BOT_FIXED exists, exits 1 for those in
$BOT_FAIL, answers 0.4 otherwise); `tokens` (answers with reported usage); `env FILE` (writes
and hands back its whole environment); `echo-secret` (hands back $MY_BOT_API_KEY in its answer,
stderr, usage and tool arguments); `orphan FILE` (answers, leaving a child holding stdout);
`setsid FILE` (hangs, its grandchild in a new session holding stdout); `pid FILE` (hangs)."""

BOT = r"""
import asyncio, json, os, shlex, signal, sys, time
question = json.loads(sys.stdin.read())
if os.environ.get("BOT_LOG"):
    with open(os.environ["BOT_LOG"], "a") as f:
        f.write(json.dumps(question, sort_keys=True) + "\n")
mode, arg = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")

def answer(p, **more):
    print(json.dumps({"probability": p, **more}))

async def every_tool(client):
    calls = [("question", {}), ("price_history", {"t0": "2030-01-01T00:00:00Z"}), ("resolved_before", {}),
             ("search", {"query": "Fed rate cuts 2025", "k": 5, "mode": "text", "until": "2030-01-01"}),
             ("read", {"doc_id": "pre-1"}), ("read", {"doc_id": "at-t0"}), ("thread", {"submission_id": "pre-1"})]
    out = []
    for name, args in calls:
        r = await client.call_tool(name, args)
        out.append([name, r.is_error, r.structured_content])
    return out

async def tools(url=None, command=None):
    from mcp import Client, StdioServerParameters
    target = url or StdioServerParameters(command=shlex.split(command)[0], args=shlex.split(command)[1:],
                                          env=dict(os.environ))
    async with Client(target) as client:
        return await every_tool(client)

if mode == "answer":
    answer(float(arg))
elif mode == "leaky-key":
    print("using key " + os.environ["MY_BOT_API_KEY"], file=sys.stderr)
    print("key " + os.environ["MY_BOT_API_KEY"]); sys.exit(1)
elif mode == "exit1":
    print("my model said no", file=sys.stderr); sys.exit(1)
elif mode == "sleep":
    time.sleep(float(arg)); answer(0.5)
elif mode == "garbage":
    print("I think it is likely, maybe 70%?")
elif mode == "sigkill":
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "tempfail":
    print("upstream model unreachable with key " + os.environ.get("MY_BOT_API_KEY", "-"), file=sys.stderr); sys.exit(75)
elif mode == "outside":
    answer(float(arg))
elif mode == "tools":
    answer(0.5, rationale=json.dumps(asyncio.run(tools(url=os.environ["HINDCAST_MCP_URL"]))))
elif mode == "stdio-tools":
    answer(0.5, rationale=json.dumps(asyncio.run(tools(command=os.environ["HINDCAST_MCP_COMMAND"]))))
elif mode == "tokens":
    answer(0.6, usage={"prompt_tokens": 1000, "completion_tokens": 50, "model": "bot-model"})
elif mode == "env":  # hands back every variable it was given, everywhere it can
    given = dict(os.environ)
    with open(arg, "w") as f:
        json.dump(given, f)
    print(json.dumps(given), file=sys.stderr)
    answer(0.5, rationale=json.dumps(given), usage={"model": json.dumps(given)})
elif mode == "echo-secret":  # a passed variable in the answer, stderr, usage and a tool argument
    secret = os.environ["MY_BOT_API_KEY"]
    async def search():
        from mcp import Client
        async with Client(os.environ["HINDCAST_MCP_URL"]) as client:
            await client.call_tool("search", {"query": "rates " + secret, "k": 2, "mode": "text"})
            await client.call_tool("read", {"doc_id": secret})
            await client.call_tool("search", {"query": secret, "k": True})
    asyncio.run(search())
    print("stderr " + secret, file=sys.stderr)
    answer(0.5, rationale="rationale " + secret, usage={"model": "m-" + secret, "prompt_tokens": 1})
elif mode == "orphan":  # answers and exits 0, leaving a child that holds stdout open
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    with open(arg, "w") as f:
        f.write(str(child.pid))
    answer(0.7)
elif mode == "setsid":  # a grandchild leaves the session holding stdout; the bot itself hangs
    import subprocess
    code = "import time; time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    with open(arg, "w") as f:
        f.write(str(child.pid))
    time.sleep(60)
elif mode == "pid":  # writes its pid, then sleeps
    with open(arg, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
elif mode == "flaky":
    market = question["market_id"]
    if market in os.environ.get("BOT_SLOW", "").split() and not os.path.exists(os.environ["BOT_FIXED"]):
        time.sleep(60)
    if market in os.environ.get("BOT_FAIL", "").split():
        sys.exit(1)
    time.sleep(float(arg or 0)); answer(0.4)
"""


# the variables the bot reads, handed to it as a user would (a bot gets an allow-listed environment)
PASSED = "pass_env=BOT_LOG+BOT_SLOW+BOT_FAIL+BOT_FIXED+MY_BOT_API_KEY"


def write_bot(folder) -> str:
    """The bot written into `folder`; returns the command line that runs it (for `cmd=`)."""
    import shlex
    import sys

    path = folder / "bot.py"
    path.write_text(BOT, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"
