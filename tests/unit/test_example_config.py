"""The shipped config.example.toml is valid and matches the defaults it documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.config import Config, load_config

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_example_config_loads_and_equals_defaults() -> None:
    assert load_config(EXAMPLE, environ={}) == Config()
