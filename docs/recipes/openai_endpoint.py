# recipe: docs/recipes/openai_endpoint.py
"""A real OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, a hosted API): a spec file and one command.

    ENDPOINT=http://127.0.0.1:8000/v1 MODEL=my-model MY_ENDPOINT_KEY=... python openai_endpoint.py

Without ENDPOINT, the shipped fake chat model answers on 127.0.0.1, so this file runs offline.
The key is read from the variable named by key_env (never written into the spec, the run or the cache).
"""
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import hindcast


def offline_endpoint():
    """The shipped fake chat model on 127.0.0.1, answering 0.62 to requests bearing the key."""
    from hindcast.llm import FakeChatModel

    os.environ.setdefault("MY_ENDPOINT_KEY", "sk-offline-demo")
    return FakeChatModel(default='{"probability": 0.62}', require_key=os.environ["MY_ENDPOINT_KEY"]).serve()


yours = os.environ.get("ENDPOINT")
with contextlib.nullcontext(yours) if yours else offline_endpoint() as url:
    model = os.environ.get("MODEL", "my-model")
    forecaster = f"zero-shot:model=openai-compatible:{url}#{model},key_env=MY_ENDPOINT_KEY"
    Path("endpoint.toml").write_text(f"""\
[markets]
store = {json.dumps(str(hindcast.sample("markets")))}
limit = 5

[cutoffs]
fractions = [0.5]

[[forecasters]]
spec = "market"

[[forecasters]]
spec = {json.dumps(forecaster)}

[run]
concurrency = 2
max_failures = 5
""")
    command = ["hindcast", "sweep", "--spec", "endpoint.toml", "--out", "runs"]
    print("$", " ".join(command))
    done = subprocess.run([sys.executable, "-m", "hindcast", *command[1:]], check=False)
    sys.exit(done.returncode)
