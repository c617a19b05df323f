"""The shipped config.example.toml is valid and matches the defaults it documents."""

from __future__ import annotations

from pathlib import Path

from omega.config import Config, load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_example_config_loads_and_equals_defaults() -> None:
    assert load_config(EXAMPLE, environ={}) == Config()
