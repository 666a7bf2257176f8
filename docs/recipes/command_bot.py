# recipe: docs/recipes/command_bot.py
"""Judge a program written in anything through `command:`: hindcast starts it once per (market, t0)
with the question as it stood at t0 on stdin and its t0-bound MCP tools in HINDCAST_MCP_URL
(streamable HTTP on loopback) and HINDCAST_MCP_COMMAND (stdio); it prints one JSON answer."""
import subprocess
import sys
from pathlib import Path

Path("my_bot.py").write_text('''\
import asyncio, json, os, sys
from mcp import Client

question = json.load(sys.stdin)  # market_id, question, description, t0, url, topic, scheduled_close

async def prices():
    async with Client(os.environ["HINDCAST_MCP_URL"]) as tools:
        return (await tools.call_tool("price_history", {})).structured_content["prices"]

history = asyncio.run(prices())
last = history[-1]["p"] if history else 0.5
print(f"{question['market_id'][:10]}: last price {last}", file=sys.stderr)  # logs go to stderr
print(json.dumps({"probability": 0.5 + 0.8 * (last - 0.5), "rationale": "the last price, shrunk toward 0.5"}))
''')

bot = f"command:cmd={sys.executable} my_bot.py,timeout=120"
command = ["hindcast", "sweep", "-f", "market", "-f", bot, "--limit", "5", "--fractions", "0.5,1.0",
           "--concurrency", "2", "--out", "runs"]
done = subprocess.run([sys.executable, "-m", "hindcast", *command[1:]], check=False)
sys.exit(done.returncode)
