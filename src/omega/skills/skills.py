"""Skills: `skills/<name>/SKILL.md` files, frontmatter (TOML `+++` or YAML `---`) + Markdown.

Parsing is forgiving about layout (BOM, CRLF, stray whitespace) and strict about field types:
`parse_skill` raises only `SkillError`, whose message names the file and the field at fault.
Adding a lesson to a skill is lessons.py; the skills shipped with Omega are bundled.py.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import threading
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega.errors import OmegaError
from omega.types import McpServer

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
DESCRIPTION_MAX = 200
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
# Tool names go to shutil.which; ASCII-only keeps os.access away from NULs and surrogates.
_TOOL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_DELIMITERS = {"+++": "TOML", "---": "YAML"}
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class SkillError(OmegaError, ValueError):
    """A SKILL.md problem, with a message naming the file and what is wrong."""


@dataclass(frozen=True)
class Skill:
    """One parsed SKILL.md."""

    name: str
    description: str
    path: Path
    body: str
    requires: tuple[str, ...]
    triggers: tuple[str, ...]
    mcp_servers: tuple[McpServer, ...]
    missing: tuple[str, ...]
    # Who wrote or approved it, for the label in the prompt (GuardedSkills sets it).
    origin: str = "a skill file"
    # Whose prompts it may reach: "" everyone, else one person (person:<channel>:<id>) whose
    # gap it came from, until the owner approves it (issue 37).
    audience: str = ""

    def visible_to(self, person: str) -> bool:
        """Whether it may reach the prompt of `person` (person:<channel>:<id>)."""
        return not self.audience or self.audience == person

    @property
    def available(self) -> bool:
        """True when every required CLI tool was on PATH when the skill was loaded."""
        return not self.missing


# --------------------------------------------------------------------------- parsing


def _normalize(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _split_frontmatter(text: str, path: Path) -> tuple[str | None, str, str]:
    """Return (format or None, frontmatter source, body) for normalized text."""
    lines = text.split("\n")
    start = 0
    # Blank lines before the opening delimiter are tolerated: editors add them.
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines) or lines[start].strip() not in _DELIMITERS:
        return None, "", text
    delimiter = lines[start].strip()
    for end in range(start + 1, len(lines)):
        if lines[end].strip() == delimiter:
            source = "\n".join(lines[start + 1 : end])
            body = "\n".join(lines[end + 1 :])
            return _DELIMITERS[delimiter], source, body
    raise SkillError(f"{path}: frontmatter opened with {delimiter!r} is never closed")


def _load_frontmatter(kind: str, source: str, path: Path) -> dict[str, Any]:
    import yaml  # only when a skill is read: not on `omega ask`'s lean path (issue 40)

    try:
        data: object = tomllib.loads(source) if kind == "TOML" else yaml.safe_load(source)
    # Both parsers can raise more than their own error type on hostile input (PyYAML builds
    # dates that may be invalid -> ValueError; deep nesting -> RecursionError), so catch all.
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SkillError(f"{path}: invalid {kind} frontmatter: {first_line}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SkillError(f"{path}: {kind} frontmatter must be a mapping of fields")
    # Non-string keys (YAML `1: x`) cannot be fields: ignored like unknown keys. An empty
    # YAML value (`requires:`) is null and means the same as leaving the field out.
    return {key: value for key, value in data.items() if isinstance(key, str) and value is not None}


def _string(value: object, field: str, path: Path) -> str:
    if not isinstance(value, str):
        raise SkillError(f"{path}: field {field!r} must be a string, not {_kind(value)}")
    return value


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _string_list(value: object, field: str, path: Path, separator: str) -> tuple[str, ...]:
    """A list of strings or one separator-joined string -> stripped, deduplicated items."""
    if isinstance(value, str):
        items: list[str] = value.split(separator)
    elif isinstance(value, list):
        items = []
        for index, item in enumerate(value):
            items.append(_string(item, f"{field}[{index}]", path))
    else:
        raise SkillError(
            f"{path}: field {field!r} must be a list of strings or a "
            f"{separator!r}-separated string, not {_kind(value)}"
        )
    return tuple(dict.fromkeys(item.strip() for item in items if item.strip()))


def _mapping(value: object, field: str, path: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SkillError(f"{path}: field {field!r} must be a mapping, not {_kind(value)}")
    for key in value:
        if not isinstance(key, str):
            raise SkillError(f"{path}: field {field!r} has a non-string key {key!r}")
    return value


def _mcp_server(raw_name: object, raw_spec: object, field: str, path: Path) -> McpServer:
    name = _string(raw_name, f"{field}.name", path).strip()
    if not name:
        raise SkillError(f"{path}: field {field + '.name'!r} must not be empty")
    spec = _mapping(raw_spec, field, path)
    command = _string(spec.get("command"), f"{field}.command", path).strip()
    if not command:
        raise SkillError(f"{path}: field {field + '.command'!r} must not be empty")
    raw_args = spec.get("args")
    raw_args = [] if raw_args is None else raw_args
    if not isinstance(raw_args, list):
        raise SkillError(
            f"{path}: field {field + '.args'!r} must be a list of strings, not {_kind(raw_args)}"
        )
    args = tuple(_string(a, f"{field}.args[{i}]", path) for i, a in enumerate(raw_args))
    raw_env = spec.get("env")
    env = _mapping({} if raw_env is None else raw_env, f"{field}.env", path)
    pairs = tuple((key, _string(val, f"{field}.env.{key}", path)) for key, val in env.items())
    return McpServer(name=name, command=command, args=args, env=pairs)


def _mcp_servers(value: object, path: Path) -> tuple[McpServer, ...]:
    servers: list[McpServer] = []
    if isinstance(value, dict):
        for name, spec in value.items():
            servers.append(_mcp_server(name, spec, f"mcp.{name}", path))
    elif isinstance(value, list):
        for index, spec in enumerate(value):
            field = f"mcp[{index}]"
            servers.append(_mcp_server(_mapping(spec, field, path).get("name"), spec, field, path))
    else:
        raise SkillError(f"{path}: field 'mcp' must be a mapping or a list, not {_kind(value)}")
    names = [server.name for server in servers]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SkillError(f"{path}: field 'mcp' declares {duplicates[0]!r} more than once")
    return tuple(servers)


def _first_paragraph_line(body: str) -> str:
    in_fence = False
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        stripped = line.strip()
        if in_fence or not stripped or _HEADING_RE.match(line) or stripped.startswith("<!--"):
            continue
        return stripped[:DESCRIPTION_MAX]
    return ""


def _which(tool: str) -> bool:
    try:
        return shutil.which(tool) is not None
    except (OSError, ValueError):
        return False


def parse_skill(text: str, path: Path) -> Skill:
    """Parse the text of a SKILL.md found at `path`; raise SkillError for any problem."""
    kind, source, body = _split_frontmatter(_normalize(text), path)
    fields = _load_frontmatter(kind, source, path) if kind else {}
    body = body.strip()

    name = _string(fields.get("name", path.parent.name), "name", path).strip()
    if not NAME_RE.fullmatch(name):
        raise SkillError(
            f"{path}: field 'name' is {name[:80]!r}; use 1-64 lowercase letters, digits "
            "and hyphens, starting with a letter or digit"
        )
    description = " ".join(_string(fields.get("description", ""), "description", path).split())
    if not description:
        description = _first_paragraph_line(body)

    requires = _string_list(fields.get("requires", []), "requires", path, ",")
    for tool in requires:
        if not _TOOL_RE.fullmatch(tool):
            raise SkillError(f"{path}: field 'requires' has an invalid tool name {tool[:80]!r}")
    triggers = _string_list(fields.get("triggers", []), "triggers", path, "|")
    triggers = tuple(dict.fromkeys(" ".join(t.lower().split()) for t in triggers))
    mcp = _mcp_servers(fields["mcp"], path) if "mcp" in fields else ()

    return Skill(
        name=name,
        description=description,
        path=path,
        body=body,
        requires=requires,
        triggers=triggers,
        mcp_servers=mcp,
        missing=tuple(tool for tool in requires if not _which(tool)),
    )


def _read_skill(path: Path) -> Skill:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillError(f"{path}: cannot read: {exc}") from None
    return parse_skill(text, path)


def _skill_folders(skills_dir: Path) -> list[Path]:
    # One scandir: its entries know whether they are folders without a stat each (listed on
    # every message). Hidden folders (.git, editor backups) are never skills.
    try:
        with os.scandir(skills_dir) as entries:
            names = sorted(e.name for e in entries if not e.name.startswith(".") and _is_dir(e))
    except OSError:
        return []
    return [skills_dir / name for name in names]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symlink, as Path.is_dir does
    except OSError:
        return False


def _dedupe(skills: list[Skill]) -> list[Skill]:
    """Sort by name; when two folders declare one name, the first folder wins."""
    seen: dict[str, Skill] = {}
    for skill in skills:
        if skill.name in seen:
            log.warning(
                "skill %r in %s ignored: %s has it", skill.name, skill.path, seen[skill.name].path
            )
            continue
        seen[skill.name] = skill
    return sorted(seen.values(), key=lambda skill: skill.name)


def load_skills(skills_dir: Path) -> list[Skill]:
    """Parse every `<skills_dir>/<name>/SKILL.md`, sorted by name; bad files are logged, skipped."""
    skills = []
    for folder in _skill_folders(skills_dir):
        path = folder / SKILL_FILE
        if not path.is_file():
            continue
        try:
            skills.append(_read_skill(path))
        except SkillError as exc:
            log.warning("skipping skill: %s", exc)
    return _dedupe(skills)


# --------------------------------------------------------------------------- catalog

_Signature = tuple[int, int]


class SkillCatalog:
    """The skills in one folder, re-parsed only when a SKILL.md changes (hot reload)."""

    def __init__(self, skills_dir: Path) -> None:
        self.skills_dir = skills_dir
        # folder -> (signature, skill or None when the file is bad), so a bad file is
        # parsed and logged once per change rather than on every call.
        self._cache: dict[Path, tuple[_Signature, Skill | None]] = {}
        self._skills: list[Skill] = []
        self._lock = threading.Lock()

    def skills(self) -> list[Skill]:
        """Current skills sorted by name; costs only stat calls when nothing changed."""
        with self._lock:
            signatures: dict[Path, _Signature] = {}
            for folder in _skill_folders(self.skills_dir):
                try:
                    stat = (folder / SKILL_FILE).stat()
                except OSError:
                    continue
                signatures[folder] = (stat.st_mtime_ns, stat.st_size)
            changed = signatures.keys() != self._cache.keys()
            for folder, signature in signatures.items():
                cached = self._cache.get(folder)
                if cached is not None and cached[0] == signature:
                    continue
                changed = True
                try:
                    skill: Skill | None = _read_skill(folder / SKILL_FILE)
                except SkillError as exc:
                    log.warning("skipping skill: %s", exc)
                    skill = None
                self._cache[folder] = (signature, skill)
            if changed:
                for folder in self._cache.keys() - signatures.keys():
                    del self._cache[folder]
                loaded = [entry[1] for _, entry in sorted(self._cache.items())]
                self._skills = _dedupe([skill for skill in loaded if skill is not None])
            return list(self._skills)

    def get(self, name: str) -> Skill | None:
        """The skill called `name` (case-insensitive), or None."""
        wanted = name.strip().lower()
        return next((skill for skill in self.skills() if skill.name == wanted), None)


# --------------------------------------------------------------------------- triggers


@functools.lru_cache(maxsize=1024)
def _trigger_pattern(trigger: str) -> re.Pattern[str]:
    # Any run of whitespace in the text matches a space in the trigger ("web  page").
    body = r"\s+".join(re.escape(word) for word in trigger.split())
    # Word boundaries only where the trigger starts/ends with a word character, so "pdf"
    # skips "pdfx" while a trigger like ".pdf" or "c++" still matches.
    prefix = r"\b" if re.match(r"\w", trigger) else ""
    suffix = r"\b" if re.search(r"\w$", trigger) else ""
    return re.compile(prefix + body + suffix, re.IGNORECASE)


def match_triggers(skills: Sequence[Skill], text: str) -> list[Skill]:
    """The skills (in the given order) any of whose triggers occur in `text`."""
    return [
        skill
        for skill in skills
        if any(t.strip() and _trigger_pattern(t).search(text) for t in skill.triggers)
    ]


__all__ = [
    "DESCRIPTION_MAX",
    "NAME_RE",
    "SKILL_FILE",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "load_skills",
    "match_triggers",
    "parse_skill",
]
