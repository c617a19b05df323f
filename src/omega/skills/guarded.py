"""The skills that may run: the bundled set, read from the package (never copied or edited),
plus folders under $OMEGA_HOME/skills whose content matches a pin in the artefact registry.

An unknown or changed folder is not parsed at all (its MCP servers never start); it is noted
once per content for the owner. What is parsed is the very bytes that were hashed.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from importlib import resources
from pathlib import Path

from omega.memory.artefacts import ArtefactStore, Pin, files_digest, folder_files
from omega.skills.skills import (
    SKILL_FILE,
    Skill,
    SkillCatalog,
    SkillError,
    _dedupe,
    _skill_folders,
    parse_skill,
)

log = logging.getLogger(__name__)
GATE = "gate"  # who pinned what the gate approved by itself (evolution.registration)


def pin_origin(pin: Pin) -> str:
    """The origin label of a pinned skill: who installed or approved it."""
    if pin.origin == "owner":
        return "the owner, an installed skill"
    if pin.pinned_by == GATE:
        return f"a skill the gate approved by itself (proposal #{pin.proposal_id})"
    return f"a skill the owner approved (proposal #{pin.proposal_id})"


TreeSignature = tuple[tuple[str, int, int, int, int, int], ...]


def tree_signature(folder: Path) -> TreeSignature:
    """What lstat says of every entry below `folder`: path, inode, mode, size, mtime and
    ctime. Any write changes ctime, which no one can set back (unlike mtime)."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted([*dirs, *names]):
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            relative = os.path.relpath(path, folder)
            found.append(
                (relative, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            )
    return tuple(found)


def bundled_dir() -> Path:
    """The bundled skills inside the installed package (read-only for Omega)."""
    return Path(str(resources.files("omega.skills") / "bundled"))


class GuardedSkills(SkillCatalog):
    """A SkillCatalog that admits only bundled skills and pinned folders."""

    def __init__(self, skills_dir: Path, artefacts: ArtefactStore, bundled: Path | None) -> None:
        super().__init__(skills_dir)
        self.artefacts = artefacts
        self._bundled = SkillCatalog(bundled) if bundled is not None else None
        self._parsed: dict[tuple[Path, str], Skill | None] = {}
        self._announced: set[str] = set()
        # folder -> (what stat says of its tree, its files, their digest): a folder is read
        # and hashed again only when something in it changed, not on every message.
        self._hashed: dict[Path, tuple[TreeSignature, dict[str, bytes], str]] = {}
        # The bundled catalog's skills as last listed, and the same with their origin label:
        # labelled again only when the catalog re-parsed one (it keeps unchanged ones).
        self._bundled_seen: list[Skill] = []
        self._bundled_labelled: list[Skill] = []

    def skills(self) -> list[Skill]:
        """Bundled skills, then admitted ones, sorted by name (a bundled name always wins)."""
        bundled = self._labelled_bundled()
        taken = {s.path.parent.name for s in bundled} | {s.name for s in bundled}
        admitted: list[Skill] = []
        with self._lock:
            for folder in _skill_folders(self.skills_dir):
                if not (folder / SKILL_FILE).is_file() or folder.name in taken:
                    continue  # copies of bundled skills left by older versions never load
                found = self._admit(folder)
                if found is not None:
                    admitted.append(found)
        return _dedupe([*bundled, *admitted])

    def _labelled_bundled(self) -> list[Skill]:
        """The bundled skills with their origin. Bundled skills are part of Omega itself, like
        its code: not audited per start."""
        listed = self._bundled.skills() if self._bundled is not None else []
        with self._lock:
            seen = self._bundled_seen
            if len(listed) != len(seen) or any(
                a is not b for a, b in zip(listed, seen, strict=True)
            ):
                self._bundled_labelled = [
                    dataclasses.replace(skill, origin="Omega, a bundled skill") for skill in listed
                ]
                self._bundled_seen = listed
            return list(self._bundled_labelled)

    def _contents(self, folder: Path) -> tuple[dict[str, bytes], str]:
        """The folder's files and digest, read again only when its tree's stat changed."""
        # Taken before the read: a change made during the read differs from it next time.
        signature = tree_signature(folder)
        cached = self._hashed.get(folder)
        if cached is not None and cached[0] == signature:
            return cached[1], cached[2]
        files = folder_files(folder)
        digest = files_digest(files)
        self._hashed[folder] = (signature, files, digest)
        return files, digest

    def _admit(self, folder: Path) -> Skill | None:
        files, digest = self._contents(folder)
        pin = self.artefacts.pinned("skill", folder)
        verdict = "unknown" if pin is None else "changed" if pin.sha256 != digest else ""
        if pin is None or verdict:
            self.artefacts.refuse("skill", folder.name, folder, digest, verdict)
            return None
        key = (folder, digest)
        if key not in self._parsed:
            path = folder / SKILL_FILE
            try:
                text = files.get(SKILL_FILE, b"").decode("utf-8")
                self._parsed[key] = parse_skill(text, path)
            except (UnicodeDecodeError, SkillError) as exc:
                log.warning("skipping skill: %s", exc)
                self._parsed[key] = None
        skill = self._parsed[key]
        if skill is None:
            return None
        self._announce(skill, "pinned", digest)
        return dataclasses.replace(skill, origin=pin_origin(pin), audience=self._audience(pin))

    def _audience(self, pin: Pin) -> str:
        """Whose prompts a pinned skill may reach: a skill the gate approved from a person's gap
        only theirs (a rule older versions did not keep: applied when it loads)."""
        if pin.pinned_by != GATE or pin.proposal_id is None:
            return ""
        return self.artefacts.proposal_scope(pin.proposal_id)

    def _announce(self, skill: Skill, origin: str, digest: str) -> None:
        """Audit a load once per content per process."""
        key = f"{skill.path}:{digest}"
        if key in self._announced:
            return
        self._announced.add(key)
        self.artefacts.loaded("skill", skill.name, skill.path.parent, digest, origin)
