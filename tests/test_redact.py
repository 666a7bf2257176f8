"""`hindcast.http.redact`: the one place credentials leave a URL or a message (issue 24), and
the refusals that keep keys out of specs (`key_env=` holding a key, `?api_key=` in an endpoint)."""

from __future__ import annotations

import pytest

from hindcast.errors import BadModelSpec, ConfigError, RunStoreError
from hindcast.http import credential_keys, redact, variable_name
from hindcast.llm.client import parse_model

SECRET = "s3cr3t-planted-0042"


@pytest.mark.parametrize(
    "text, shown",
    [
        (f"postgresql://u:{SECRET}@127.0.0.1:5432/runs", "postgresql://***@127.0.0.1:5432/runs"),
        (
            f"postgresql+psycopg://u:{SECRET}@db.example/runs",
            "postgresql+psycopg://***@db.example/runs",
        ),
        (
            f"postgresql://u:p@{SECRET}@h/db",
            "postgresql://***@h/db",
        ),  # an unescaped @ in the password
        (
            f"run database postgresql://u:{SECRET}@h/db: connection refused (u@h)",
            "run database postgresql://***@h/db: connection refused (u@h)",
        ),
        (
            f"'postgresql://u@h/db?sslmode=require&password={SECRET}'",
            "'postgresql://***@h/db?sslmode=require&password=***'",
        ),
        (f"http://h/v1?api_key={SECRET}&x=2#m", "http://h/v1?api_key=***&x=2#m"),
        (f"http://h/v1?key={SECRET}", "http://h/v1?key=***"),
        (
            f"https://h/?Access-Token={SECRET}&X-Api-Key={SECRET}&client_secret={SECRET}",
            "https://h/?Access-Token=***&X-Api-Key=***&client_secret=***",
        ),
        (f"host=h password={SECRET} dbname=x", "host=h password=*** dbname=x"),
        (
            f"zero-shot:model=openai:gpt-4.1-mini,key_env=sk-{SECRET}",
            "zero-shot:model=openai:gpt-4.1-mini,key_env=***",
        ),
    ],
)
def test_credentials_are_masked(text, shown):
    assert redact(text) == shown and SECRET not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "sqlite:///runs/hindcast.db",
        "postgresql://h:5432/runs",
        "constant:p=0.3",
        "zero-shot:model=openai-compatible:http://127.0.0.1:8080/v1#m,key_env=MY_KEY",
        "parameters are key=value, separated by commas",
        "http://h/v1?limit=5&offset=10",
    ],
)
def test_what_holds_no_credential_is_unchanged(text):
    assert redact(text) == text


def test_credential_keys_and_variable_names():
    assert credential_keys(f"http://h/v1?api_key={SECRET}&limit=2&token=t") == ["api_key", "token"]
    assert credential_keys("http://h/v1?limit=2") == []
    assert all(variable_name(n) for n in ("OPENAI_API_KEY", "MY_KEY", "_K", "KEY2"))
    assert not any(
        variable_name(n)
        for n in (f"sk-{SECRET}", "sk_live_abc", "AKIA7PLANTED5521KEYX", "lower_case", "0ABC", "")
    )


def test_every_hindcast_error_message_is_redacted():
    assert (
        str(RunStoreError(f"cannot open postgresql://u:{SECRET}@h/db"))
        == "cannot open postgresql://***@h/db"
    )


@pytest.mark.parametrize(
    "model, key_env",
    [
        ("openai:gpt-4.1-mini", f"sk-{SECRET}"),
        ("openai:gpt-4.1-mini", "AKIA7PLANTED5521KEYX"),
        (f"openai-compatible:http://127.0.0.1:9/v1?api_key={SECRET}#m", None),
        (f"openai-compatible:http://127.0.0.1:9/v1?x=1&access_token={SECRET}#m", None),
        (f"openai-compatible:http://u:{SECRET}@127.0.0.1:9/v1#m", None),
    ],
)
def test_a_key_where_it_does_not_belong_is_refused_without_echo(model, key_env):
    with pytest.raises(BadModelSpec) as info:
        parse_model(model, key_env)
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)
    assert SECRET not in str(info.value) and "AKIA7PLANTED5521KEYX" not in str(info.value)
    assert "key_env" in str(info.value)


def test_openai_without_a_model_is_a_config_error():
    with pytest.raises(BadModelSpec, match="no model name"):
        parse_model("openai:")


def test_a_run_database_error_names_the_url_without_its_password(tmp_path):
    from hindcast.runs.store import RunStore

    for url in (
        f"postgresql+psycopg://u:{SECRET}@127.0.0.1:1/runs",
        f"postgresql+pg8000://u:{SECRET}@127.0.0.1:1/r",
    ):
        for read_only in (True, False):
            with pytest.raises(RunStoreError) as info:
                RunStore(url, read_only=read_only)
            assert SECRET not in str(info.value) and "***@127.0.0.1" in str(info.value)
