"""Config: defaults, TOML errors that name file/key/problem, env overrides, provider choice."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from omega.config import Config, ConfigError, load_config
from omega.paths import OmegaPaths
from omega.providers import build_provider, resolve_provider_name

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_gives_working_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path / "config.toml", environ={})
    assert config.provider.default == "auto"
    assert config.heartbeat.interval_minutes == 30
    assert config.memory.idle_minutes == 30


def test_full_toml_shape_is_accepted(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml",
        """
[omega]
name = "Ω"
[auth]
enabled = true
[provider]
default = "openai"
[provider.claude-code]
model = "claude-sonnet-4-6"
max_resume_attempts = 3
[provider.openai]
base_url = "http://localhost:8000/v1"
model = "qwen"
[provider.local]
n_ctx = 1024
[channel.telegram]
enabled = true
allowed_users = [42]
[heartbeat]
interval_minutes = 15
active_start = "22:00"
active_end = "06:00"
[evolution]
autonomy_mode = "autonomous"
self_learn = "active"
""",
    )
    config = load_config(path, environ={})
    assert config.omega.name == "Ω"
    assert config.provider.claude_code.max_resume_attempts == 3
    assert config.provider.openai.model == "qwen"
    assert config.channel.telegram.allowed_users == [42]
    assert config.evolution.autonomy_mode == "autonomous"


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", "[provider\ndefault = 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert str(path) in str(info.value)
    assert "not valid TOML" in str(info.value)


def test_unknown_provider_names_key_and_choices(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[provider]\ndefault = "gpt5-magic"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    message = str(info.value)
    assert str(path) in message
    assert "provider.default" in message
    assert "'local'" in message


def test_wrong_type_names_key_and_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[heartbeat]\ninterval_minutes = "often"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert "heartbeat.interval_minutes" in str(info.value)
    assert "integer" in str(info.value)


def test_out_of_range_and_unknown_keys_are_reported_together(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml", "[heartbeat]\ninterval_minutes = 5000\n[memory]\nmax_contex = 3\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    message = str(info.value)
    assert "heartbeat.interval_minutes" in message
    assert "memory.max_contex" in message
    assert "unknown key" in message


def test_env_overrides_toml_including_hyphenated_sections(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml",
        '[provider.openai]\nmodel = "a"\n[provider.claude-code]\nmodel = "x"\n',
    )
    config = load_config(
        path,
        environ={
            "OMEGA_PROVIDER__OPENAI__MODEL": "b",
            "OMEGA_PROVIDER__CLAUDE_CODE__MODEL": "y",
            "OMEGA_HEARTBEAT__INTERVAL_MINUTES": "45",
            "OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS": "[1, 2]",
            "OMEGA_HOME": "/ignored/not/a/section",
        },
    )
    assert config.provider.openai.model == "b"
    assert config.provider.claude_code.model == "y"
    assert config.heartbeat.interval_minutes == 45
    assert config.channel.telegram.allowed_users == [1, 2]


def test_bad_env_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "config.toml", environ={"OMEGA_HEARTBEAT__INTERVAL_MINUTES": "soon"})
    assert "OMEGA_HEARTBEAT__INTERVAL_MINUTES" in str(info.value)


def test_well_known_key_vars_fill_empty_keys_only(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", '[provider.anthropic]\napi_key = "from-file"\n')
    config = load_config(
        path, environ={"ANTHROPIC_API_KEY": "from-env", "OPENAI_API_KEY": "sk-openai"}
    )
    assert config.provider.anthropic.api_key.get_secret_value() == "from-file"
    assert config.provider.openai.api_key.get_secret_value() == "sk-openai"
    assert "sk-openai" not in repr(config)


def _fake_claude(folder: Path) -> None:
    folder.mkdir()
    exe = folder / "claude"
    exe.write_text("#!/bin/sh\necho '{}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)


def test_auto_selection_prefers_claude_then_env_key_then_local(tmp_path: Path) -> None:
    config = Config()
    bin_dir = tmp_path / "bin"
    _fake_claude(bin_dir)
    assert resolve_provider_name(config, {"PATH": str(bin_dir)}) == "claude-code"
    empty = str(tmp_path / "nothing")
    assert resolve_provider_name(config, {"PATH": empty, "ANTHROPIC_API_KEY": "k"}) == "anthropic"
    assert resolve_provider_name(config, {"PATH": empty, "OPENAI_API_KEY": "k"}) == "openai"
    assert resolve_provider_name(config, {"PATH": empty}) == "local"
    explicit = Config.model_validate({"provider": {"default": "ollama"}})
    assert resolve_provider_name(explicit, {"PATH": str(bin_dir)}) == "ollama"


def test_every_provider_name_builds(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path)
    for name in ("claude-code", "anthropic", "openai", "ollama", "openrouter", "gemini", "local"):
        provider = build_provider(name, Config(), paths)
        assert provider.name == name
        ok, reason = provider.availability()
        assert isinstance(ok, bool) and reason
    assert os.environ.get("OMEGA_ALLOW_ROOT") == "1"
