"""The config loader on broken files and env overrides, fuzzed: any TOML text or bytes, and
any OMEGA_<SECTION>__<KEY> values (JSON or not) on the real keys, give a Config or a
ConfigError that names the file or the variable; nothing else escapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from omega.config import Config, ConfigError, load_config

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def key_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path of the config model (sections and their keys)."""
    found: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        here = (*prefix, name)
        found.append(here)
        kind: Any = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found += key_paths(kind, here)
    return found


ENV_VARS = ["OMEGA_" + "__".join(part.upper() for part in path) for path in key_paths(Config)]
any_text = st.text(
    st.characters(codec=None, categories=None, exclude_categories=["Cs"]), max_size=20
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(any_text, kids, max_size=3),
    max_leaves=6,
)
env_values = (
    any_text
    | json_values.map(json.dumps)
    | st.sampled_from(
        ["-1", "0", "1e309", "nan", "true", "99999999999999999999", " ", "[", "{}", "[1,"]
    )
)
toml_lines = st.sampled_from(
    [
        "[omega]",
        "[provider]",
        'default = "nope"',
        "[limits]",
        "max_tasks_per_person = -3",
        'x = [1, "a"]',
        "[channel.telegram]",
        'enabled = "yes"',
        "a.b.c = 1",
        "[[omega]]",
        "timezone = 5",
        "= 1",
        '"\\ud800" = 1',
        "log_level = 'trace'",
        '[memory]\nbackend = "x"',
    ]
)
toml_texts = st.lists(toml_lines | any_text, max_size=6).map("\n".join)


def check(path: Path, env: dict[str, str]) -> None:
    try:
        load_config(path, env)
    except ConfigError as exc:
        assert str(exc)


def test_any_file_and_env_gives_a_config_or_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"

    @settings(
        max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        toml_texts | st.binary(max_size=60),
        st.dictionaries(st.sampled_from(ENV_VARS), env_values, max_size=3),
    )
    def one(content: str | bytes, env: dict[str, str]) -> None:
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        check(path, env)

    one()


def test_any_env_names_give_a_config_or_a_config_error(tmp_path: Path) -> None:
    @settings(
        max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(st.dictionaries(st.builds(lambda s: f"OMEGA_{s}", any_text), env_values, max_size=4))
    def one(env: dict[str, str]) -> None:
        check(tmp_path / "absent.toml", env)

    one()
