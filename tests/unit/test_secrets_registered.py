"""Every secret the configuration or the environment holds is registered for redaction at
start-up: each `SecretStr` of the whole config (found by walking the models, so a new field is
covered without a hand-kept list), plug-in channels' sections, known login variables, and the
passwords of the store's and [voice]'s URLs."""

from __future__ import annotations

import typing
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from pydantic import BaseModel, SecretStr

from omega.app import bootstrap
from omega.channels.registry import discover
from omega.config import Config
from omega.config.channels import ChannelSection
from omega.logs import redact

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def _unwrap(annotation: object) -> list[object]:
    """The types an annotation may hold (Optional, unions, Annotated, list[...], dict[...])."""
    origin = typing.get_origin(annotation)
    if origin is None:
        return [annotation]
    found: list[object] = []
    for arg in typing.get_args(annotation):
        found += _unwrap(arg)
    return found


def _filled(model: type[BaseModel], make: typing.Callable[[str], str], path: str) -> dict[str, Any]:
    """A raw table for `model` with every SecretStr under it (nested sections, lists and tables
    of sections) set to a value of its own; only the branches that hold a secret."""
    table: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        annotation = field.annotation
        origin = typing.get_origin(annotation)
        for kind in _unwrap(annotation):
            if kind is SecretStr:
                value = make(f"{path}.{key}")
                table[key] = (
                    [value] if origin is list else {"item": value} if origin is dict else value
                )
            elif isinstance(kind, type) and issubclass(kind, BaseModel):
                inner = _filled(kind, make, f"{path}.{key}")
                if inner:
                    table[key] = (
                        [inner] if origin is list else {"item": inner} if origin is dict else inner
                    )
    return table


def _all_secrets_config() -> tuple[dict[str, Any], dict[str, str]]:
    """config.toml's tables with every SecretStr of Config and of every shipped or installed
    channel plug-in's section set, and the values by their key path."""
    numbers = count(1)
    values: dict[str, str] = {}

    def make(path: str) -> str:
        values[path] = f"Qz{next(numbers):03d}-distinct-{abs(hash(path)) % 10**8:08d}-value"
        return values[path]

    raw = _filled(Config, make, "")
    channels = raw.setdefault("channel", {})
    for name, plugin in discover().plugins.items():
        if name not in ChannelSection.model_fields:  # a plug-in's table, not a typed section
            section = _filled(plugin.config_model, make, f".channel.{name}")
            if section:
                channels[name] = section
    return raw, values


def test_every_secret_field_of_the_config_is_redacted_after_bootstrap(
    isolated_env: Path,
) -> None:
    raw, values = _all_secrets_config()
    # The walk found the fields it must (it cannot pass by finding nothing).
    for path in (
        ".provider.ollama.api_key",
        ".provider.claude-code.oauth_token",
        ".provider.claude-code.api_key",
        ".voice.api_key",
        ".channel.telegram.webhook_secret",
        ".channel.slack.bot_token",
        ".channel.slack.app_token",
        ".channel.discord.bot_token",
        ".channel.email.imap_password",
        ".channel.email.smtp_password",
        ".channel.matrix.password",
        ".channel.matrix.access_token",
    ):
        assert path in values, sorted(values)
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(tomlkit.dumps(raw))
    bootstrap(isolated_env)
    leaked = {
        path: value for path, value in values.items() if value in redact(f"error: {value} (401)")
    }
    assert leaked == {}


def test_login_variables_and_url_passwords_are_redacted(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "CLAUDE_CODE_OAUTH_TOKEN": "oauthENVtoken-Qz1234",
        "SLACK_BOT_TOKEN": "xoxb-env-SLACKenvQz5678",
        "SLACK_APP_TOKEN": "xapp-env-SLACKappQz9012",
        "DISCORD_BOT_TOKEN": "DISCORDenvTOKEN-Qz3456",
        "SOME_PLUGIN_API_KEY": "pluginEnvKey-Qz7890",
        "OMEGA_STORE_URL": "postgresql://omega@127.0.0.1:1/omega?password=StoreQueryPw-Qz11",
        "OMEGA_VOICE__BASE_URL": "https://voice:VoiceUrlPw-Qz22@voice.example.invalid/v1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(
        '[store]\nurl = "postgresql://:ConfigStorePw-Qz33@db.invalid/omega"\n'
        # One character: registered, it would redact ordinary text everywhere.
        '[provider.ollama]\napi_key = "e"\n'
        "[channel.custom]\n"
        'signing_key = "customSigningKey-Qz44"\n'
        'nested = { password = "nestedPass-Qz55" }\n'
        'note = "plain words stay"\n'
    )
    bootstrap(isolated_env)
    secrets = [
        *(value for name, value in env.items() if not name.endswith("_URL")),
        "StoreQueryPw-Qz11",
        "VoiceUrlPw-Qz22",
        "ConfigStorePw-Qz33",
        "customSigningKey-Qz44",
        "nestedPass-Qz55",
    ]
    assert [s for s in secrets if s in redact(f"echoed: {s}.")] == []
    assert redact("plain words stay, the error message") == "plain words stay, the error message"
