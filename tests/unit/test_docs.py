"""The documentation site (mkdocs.yml, docs/): the README stays a front door of at most 300
lines, nothing in docs/ is orphaned, every configuration key is documented where it is
declared, and the strict build fails on a broken link or a page left out of the nav."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mkdocs.config import load_config
from pydantic import BaseModel, Field

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "omega_gen_docs", ROOT / "scripts" / "gen_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GEN = _gen_docs()


def _nav_pages(items: Any) -> list[str]:
    """Every page path named in mkdocs.yml's nav, however deep."""
    found: list[str] = []
    if isinstance(items, str):
        found.append(items)
    elif isinstance(items, list):
        for item in items:
            found += _nav_pages(item)
    elif isinstance(items, dict):
        for value in items.values():
            found += _nav_pages(value)
    return found


def test_the_readme_is_a_front_door_of_at_most_300_lines() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    # The two set-up commands stay exactly as they are.
    assert "make run     # install everything" in readme
    assert "make test    # install the dev tools too" in readme


def test_every_link_of_the_readme_leads_somewhere() -> None:
    # mkdocs checks the site's links; the README is read on GitHub, outside the site.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if not target.startswith(("http://", "https://"))]
    assert local, "the README links to the pages"
    assert [target for target in local if not (ROOT / target).exists()] == []


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    nav = _nav_pages(load_config(str(ROOT / "mkdocs.yml"))["nav"])
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    generated = {GEN.CONFIG_PAGE, GEN.COMMANDS_PAGE}
    assert sorted(pages - set(nav)) == [], "pages in docs/ that no nav entry names"
    assert sorted(set(nav) - pages - generated) == [], "nav entries with no page"
    assert len(nav) == len(set(nav)), "a page named twice in the nav"


def test_every_other_file_in_docs_is_referenced_by_a_page() -> None:
    texts = [path.read_text(encoding="utf-8") for path in DOCS.rglob("*.md")]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    others = [path for path in DOCS.rglob("*") if path.is_file() and path.suffix != ".md"]
    assert others, "docs/ holds images and the JSON lines schema"
    orphans = [path.name for path in others if not any(path.name in text for text in texts)]
    assert orphans == []


def test_every_configuration_key_has_a_description() -> None:
    missing = GEN.undocumented()
    assert missing == [], f"document these keys where they are declared: {missing}"
    page = GEN.config_reference()
    for key in GEN.config_keys():
        assert f"`{key.name}`" in page and f"## `[{key.table}]`" in page


class _Toy(BaseModel):
    # What the first key does.
    first: int = 1
    bare: int = 0
    second: int = 2  # what the second does
    third: str = Field("", description="Asked by omega init")


def test_a_key_without_a_comment_or_description_is_found() -> None:
    assert GEN.describe(_Toy, "first") == "What the first key does."
    assert GEN.describe(_Toy, "second") == "What the second does."
    assert GEN.describe(_Toy, "third") == "Asked by omega init."
    # `bare` has nothing of its own, and never borrows the comment of the key above it: it is
    # what test_every_configuration_key_has_a_description finds in Omega's models.
    assert GEN.describe(_Toy, "bare") == ""


def test_the_command_reference_names_every_command() -> None:
    page = GEN.command_reference()
    for command in ("omega chat", "omega start", "omega people approve", "omega security audit"):
        assert f"## `{command}`" in page
    assert "`--jsonl`" in page


def test_the_strict_build_fails_on_a_broken_link_and_an_orphan_page(tmp_path: Path) -> None:
    site = tmp_path / "project"
    shutil.copytree(DOCS, site / "docs")
    shutil.copytree(ROOT / "scripts", site / "scripts")
    shutil.copy(ROOT / "mkdocs.yml", site / "mkdocs.yml")
    with (site / "docs" / "install.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [a page that is not there](no-such-page.md).\n")
    (site / "docs" / "orphan.md").write_text("# Nobody links here\n", encoding="utf-8")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=site,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr
    assert "orphan.md" in result.stderr


@pytest.mark.parametrize("page", ["reference/configuration.md", "reference/commands.md"])
def test_the_generated_pages_are_never_written_into_docs(page: str) -> None:
    assert not (DOCS / page).exists()
