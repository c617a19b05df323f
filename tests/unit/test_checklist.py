"""HEARTBEAT.md edits: add dedups case-insensitively, remove never touches comments/headers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.checklist import add_item, checklist_items, read_checklist, remove_items

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_add_creates_file_with_header_and_dedups(tmp_path: Path) -> None:
    path = tmp_path / "HEARTBEAT.md"
    assert read_checklist(path) is None
    diff = add_item(path, "Check disk space")
    assert "+- Check disk space" in diff
    assert add_item(path, "check DISK space") == ""
    assert add_item(path, "- Check disk space") == ""
    add_item(path, "Water the plants")
    assert checklist_items(path.read_text()) == ["- Check disk space", "- Water the plants"]
    assert path.stat().st_mode & 0o777 == 0o600


def test_remove_matches_items_only(tmp_path: Path) -> None:
    path = tmp_path / "HEARTBEAT.md"
    path.write_text(
        "# Disk checks below\n## disk section\n- Check disk space\n"
        "<!-- disk note -->\n- Water plants\n- DISK cleanup weekly\n"
    )
    diff = remove_items(path, "disk")
    assert "-- Check disk space" in diff
    assert (
        path.read_text() == "# Disk checks below\n## disk section\n<!-- disk note -->\n"
        "- Water plants\n"
    )
    assert remove_items(path, "nothing like this") == ""
    assert remove_items(path, "   ") == ""


def test_only_comments_means_no_checklist(tmp_path: Path) -> None:
    path = tmp_path / "HEARTBEAT.md"
    path.write_text("# My checklist\n\n<!-- empty for now -->\n")
    assert read_checklist(path) is None


@given(st.text(max_size=80))
def test_add_then_remove_round_trip(item: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "HEARTBEAT.md"
        add_item(path, item)
        words = " ".join(item.split())
        if words:
            remove_items(path, words)
        assert not [
            line
            for line in checklist_items(path.read_text() if path.exists() else "")
            if words and words.casefold() in line.casefold()
        ]
