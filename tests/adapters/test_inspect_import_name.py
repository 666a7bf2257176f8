"""The forecaster name an imported Inspect log is stored under never carries a credential."""

from types import SimpleNamespace

from hindcast.adapters.inspect_import import forecaster_name


def log_of(model: str):
    return SimpleNamespace(eval=SimpleNamespace(model=model), plan=None)


def test_a_key_in_the_logged_model_url_is_not_stored_in_the_forecaster_name():
    name = forecaster_name(
        log_of(
            "hindcast/openai-compatible:https://u:pw-planted-41@h.example/v1?api_key=sk-planted-77#m"
        )
    )
    assert "pw-planted-41" not in name and "sk-planted-77" not in name
    assert name.startswith("inspect:model=openai-compatible:https://")


def test_a_plain_model_name_is_kept_as_logged():
    assert forecaster_name(log_of("hindcast/openai:gpt-4.1-mini")).startswith(
        "inspect:model=openai:gpt-4.1-mini"
    )
