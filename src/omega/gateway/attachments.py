"""Incoming attachments saved under generated names, and new workspace images to send."""

from __future__ import annotations

import logging
import os
import stat
import uuid
from pathlib import Path

from omega.paths import PRIVATE_FILE_MODE
from omega.types import Attachment, ImageInput

log = logging.getLogger(__name__)

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF87a", ".gif"),
    (b"GIF89a", ".gif"),
    (b"%PDF-", ".pdf"),
)
_MIME = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "audio/ogg": ".ogg",
    "audio/mpeg": ".mp3",
    "video/mp4": ".mp4",
}


def _extension(attachment: Attachment) -> str:
    """From the bytes or the declared type, never from the sender's file name."""
    data = attachment.data
    for magic, ext in _MAGIC:
        if data.startswith(magic):
            return ext
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return _MIME.get(attachment.mime_type.lower().strip(), ".bin")


_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def images_for_model(found: list[Attachment]) -> tuple[ImageInput, ...]:
    """The attached images a vision model can take (png, jpeg, gif, webp by their bytes or
    declared type), within the attachment size limit."""
    images = []
    for attachment in found:
        media_type = _IMAGE_TYPES.get(_extension(attachment))
        if media_type and len(attachment.data) <= MAX_ATTACHMENT_BYTES:
            images.append(ImageInput(attachment.data, media_type))
    return tuple(images)


def sees_images(provider: object) -> bool:
    """Whether the provider shows images to its model (those without `sees_images` do not)."""
    check = getattr(provider, "sees_images", None)
    return bool(check()) if callable(check) else False


def save_attachments(inbox: Path, attachments: list[Attachment]) -> list[Path]:
    """Write each attachment to `inbox` under a fresh random name (0600); return the paths."""
    saved: list[Path] = []
    if not attachments:
        return saved
    inbox.mkdir(parents=True, exist_ok=True)
    for attachment in attachments:
        if len(attachment.data) > MAX_ATTACHMENT_BYTES:
            log.warning(
                "attachment of %d bytes skipped (limit %d)",
                len(attachment.data),
                MAX_ATTACHMENT_BYTES,
            )
            continue
        path = inbox / f"{attachment.kind}-{uuid.uuid4().hex}{_extension(attachment)}"
        try:
            path.write_bytes(attachment.data)
            path.chmod(PRIVATE_FILE_MODE)
        except OSError as exc:
            log.warning("could not save attachment: %s", exc)
            continue
        saved.append(path)
    return saved


def cleanup(paths: list[Path]) -> None:
    """Remove temporary files; failures are logged, never raised."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s: %s", path, exc)


def snapshot_images(workspace: Path) -> dict[Path, int]:
    """Top-level image files in the workspace with their modification times; symlinks and
    hard links are never images of ours (`cfg.png -> ../config.toml`)."""
    try:
        entries = list(workspace.iterdir())
    except OSError:
        return {}
    found: dict[Path, int] = {}
    for entry in entries:
        if entry.suffix.lower() in IMAGE_EXTENSIONS:
            try:
                info = entry.lstat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                found[entry] = info.st_mtime_ns
    return found


def read_own_file(path: Path, limit: int = 50 * 1024 * 1024) -> bytes:
    """Read a regular file that is no link (O_NOFOLLOW, one hard link), at most `limit` bytes;
    OSError otherwise, so a file swapped for a link after the snapshot is not sent."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise OSError(f"{path.name} is not a plain file of the workspace")
        if info.st_size > limit:
            raise OSError(f"{path.name} is larger than {limit} bytes")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    finally:
        os.close(fd)


def new_images(before: dict[Path, int], after: dict[Path, int]) -> list[Path]:
    """Images created or rewritten between two snapshots, oldest first."""
    return sorted(
        (p for p, mtime in after.items() if before.get(p) != mtime), key=lambda p: after[p]
    )
