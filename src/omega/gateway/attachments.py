"""Incoming attachments saved under generated names, and new workspace images to send."""

from __future__ import annotations

import logging
import os
import stat
import uuid
from pathlib import Path

from omega.tools import safe_fs
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
    """Write each attachment to `inbox` under a fresh random name (0600); return the paths.

    `inbox` lies in the workspace, which the model's commands may change: it is reached from
    its parent's descriptor without following a symlink, so a swapped-in link to `..` never
    takes an attachment elsewhere."""
    saved: list[Path] = []
    if not attachments:
        return saved
    try:
        folder = _open_folder(inbox)
    except OSError as exc:
        log.warning("could not open the inbox folder: %s", exc)
        return saved
    try:
        for attachment in attachments:
            if len(attachment.data) > MAX_ATTACHMENT_BYTES:
                log.warning(
                    "attachment of %d bytes skipped (limit %d)",
                    len(attachment.data),
                    MAX_ATTACHMENT_BYTES,
                )
                continue
            name = f"{attachment.kind}-{uuid.uuid4().hex}{_extension(attachment)}"
            try:
                fd = safe_fs.open_for_writing(folder, (name,))
                with os.fdopen(fd, "wb") as handle:
                    handle.write(attachment.data)
            except OSError as exc:
                log.warning("could not save attachment: %s", exc)
                continue
            saved.append(inbox / name)
    finally:
        os.close(folder)
    return saved


def _open_folder(folder: Path) -> int:
    """A descriptor of `folder` (made 0700 if missing), reached from its parent's without a
    symlink: the parent is Omega's (the workspace), the folder itself the model's to change."""
    parent = safe_fs.open_root(folder.parent)
    try:
        return safe_fs.open_folder(parent, (folder.name,), create=True)
    finally:
        os.close(parent)


def cleanup(paths: list[Path], root: Path) -> None:
    """Remove files beneath `root` (the workspace), reached without a symlink; failures are
    logged, never raised."""
    for path in paths:
        try:
            parts = _parts_beneath(path, root)
            fd = safe_fs.open_root(root)
            try:
                safe_fs.unlink_beneath(fd, parts)
            finally:
                os.close(fd)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            log.warning("could not remove %s: %s", path, exc)


def _parts_beneath(path: Path, root: Path) -> tuple[str, ...]:
    """`path` as components beneath `root`; ValueError if it is not beneath it."""
    if not path.is_relative_to(root):
        raise ValueError(f"{path} is not in {root}")
    parts = safe_fs.parts_of(path.relative_to(root).as_posix() or ".")
    if not parts:
        raise ValueError(f"{path} is {root} itself")
    return parts


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


def read_own_file(path: Path, root: Path, limit: int = 50 * 1024 * 1024) -> bytes:
    """Read a regular file with one link beneath `root` (the workspace), at most `limit`
    bytes, opened without following a symlink at any step; OSError otherwise, so a file or a
    folder swapped for a link after the snapshot is not sent."""
    parts = _parts_beneath(path, root) if path.is_relative_to(root) else None
    if parts is None:
        raise OSError(f"{path.name} is not in the workspace")
    base = safe_fs.open_root(root)
    try:
        fd = safe_fs.open_for_reading(base, parts)
    finally:
        os.close(base)
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise OSError(f"{path.name} is larger than {limit} bytes")
        return handle.read(limit)


def new_images(before: dict[Path, int], after: dict[Path, int]) -> list[Path]:
    """Images created or rewritten between two snapshots, oldest first."""
    return sorted(
        (p for p, mtime in after.items() if before.get(p) != mtime), key=lambda p: after[p]
    )
