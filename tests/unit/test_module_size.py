"""No module of src/omega over ~400 lines without a reason written at its top (ARCHITECTURE §13).

A module longer than `MAX_LINES` must say in its module docstring why it is one module, in a
sentence that contains the fixed phrase `REASON_PHRASE` ("One module because ..."); otherwise
split it by job. The phrase is fixed so this test (and a reader using grep) can find the reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import omega

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

SRC = Path(omega.__file__).resolve().parent
MAX_LINES = 400
REASON_PHRASE = "One module because"

# Modules another change of issue 26 is reshaping at the same time (the composition root, the
# pipeline and the command table); each leaves this list when that change lands, by shrinking
# under MAX_LINES or by gaining the reason. The last test fails while an entry is stale.
PENDING: frozenset[str] = frozenset()


def line_count(path: Path) -> int:
    """How many lines the file has."""
    return len(path.read_text(encoding="utf-8").splitlines())


def has_reason(path: Path) -> bool:
    """Whether the module docstring says why the module is one module."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return REASON_PHRASE in " ".join(docstring.split())


def oversized_without_reason(root: Path) -> list[str]:
    """Modules under `root` (paths relative to it) over MAX_LINES lines with no reason."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if line_count(path) > MAX_LINES and not has_reason(path)
    )


def test_every_long_module_says_why_it_is_one() -> None:
    found = [name for name in oversized_without_reason(SRC) if name not in PENDING]
    assert not found, (
        f"over {MAX_LINES} lines without '{REASON_PHRASE} ...' in the module docstring "
        f"(split the module by job, or write why it is one): {found}"
    )


def test_no_stale_pending_entry() -> None:
    stale = sorted(name for name in PENDING if name not in oversized_without_reason(SRC))
    assert not stale, f"remove from PENDING (now short enough or with a reason): {stale}"


@pytest.mark.parametrize(
    ("docstring", "lines", "flagged"),
    [
        ("A parser.", MAX_LINES, False),  # at the limit: fine
        ("A parser.", MAX_LINES + 1, True),  # over it, no reason
        ("A parser.\n\nOne module because\nthe grammar is one table.", MAX_LINES + 1, False),
        ("A parser; one module since it is long.", MAX_LINES + 1, True),  # not the phrase
    ],
)
def test_the_rule_flags_what_it_should(
    tmp_path: Path, docstring: str, lines: int, flagged: bool
) -> None:
    body = [f'"""{docstring}"""'] + [
        f"X{i} = {i}" for i in range(lines - len(docstring.splitlines()))
    ]
    (tmp_path / "mod.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    assert line_count(tmp_path / "mod.py") == lines
    assert oversized_without_reason(tmp_path) == (["mod.py"] if flagged else [])
