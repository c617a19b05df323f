"""Checks of what may load: skill folders and tool files against their pins (content hash),
read straight from memory.db without opening it for writing (the audit changes nothing it does
not report), and the skills that would load now, whose MCP servers `walls` looks at."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.request import pathname2url

from omega.memory.artefacts import artefact_digest
from omega.ops.security.model import AuditContext, Finding
from omega.skills import SKILL_FILE, Skill, SkillCatalog, SkillError, parse_skill
from omega.skills.guarded import bundled_dir


def read_rows(db: Path, sql: str, url: str = "") -> list[tuple[object, ...]]:
    """Rows of one query on memory.db, opened read-only (or on the PostgreSQL store at `url`);
    [] when there is no database or the query fails (a database too old to have that table)."""
    if url:
        return _read_postgresql(url, sql)
    if not db.is_file():
        return []
    # Read-only; and with no -wal beside it (Omega is not running) immutable too, so SQLite
    # creates no -wal/-shm, which would copy memory.db's mode and change what is audited.
    wal = db.with_name(db.name + "-wal")
    uri = f"file:{pathname2url(str(db))}?mode=ro" + ("" if wal.exists() else "&immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5.0)
    except sqlite3.Error:
        return []
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def _read_postgresql(url: str, sql: str) -> list[tuple[object, ...]]:
    from omega.memory.postgres import PgConnection, StoreUnavailableError

    try:
        conn = PgConnection(url)
    except StoreUnavailableError:
        return []
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def read_pins(db: Path, url: str = "") -> dict[tuple[str, str], str]:
    """(kind, path relative to the home) -> pinned sha256; empty when there is no database."""
    rows = read_rows(db, "SELECT kind, path, sha256 FROM artefacts", url)
    return {(str(kind), str(path)): str(sha) for kind, path, sha in rows}


def bundled_names() -> set[str]:
    """Folder names of the skills shipped with Omega (a folder of that name never loads)."""
    folder = bundled_dir()
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


def artefacts(ctx: AuditContext) -> list[tuple[str, str, Path]]:
    """Every skill folder and tool file Omega would consider: (kind, name, path)."""
    found: list[tuple[str, str, Path]] = []
    taken = bundled_names()
    if ctx.paths.skills.is_dir():
        for folder in sorted(ctx.paths.skills.iterdir()):
            if folder.is_dir() and (folder / SKILL_FILE).is_file() and folder.name not in taken:
                found.append(("skill", folder.name, folder))
    if ctx.paths.tools.is_dir():
        found += [("tool", p.stem, p) for p in sorted(ctx.paths.tools.glob("*.py"))]
    return found


def verdict(ctx: AuditContext, pins: dict[tuple[str, str], str], kind: str, path: Path) -> str:
    """'' when `path` loads (pinned, unchanged), else 'unknown' or 'changed'."""
    rel = path.resolve().relative_to(ctx.paths.home.resolve()).as_posix()
    pinned = pins.get((kind, rel))
    if pinned is None:
        return "unknown"
    return "" if pinned == artefact_digest(path) else "changed"


def check_pins(ctx: AuditContext) -> list[Finding]:
    """Every skill and tool under $OMEGA_HOME is pinned, and still holds what was pinned."""
    pins = read_pins(ctx.paths.db, ctx.store_url)
    found: list[Finding] = []
    for kind, name, path in artefacts(ctx):
        why = verdict(ctx, pins, kind, path)
        if why == "unknown":
            found.append(
                Finding(
                    "pins",
                    "medium",
                    f"{kind} {name} is not pinned",
                    f"{path} was not installed by you nor approved, so it does not load; "
                    "something wrote it there",
                    f"read it; if you trust it: `omega {kind}s add {path}`, else delete it",
                    subject=f"{kind}:{name}",
                )
            )
        elif why == "changed":
            found.append(
                Finding(
                    "pins",
                    "high",
                    f"{kind} {name} changed since it was pinned",
                    f"{path} no longer hashes to its pin: it stopped loading, and something "
                    "edited it after you approved it",
                    f"compare it with your backup; if you trust it now: `omega {kind}s add {path}`",
                    subject=f"{kind}:{name}",
                )
            )
    return found


def loaded_skills(ctx: AuditContext) -> list[Skill]:
    """The skills that load now: the bundled ones and the pinned, unchanged folders."""
    skills = list(SkillCatalog(bundled_dir()).skills())
    pins = read_pins(ctx.paths.db, ctx.store_url)
    for kind, _name, path in artefacts(ctx):
        if kind != "skill" or verdict(ctx, pins, kind, path):
            continue
        try:
            skills.append(
                parse_skill((path / SKILL_FILE).read_text(encoding="utf-8"), path / SKILL_FILE)
            )
        except (OSError, UnicodeDecodeError, SkillError):
            continue  # not parsed, not loaded: the loader says why in the log
    return skills
