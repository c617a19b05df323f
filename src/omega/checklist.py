"""HEARTBEAT.md: the owner's monitoring checklist, edited by markers and by hand."""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from pathlib import Path

# Every prompt of the owner and every heartbeat carries the checklist: keep it small.
MAX_ITEMS = 40
MAX_CHECKLIST_CHARS = 8000
HEADER = "# Heartbeat checklist\n# Items Omega checks on every heartbeat. Edit freely.\n"


def read_checklist(path: Path) -> str | None:
    """The checklist text, or None when the file is missing or has no items."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if checklist_items(text) else None


def checklist_items(text: str) -> list[str]:
    """The item lines (not comments, headers or blanks)."""
    return [line for line in text.splitlines() if _is_item(line)]


def _is_item(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#") and not stripped.startswith("<!--")


def _item_text(line: str) -> str:
    text = line.strip()
    for prefix in ("- [ ] ", "- [x] ", "- [X] ", "- ", "* "):
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".heartbeat-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _diff(before: str, after: str, path: Path) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path.name}",
            tofile=f"b/{path.name}",
        )
    )


def add_item(path: Path, item: str) -> str:
    """Append `- item` unless an item with the same text exists (case-insensitive).

    Returns the unified diff of the change ("" when nothing changed).
    """
    item = " ".join(item.split())
    if not item:
        return ""
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    wanted = _item_text(item).casefold()
    if any(_item_text(line).casefold() == wanted for line in checklist_items(before)):
        return ""
    if len(checklist_items(before)) >= MAX_ITEMS or len(before) >= MAX_CHECKLIST_CHARS:
        raise ValueError(f"the heartbeat checklist is full ({MAX_ITEMS} items at most)")
    base = before if before else HEADER
    if not base.endswith("\n"):
        base += "\n"
    line = item if item.startswith(("- ", "* ")) else f"- {item}"
    after = base + line + "\n"
    _write_atomic(path, after)
    return _diff(before, after, path)


MIN_KEYWORD_CHARS = 3  # "e" must not match (and wipe) every item


def _matches(line: str, keyword: str) -> bool:
    """The item is the keyword, or holds it as whole words (at least MIN_KEYWORD_CHARS)."""
    text = " ".join(_item_text(line).split()).casefold()
    if text == _item_text(keyword):
        return True
    if len(keyword) < MIN_KEYWORD_CHARS:
        return False
    return re.search(rf"(?<!\w){re.escape(keyword)}(?!\w)", text) is not None


def remove_items(path: Path, keyword: str) -> str:
    """Remove every item that is `keyword` or holds it as whole words (case-insensitive);
    comments and headers stay.

    Returns the unified diff of the change ("" when nothing changed).
    """
    keyword = " ".join(keyword.split()).casefold()
    if not keyword or not path.exists():
        return ""
    before = path.read_text(encoding="utf-8")
    lines = before.splitlines(keepends=True)
    kept = [line for line in lines if not (_is_item(line) and _matches(line, keyword))]
    if len(kept) == len(lines):
        return ""
    after = "".join(kept)
    _write_atomic(path, after)
    return _diff(before, after, path)


def remove_line_of(path: Path, tag: str, exact: tuple[str, ...] = ()) -> str:
    """Remove only the item lines Omega added for one thing: those carrying `tag` (e.g.
    "limitation #12", not matching #120) or whose text is exactly one of `exact` (lines written
    before tags were kept). Nothing else goes, however many words it shares with them.

    Returns the unified diff of the change ("" when nothing changed)."""
    if not path.exists():
        return ""
    pattern = re.compile(rf"(?<!\w){re.escape(tag)}(?!\d)", re.IGNORECASE)
    wanted = {" ".join(text.split()).casefold() for text in exact if text.strip()}
    before = path.read_text(encoding="utf-8")
    lines = before.splitlines(keepends=True)

    def added_by_omega(line: str) -> bool:
        text = " ".join(_item_text(line).split())
        return bool(pattern.search(text)) or text.casefold() in wanted

    kept = [line for line in lines if not (_is_item(line) and added_by_omega(line))]
    if len(kept) == len(lines):
        return ""
    after = "".join(kept)
    _write_atomic(path, after)
    return _diff(before, after, path)
