"""The skills shipped with Omega (omega/skills/bundled/): their names, and copying them into
the owner's skills folder without ever overwriting one."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from omega.paths import write_private
from omega.skills.skills import SKILL_FILE


def _bundled_root() -> Traversable:
    return resources.files("omega.skills") / "bundled"


def deploy_bundled_skills(skills_dir: Path) -> list[Path]:
    """Copy bundled skills whose folder does not exist yet into `skills_dir`; never overwrite."""
    skills_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    root = _bundled_root()
    for folder in sorted(root.iterdir(), key=lambda entry: entry.name):
        if not folder.is_dir() or not (folder / SKILL_FILE).is_file():
            continue
        target = skills_dir / folder.name
        # The folder, not the file, is the unit: an owner who deleted SKILL.md from a
        # bundled skill's folder has opted out, and a half-written folder is theirs.
        if target.exists():
            continue
        target.mkdir(parents=True)
        for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
            if entry.is_file():
                write_private(target / entry.name, entry.read_text(encoding="utf-8"))
                written.append(target / entry.name)
    return written


def bundled_skill_names() -> list[str]:
    """Names of the skill folders shipped with Omega."""
    return sorted(entry.name for entry in _bundled_root().iterdir() if entry.is_dir())
