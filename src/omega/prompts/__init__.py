"""Bundled prompts: SYSTEM_PROMPT.md (Identity / Soul / System) and WELCOME.toml."""

from __future__ import annotations

import contextlib
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from omega.paths import OmegaPaths, write_private

BUNDLED_FILES = ("SYSTEM_PROMPT.md", "WELCOME.toml")
LANGUAGES = (
    "English",
    "Spanish",
    "Portuguese",
    "French",
    "German",
    "Italian",
    "Dutch",
    "Russian",
)
_SECTION = re.compile(r"^##\s+(Identity|Soul|System)\s*$", re.MULTILINE | re.IGNORECASE)


def bundled_text(name: str) -> str:
    """The text of one bundled prompt file."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def deploy_bundled(paths: OmegaPaths) -> list[Path]:
    """Copy bundled prompt files into $OMEGA_HOME if absent; never overwrite edits."""
    written = []
    for name in BUNDLED_FILES:
        target = paths.home / name
        if not target.exists():
            write_private(target, bundled_text(name))
            written.append(target)
    return written


def parse_sections(text: str) -> dict[str, str]:
    """Split a SYSTEM_PROMPT.md into its `## Identity`, `## Soul` and `## System` sections."""
    sections: dict[str, str] = {}
    matches = list(_SECTION.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end].strip()
        if body:
            sections[match.group(1).lower()] = body
    return sections


@dataclass(frozen=True)
class Prompts:
    """The system prompt parts and welcome messages in force."""

    identity: str
    soul: str
    system: str
    welcome: dict[str, str] = field(default_factory=dict)

    @property
    def base_system_prompt(self) -> str:
        """Identity, soul and system joined: the static start of every system prompt."""
        return "\n\n".join(part for part in (self.identity, self.soul, self.system) if part)


def load_prompts(paths: OmegaPaths) -> Prompts:
    """Read the prompts from $OMEGA_HOME, falling back to the bundled text part by part."""
    bundled = parse_sections(bundled_text("SYSTEM_PROMPT.md"))
    try:
        sections = parse_sections(paths.system_prompt.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        sections = {}
    welcome = _welcome_messages(tomllib.loads(bundled_text("WELCOME.toml")))
    with contextlib.suppress(OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        welcome.update(_welcome_messages(tomllib.loads(paths.welcome.read_text("utf-8"))))
    return Prompts(
        identity=sections.get("identity", bundled["identity"]),
        soul=sections.get("soul", bundled["soul"]),
        system=sections.get("system", bundled["system"]),
        welcome=welcome,
    )


def _welcome_messages(data: dict[str, object]) -> dict[str, str]:
    messages = data.get("messages", {})
    if not isinstance(messages, dict):
        return {}
    return {str(k): str(v) for k, v in messages.items() if isinstance(v, str) and v.strip()}
