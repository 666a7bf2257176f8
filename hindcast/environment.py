"""The one place below the front ends where the process environment is read (the front ends in
cli/ read their own: HINDCAST_DEBUG, HINDCAST_CREATED_AT, the model keys `hindcast models`
checks). Everything else is given an environment mapping (`env`), or asks here for this
process's when it was given none; tests/test_architecture.py fails on a read anywhere else.

The variables hindcast reads:

    HINDCAST_DB             the run database when --db is not given (runs.db_url)
    HINDCAST_MODEL_CACHE    where converted local models are kept; `off`: nowhere (llm.converted)
    XDG_CACHE_HOME          that cache's parent when HINDCAST_MODEL_CACHE is unset (~/.cache)
    RAY_TMPDIR              Ray's own: the parent of a local Ray session's folder (archive)
    a forecaster's key_env  a model's API key (llm.Models.from_environment), named by the spec
    pass_env names          what a `command:` bot is handed (forecasters.bot_env), named by the spec
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def of(env: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """`env` when one was given, else this process's environment."""
    return os.environ if env is None else env


def value(name: str, env: Mapping[str, str] | None = None) -> str:
    """The variable `name` of `env` (else of this process), stripped; "" when unset."""
    return of(env).get(name, "").strip()
