"""Projects: `projects/<name>/ROLE.md`, instructions prepended to the system prompt when active."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

ROLE_FILE = "ROLE.md"


@dataclass(frozen=True)
class Project:
    """One project folder with a non-empty ROLE.md."""

    name: str
    path: Path
    instructions: str


class ProjectCatalog:
    """The projects in one folder, re-read only when a ROLE.md changes (hot reload)."""

    def __init__(self, projects_dir: Path) -> None:
        self.projects_dir = projects_dir
        # folder name -> ((mtime_ns, size), project or None for an empty/unreadable ROLE.md),
        # so unchanged files are never re-read.
        self._cache: dict[str, tuple[tuple[int, int], Project | None]] = {}
        self._lock = threading.Lock()

    def projects(self) -> dict[str, Project]:
        """Current projects by name, sorted; costs only stat calls when nothing changed."""
        with self._lock:
            seen: set[str] = set()
            for folder in self._folders():
                path = folder / ROLE_FILE
                try:
                    stat = path.stat()
                except OSError:
                    continue
                seen.add(folder.name)
                signature = (stat.st_mtime_ns, stat.st_size)
                cached = self._cache.get(folder.name)
                if cached is None or cached[0] != signature:
                    self._cache[folder.name] = (signature, _read_project(folder.name, path))
            for name in self._cache.keys() - seen:
                del self._cache[name]
            return {
                name: project
                for name, (_, project) in sorted(self._cache.items())
                if project is not None
            }

    def get(self, name: str) -> Project | None:
        """The project called `name` (exact match first, then case-insensitive), or None."""
        projects = self.projects()
        wanted = name.strip()
        if wanted in projects:
            return projects[wanted]
        folded = wanted.casefold()
        return next((p for key, p in projects.items() if key.casefold() == folded), None)

    def _folders(self) -> list[Path]:
        try:
            entries = sorted(self.projects_dir.iterdir())
        except OSError:
            return []
        # Hidden folders (.git, editor backups) are never projects.
        return [entry for entry in entries if not entry.name.startswith(".") and entry.is_dir()]


def _read_project(name: str, path: Path) -> Project | None:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("skipping project %r: cannot read %s: %s", name, path, exc)
        return None
    instructions = text.strip()
    if not instructions:
        return None
    return Project(name=name, path=path, instructions=instructions)
