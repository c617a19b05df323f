"""Bundled prompts: three sections, eight welcome languages, deployed once, never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.paths import OmegaPaths
from omega.prompts import LANGUAGES, bundled_text, deploy_bundled, load_prompts, parse_sections

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_bundled_system_prompt_has_identity_soul_system() -> None:
    sections = parse_sections(bundled_text("SYSTEM_PROMPT.md"))
    assert set(sections) == {"identity", "soul", "system"}
    assert "Omega" in sections["identity"]


def test_welcome_covers_eight_languages(tmp_path: Path) -> None:
    prompts = load_prompts(OmegaPaths(tmp_path))
    assert set(LANGUAGES) <= set(prompts.welcome)


def test_deploy_never_overwrites_owner_edits(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path)
    paths.ensure()
    assert {p.name for p in deploy_bundled(paths)} == {"SYSTEM_PROMPT.md", "WELCOME.toml"}
    paths.system_prompt.write_text("## Identity\nI am Zed.\n## Soul\nCalm.\n## System\nRules.\n")
    assert deploy_bundled(paths) == []
    prompts = load_prompts(paths)
    assert prompts.identity == "I am Zed."
    assert prompts.base_system_prompt.startswith("I am Zed.")


def test_missing_sections_fall_back_to_bundled(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path)
    paths.ensure()
    paths.system_prompt.write_text("## Soul\nGrumpy.\n")
    paths.welcome.write_text("this is [not toml")
    prompts = load_prompts(paths)
    assert prompts.soul == "Grumpy."
    assert "Omega" in prompts.identity
    assert len(prompts.welcome) >= 8
