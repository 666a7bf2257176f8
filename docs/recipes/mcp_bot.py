# recipe: docs/recipes/mcp_bot.py
"""Judge your own agent through MCP: `hindcast mcp serve` holds one market at a past instant t0;
your agent (here the official MCP Python SDK's client, as any agent harness would) calls its tools.
No tool takes a date — t0 is the server's. The calls it served are written to served.json."""
import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

import hindcast

# search needs an indexed archive: a copy of the shipped sample, indexed with the fast hash embedder
archive = Path("my-archive")
if not archive.exists():
    shutil.copytree(hindcast.sample("archive"), archive)
    hindcast.build_index(hindcast.open_snapshot(archive), "hash")

market = "0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc"  # Will 2 Fed rate cuts happen in 2025?
server = StdioServerParameters(command=sys.executable, env=dict(os.environ), args=[
    "-m", "hindcast", "mcp", "serve", "--market", market, "--fraction", "0.5", "--archive", str(archive),
    "--log", "served.json"])


async def my_agent():
    async with Client(server) as tools:
        question = (await tools.call_tool("question", {})).structured_content
        print(f"{question['question']}  (t0 {question['t0']})")
        found = await tools.call_tool("search", {"query": question["question"], "k": 3, "mode": "text"})
        for hit in found.structured_content["hits"]:
            print(f"  {hit['created_at'][:10]}  {hit['title'][:70]}")
        prices = (await tools.call_tool("price_history", {})).structured_content["prices"]
        print(f"last price before t0: {prices[-1]['p']} ({prices[-1]['t']})")
        later = await tools.call_tool("search", {"query": question["question"], "k": 3, "mode": "text",
                                                 "before": "2030-01-01"})  # a date argument is dropped
        assert later.structured_content == found.structured_content


asyncio.run(my_agent())
print("served:", [call["op"] for call in json.loads(Path("served.json").read_text())["retrievals"]])
