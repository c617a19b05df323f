"""Lessons Learned: `append_lesson` adds one bullet under a skill's `## Lessons Learned`
heading, keeping the rest of SKILL.md (its frontmatter, code fences, line endings) as it was,
and writes the file atomically."""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile
from pathlib import Path

from omega.paths import PRIVATE_FILE_MODE
from omega.skills.skills import _DELIMITERS, _FENCE_RE, _HEADING_RE, SkillError

LESSONS_HEADING = "## Lessons Learned"
_LESSONS_RE = re.compile(r"^ {0,3}##[ \t]+lessons[ \t]+learned[ \t#]*$", re.IGNORECASE)
_BULLET_RE = re.compile(r"^\s*[-*+][ \t]+(.*)$")


def _body_start(lines: list[str]) -> int:
    """Index of the first line after the frontmatter (0 when there is none)."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines) or lines[start].strip() not in _DELIMITERS:
        return 0
    delimiter = lines[start].strip()
    for end in range(start + 1, len(lines)):
        if lines[end].strip() == delimiter:
            return end + 1
    return 0


def _headings(lines: list[str], start: int) -> list[tuple[int, int]]:
    """(line index, level) of every Markdown heading outside code fences."""
    found = []
    in_fence = False
    for index in range(start, len(lines)):
        if _FENCE_RE.match(lines[index]):
            in_fence = not in_fence
            continue
        match = _HEADING_RE.match(lines[index])
        if match and not in_fence:
            found.append((index, len(match.group(1))))
    return found


def _with_lesson(text: str, lesson: str) -> str:
    """`text` with `- lesson` under its Lessons Learned heading (unchanged if already there)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the trailing newline; restored on join
    bullet = f"- {lesson}"
    headings = _headings(lines, _body_start(lines))
    heading = next((i for i, _ in headings if _LESSONS_RE.match(lines[i])), None)
    if heading is None:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", LESSONS_HEADING, "", bullet] if lines else [LESSONS_HEADING, "", bullet]
        return "\n".join(lines) + "\n"
    end = next((i for i, level in headings if i > heading and level <= 2), len(lines))
    section = lines[heading + 1 : end]
    for line in section:
        match = _BULLET_RE.match(line)
        if match and " ".join(match.group(1).split()) == lesson:
            return text
    last = max((i for i, line in enumerate(section) if line.strip()), default=None)
    if last is None:
        insert = ["", bullet] + ([""] if end < len(lines) else [])
        lines[heading + 1 : end] = insert
    else:
        at = heading + 1 + last
        # A list directly after a paragraph line would merge with it; separate them.
        insert = [bullet] if _BULLET_RE.match(lines[at]) else ["", bullet]
        lines[at + 1 : at + 1] = insert
    return "\n".join(lines) + "\n"


def _write_atomic(path: Path, text: str, newline: str) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, PRIVATE_FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def append_lesson(skill_path: Path, lesson: str) -> str:
    """Append `- <lesson>` under the skill's `## Lessons Learned` heading, atomically (0600).

    Returns the unified diff of the edit, or "" when the lesson was already there.
    """
    lesson = " ".join(lesson.split())
    if not lesson:
        raise SkillError(f"{skill_path}: a lesson must not be empty")
    try:
        with skill_path.open(encoding="utf-8", newline="") as handle:
            raw = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillError(f"{skill_path}: cannot read: {exc}") from None
    # Keep the file's own line endings; the edit itself works on "\n".
    newline = "\r\n" if "\r\n" in raw else "\n"
    old = raw.replace("\r\n", "\n")
    new = _with_lesson(old, lesson)
    if new == old:
        return ""
    try:
        _write_atomic(skill_path, new, newline)
    except OSError as exc:
        raise SkillError(f"{skill_path}: cannot write: {exc}") from None
    diff = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=str(skill_path),
        tofile=str(skill_path),
    )
    return "".join(diff)
