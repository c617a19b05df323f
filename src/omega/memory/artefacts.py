"""The registry of what may run: skill folders and tool files pinned by content hash.

A skill or human tool under $OMEGA_HOME loads only when a pin names its path and its content
still hashes to the pinned sha256. Pins are made by the owner (`omega skills add`, `omega tools
add`, approving a proposal) or by the gate's rules in autonomous mode; nothing the model writes
makes one. A file that is unknown or changed is refused and noted once per content, so the owner
hears about it once. Every pin, load and refusal is in the audit log.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from omega.memory.audit import AuditEntry
from omega.memory.db import utc_now
from omega.memory.store import Store

log = logging.getLogger(__name__)
Kind = Literal["skill", "tool"]
Origin = Literal["owner", "approved"]
MAX_FILE_BYTES = 1_000_000
LARGE = b"large file, sha256 "  # how a folder's digest names a file over MAX_FILE_BYTES


def file_digest(data: bytes) -> str:
    """The sha256 of some bytes, hex."""
    return hashlib.sha256(data).hexdigest()


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every regular file under a folder (hidden ones too), by relative path; symlinks count as
    their target path text so swapping one changes the digest."""
    found: dict[str, bytes] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[relative] = b"symlink:" + str(path.readlink()).encode()
        elif path.is_file():
            try:
                found[relative] = _pinned_bytes(path)
            except OSError:
                found[relative] = b"unreadable"
    return found


def _pinned_bytes(path: Path) -> bytes:
    """A file's bytes as pinned: the file itself, or for one over MAX_FILE_BYTES (a program a
    skill runs, say) the sha256 of all of it, read in blocks: a byte changed anywhere in it
    changes the folder's digest, and memory stays bounded."""
    with path.open("rb") as handle:
        head = handle.read(MAX_FILE_BYTES + 1)
        if len(head) <= MAX_FILE_BYTES:
            return head
        whole = hashlib.sha256(head)
        for block in iter(lambda: handle.read(1 << 20), b""):
            whole.update(block)
    return LARGE + whole.hexdigest().encode()


def pinned_form(data: bytes) -> bytes:
    """What a folder's digest takes of a file holding `data` (as `folder_files` reads it)."""
    return data if len(data) <= MAX_FILE_BYTES else LARGE + file_digest(data).encode()


def files_digest(files: dict[str, bytes]) -> str:
    """One digest for a set of files: sha256 over sorted 'path NUL sha256' lines."""
    lines = "".join(f"{name}\0{file_digest(data)}\n" for name, data in sorted(files.items()))
    return file_digest(lines.encode())


def artefact_digest(path: Path) -> str:
    """The digest of a skill folder or a single tool file ('' when it does not exist)."""
    if path.is_dir():
        return files_digest(folder_files(path))
    try:
        return file_digest(path.read_bytes())
    except OSError:
        return ""


@dataclass(frozen=True)
class Pin:
    """One artefact allowed to load."""

    kind: str
    name: str
    path: str
    sha256: str
    origin: str
    proposal_id: int | None
    pinned_by: str


@dataclass(frozen=True)
class Refusal:
    """A file that was not loaded, and why."""

    id: int
    kind: str
    name: str
    path: str
    sha256: str
    reason: str


