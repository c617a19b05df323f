"""Attachments are saved under generated names only; new workspace images are found."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omega.gateway.attachments import (
    cleanup,
    new_images,
    read_own_file,
    save_attachments,
    snapshot_images,
)
from omega.types import Attachment

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_sender_names_are_never_used_as_paths(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    hostile = [
        Attachment(kind="image", data=b"\x89PNG\r\n\x1a\n...", name="../../etc/passwd"),
        Attachment(kind="document", data=b"%PDF-1.7", name="/abs/evil.sh"),
        Attachment(kind="image", data=b"??", name="x.png\x00.sh", mime_type="image/webp"),
        Attachment(kind="audio", data=b"data", name="..", mime_type="weird/type"),
    ]
    saved = save_attachments(inbox, hostile)
    assert len(saved) == 4
    for path in saved:
        assert path.parent == inbox
        assert ".." not in path.name and "/" not in path.name
        assert path.stat().st_mode & 0o777 == 0o600
    assert [p.suffix for p in saved] == [".png", ".pdf", ".webp", ".bin"]
    assert not (tmp_path / "etc").exists()
    cleanup(saved, tmp_path)
    assert list(inbox.iterdir()) == []


def test_new_and_rewritten_images_are_detected(tmp_path: Path) -> None:
    (tmp_path / "old.png").write_bytes(b"1")
    (tmp_path / "notes.txt").write_text("x")
    before = snapshot_images(tmp_path)
    (tmp_path / "chart.PNG").write_bytes(b"2")
    os.utime(tmp_path / "old.png", ns=(1, 10**18))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.png").write_bytes(b"3")
    found = new_images(before, snapshot_images(tmp_path))
    assert sorted(p.name for p in found) == ["chart.PNG", "old.png"]
    assert snapshot_images(tmp_path / "missing") == {}


def test_a_workspace_image_is_read_only_beneath_the_workspace(tmp_path: Path) -> None:
    """A person's folder swapped for a link (or an image that is one) is never read: the
    path is opened beneath the workspace with no symlink followed at any step."""
    workspace = tmp_path / "workspace"
    (workspace / "people" / "bob").mkdir(parents=True)
    (workspace / "people" / "bob" / "chart.png").write_bytes(b"\x89PNG mine")
    assert read_own_file(workspace / "people" / "bob" / "chart.png", workspace) == b"\x89PNG mine"
    (tmp_path / "elsewhere" / "bob").mkdir(parents=True)
    (tmp_path / "elsewhere" / "bob" / "key.png").write_bytes(b"secret")
    (workspace / "linked").symlink_to(tmp_path / "elsewhere")
    (workspace / "cfg.png").symlink_to(tmp_path / "elsewhere" / "bob" / "key.png")
    for path in (workspace / "linked" / "bob" / "key.png", workspace / "cfg.png"):
        with pytest.raises(OSError):
            read_own_file(path, workspace)
    with pytest.raises(OSError):
        read_own_file(tmp_path / "elsewhere" / "bob" / "key.png", workspace)
    cleanup([workspace / "linked" / "bob" / "key.png"], workspace)
    assert (tmp_path / "elsewhere" / "bob" / "key.png").exists()
