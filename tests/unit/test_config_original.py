"""The original Omega's config.toml loads: its unused keys warn once each, its values count,
and a misspelt key of ours is still an error that names the closest valid key."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.config import ConfigError, load_config
from tests.conftest import run_omega

ORIGINAL = Path(__file__).resolve().parents[1] / "fixtures" / "original_config.toml"


@pytest.mark.no_store
def test_the_originals_config_loads_with_one_warning_per_unused_key() -> None:
    warnings: list[str] = []
    config = load_config(ORIGINAL, environ={}, warnings=warnings)
    assert config.provider.default == "claude-code"
    assert config.provider.claude_code.max_turns == 100
    assert config.provider.openai.model == "gpt-4o"
    assert config.memory.max_context_messages == 50
    assert config.heartbeat.active_start == "08:00"
    assert config.omega.log_level == "warning"  # the original's "warn"
    unused = sorted(w.split("key '")[1].split("'")[0] for w in warnings)
    assert unused == sorted(
        [
            "omega.data_dir",
            *(
                f"provider.{name}.enabled"
                for name in ("claude-code", "anthropic", "openai", "ollama", "openrouter", "gemini")
            ),
            "memory.backend",
            "memory.db_path",
        ]
    )
    assert all("from the original Omega" in w and str(ORIGINAL) in w for w in warnings)


@pytest.mark.no_store
@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[provider]\ndefualt = "openai"\n',
            "key 'provider.defualt': unknown key (did you mean 'default'?)",
        ),
        ("[heartbeat]\nintervl_minutes = 5\n", "did you mean 'interval_minutes'?"),
        ("[provider.claude-code]\nmax_turn = 5\n", "did you mean 'max_turns'?"),
        ("[memroy]\nidle_minutes = 5\n", "key 'memroy': unknown key (did you mean 'memory'?)"),
        ("[omega]\nzzz = 1\n", "key 'omega.zzz': unknown key"),
    ],
)
def test_a_misspelt_key_is_an_error_naming_the_closest_one(
    tmp_path: Path, toml: str, message: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_omega_starts_with_the_originals_config(isolated_env: Path) -> None:
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(ORIGINAL.read_text())
    result = run_omega("status", env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    # telegram and whatsapp whisper_api_key are accepted (voice transcription)
    assert result.stderr.count("from the original Omega") == 9
