"""A venue's base URL (`--gamma-url`, `--clob-url`, `--data-url`, `--kalshi-url`,
`--manifold-url`) that carries a credential is refused in one line naming the option, never
echoing the credential, and nothing is written."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli

SECRET = "planted-venue-secret"


@pytest.mark.parametrize(
    "venue, option, url",
    [
        ("polymarket", "--gamma-url", f"https://user:{SECRET}@gamma.example"),
        ("polymarket", "--data-url", f"https://data.example/?api_key={SECRET}"),
        ("kalshi", "--kalshi-url", f"https://k.example/?token={SECRET}"),
        ("manifold", "--manifold-url", f"https://me:{SECRET}@m.example/v0"),
    ],
)
def test_a_venue_url_with_a_credential_is_refused_without_echoing_it(tmp_path, venue, option, url):
    store = tmp_path / "store"
    proc = run_cli(
        "markets", "pull", "--venue", venue, "--store", str(store), option, url, cwd=tmp_path
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2 and option in output and "credential" in output, output
    assert SECRET not in output and not store.exists()