class ArtefactStore:
    """The artefacts and artefact_refusals tables; safe to call from any thread."""

    def __init__(self, store: Store, home: Path) -> None:
        self.store = store
        self.home = home

    def relative(self, path: Path) -> str:
        """A path as stored: relative to $OMEGA_HOME."""
        return path.resolve().relative_to(self.home.resolve()).as_posix()

    def pin(
        self,
        kind: Kind,
        name: str,
        path: Path,
        *,
        origin: Origin,
        by: str,
        proposal_id: int | None = None,
        digest: str = "",
    ) -> Pin:
        """Pin what `path` holds now (replacing an earlier pin of that path), and audit it.
        With `digest` (of content the caller read once and checked, or wrote itself) that
        digest is pinned instead of reading the path again: a file swapped in since then does
        not match the pin and never loads."""
        digest = digest or artefact_digest(path)
        if not digest:
            raise FileNotFoundError(f"nothing to pin at {path}")
        rel = self.relative(path)
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO artefacts (kind, name, path, sha256, origin, proposal_id, pinned_by, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, path) DO UPDATE "
                "SET name = excluded.name, sha256 = excluded.sha256, origin = excluded.origin, "
                "proposal_id = excluded.proposal_id, pinned_by = excluded.pinned_by, "
                "created_at = excluded.created_at",
                (kind, name, rel, digest, origin, proposal_id, by, utc_now()),
            )
        self._audit("artefact:pinned", kind, name, rel, digest, f"origin: {origin}, by: {by}")
        return Pin(kind, name, rel, digest, origin, proposal_id, by)

    def pinned(self, kind: Kind, path: Path) -> Pin | None:
        """The pin of a path, if any."""
        rows = self.store.query(
            "SELECT * FROM artefacts WHERE kind = ? AND path = ?", (kind, self.relative(path))
        )
        if not rows:
            return None
        row = rows[0]
        return Pin(
            row["kind"],
            row["name"],
            row["path"],
            row["sha256"],
            row["origin"],
            row["proposal_id"],
            row["pinned_by"],
        )

    def verdict(self, kind: Kind, name: str, path: Path, digest: str) -> str:
        """'' when `path` with this digest may load, else why not ('unknown' or 'changed')."""
        pin = self.pinned(kind, path)
        if pin is None:
            return "unknown"
        if pin.sha256 != digest:
            return "changed"
        return ""

    def proposal_scope(self, proposal_id: int) -> str:
        """Whose gap a proposal came from (person:<channel>:<id>, "" the owner's or Omega's)."""
        rows = self.store.query("SELECT scope FROM proposals WHERE id = ?", (proposal_id,))
        return str(rows[0]["scope"] or "") if rows else ""

    def refuse(self, kind: Kind, name: str, path: Path, digest: str, reason: str) -> bool:
        """Note a refused file; True the first time this content is refused (then audited)."""
        rel = self.relative(path)
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO artefact_refusals (kind, name, path, sha256, reason, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (kind, name, rel, digest, reason, utc_now()),
            )
            new = cursor.rowcount == 1
        if new:
            log.warning("%s %s at %s not loaded: %s (sha256 %s)", kind, name, rel, reason, digest)
            self._audit("artefact:refused", kind, name, rel, digest, reason)
        return new

    def loaded(self, kind: Kind, name: str, path: Path, digest: str, origin: str) -> None:
        """Audit that an artefact was loaded (once per content per process, by the caller)."""
        rel = self.relative(path) if path.is_relative_to(self.home) else str(path)
        self._audit("artefact:loaded", kind, name, rel, digest, f"origin: {origin}")

    def unreported(self) -> list[Refusal]:
        """Refusals the owner has not been told about yet."""
        rows = self.store.query("SELECT * FROM artefact_refusals WHERE reported = 0 ORDER BY id")
        return [
            Refusal(r["id"], r["kind"], r["name"], r["path"], r["sha256"], r["reason"])
            for r in rows
        ]

    def mark_reported(self, refusal_id: int) -> bool:
        """Claim a refusal for reporting; False when someone else already did."""
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "UPDATE artefact_refusals SET reported = 1 WHERE id = ? AND reported = 0",
                (refusal_id,),
            )
            return cursor.rowcount == 1

    def _audit(self, event: str, kind: str, name: str, rel: str, digest: str, detail: str) -> None:
        try:
            self.store.audit(
                AuditEntry(
                    channel="evolution",
                    sender_id="omega",
                    status="denied" if event == "artefact:refused" else "ok",
                    event=event,
                    input_text=f"{kind} {name} {rel}",
                    detail=f"sha256: {digest}\n{detail}"[:2000],
                )
            )
        except Exception:
            log.exception("audit of %s failed", event)
