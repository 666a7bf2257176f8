"""Model specs (`openai:MODEL`, `openai-compatible:URL#MODEL`, `local`) → where the model lives
(ModelSpec); a key_env that looks like a key, or an endpoint carrying a credential, is refused
without being echoed. The chat client (`client`) re-exports these names."""

from __future__ import annotations

from dataclasses import dataclass

from hindcast.errors import (
    BadModelSpec,
)
from hindcast.http import (
    credential_keys,
    has_userinfo,
    redact,
    variable_name,
)
from hindcast.llm import local

OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelSpec:
    """Where a model lives. `identity` is what the cache key and the run record use."""

    spec: str
    provider: str
    model: str
    endpoint: str
    key_env: str | None = None

    @property
    def identity(self) -> str:
        return self.endpoint


def parse_model(spec: str, key_env: str | None = None) -> ModelSpec:
    """`openai:MODEL`, `openai-compatible:URL#MODEL` or `local` → a ModelSpec."""
    check_key_env(key_env)
    provider, _, rest = spec.partition(":")
    if provider == "openai" and not rest.strip():
        raise BadModelSpec(
            "model 'openai:': no model name after 'openai:' (e.g. openai:gpt-4.1-mini)"
        )
    if provider == "openai" and rest:
        return ModelSpec(spec, provider, rest, OPENAI_URL, key_env or "OPENAI_API_KEY")
    if provider == "openai-compatible":
        url, _, model = rest.partition("#")
        _check_endpoint(url)
        if not url.startswith(("http://", "https://")) or not model:
            raise BadModelSpec(
                f"model {redact(spec)!r}: expected openai-compatible:http(s)://host/v1#model-name"
            )
        return ModelSpec(spec, provider, model, url.rstrip("/"), key_env)
    if spec == "local":
        return ModelSpec(spec, "local", local.MODEL_ALIAS, local.identity(), None)
    raise BadModelSpec(
        f"model {redact(spec)!r}: use openai:MODEL, openai-compatible:URL#MODEL or local"
    )


def check_key_env(key_env: str | None) -> None:
    """`key_env` must name an environment variable (OPENAI_API_KEY, MY_KEY): a value that looks
    like a key itself is refused without being echoed (it would be stored with the spec)."""
    if key_env is None or variable_name(key_env):
        return
    raise BadModelSpec(
        "key_env: the value given is not an environment variable's name (upper-case letters, "
        "digits, _); it looks like a key itself and was neither stored nor shown — put the key "
        "in an environment variable and give its name, e.g. key_env=MY_API_KEY"
    )


def _check_endpoint(url: str) -> None:
    """An endpoint URL carrying credentials (user:password@ or ?api_key=…) is
    refused, never echoed."""
    keys = credential_keys(url)
    if has_userinfo(url) or keys:
        where = (
            f"a credential in its query ({', '.join(keys)}=…)"
            if keys
            else "credentials before its host"
        )
        raise BadModelSpec(
            f"model endpoint URL: {where} is refused (it would be stored with the forecaster's "
            "name and printed); put the key in an environment variable and name it with "
            "key_env=VARIABLE"
        )
