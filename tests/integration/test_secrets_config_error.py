"""A broken config is reported before any secret is registered, so its message quotes no
value: a token written where a channel's table belongs (`[channel] slack_token = "xoxb-..."`)
does not reach stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_omega

# The config is refused before the store is opened: the same on either engine's run.
pytestmark = pytest.mark.no_store

TOKEN = "xoxb-4242424242-Zq-not-a-table-abcdefghij"


@pytest.mark.parametrize("where", ["config", "env"])
def test_a_token_in_place_of_a_channel_table_is_not_echoed(isolated_env: Path, where: str) -> None:
    env: dict[str, str] = {}
    if where == "config":
        isolated_env.mkdir(parents=True, exist_ok=True)
        (isolated_env / "config.toml").write_text(f'[channel]\nslack_token = "{TOKEN}"\n')
    else:
        env["OMEGA_CHANNEL__SLACK_TOKEN"] = TOKEN
    result = run_omega("status", env=env)
    assert result.returncode == 2
    assert "must be a table" in result.stderr  # the mistake is still named
    assert TOKEN not in result.stdout + result.stderr
    assert TOKEN[12:24] not in result.stdout + result.stderr
