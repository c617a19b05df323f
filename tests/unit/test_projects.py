"""Projects: ROLE.md listing, hot reload, case-insensitive lookup."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omega.skills import Project, ProjectCatalog
from omega.skills import projects as projects_module

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def write_role(projects_dir: Path, name: str, text: str) -> Path:
    path = projects_dir / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bump(path: Path, text: str) -> None:
    """Rewrite a file and move its mtime forward, so coarse clocks cannot hide the edit."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10_000_000, before + 10_000_000))


def test_listing(tmp_path: Path) -> None:
    role = write_role(tmp_path, "Work", "\n  You are my work assistant.  \n\n")
    write_role(tmp_path, "home", "\ufeffHome things.\r\n")
    write_role(tmp_path, "empty", " \n\t\n")
    (tmp_path / "no-role").mkdir()
    write_role(tmp_path, ".hidden", "Hidden.")
    (tmp_path / "file.md").write_text("not a folder")
    projects = ProjectCatalog(tmp_path).projects()
    assert list(projects) == ["Work", "home"]
    assert projects["Work"] == Project("Work", role, "You are my work assistant.")
    assert projects["home"].instructions == "Home things."


def test_missing_dir(tmp_path: Path) -> None:
    catalog = ProjectCatalog(tmp_path / "projects")
    assert catalog.projects() == {}
    assert catalog.get("x") is None
    write_role(tmp_path / "projects", "late", "Late.")
    assert list(catalog.projects()) == ["late"]


def test_hot_reload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []
    real = projects_module._read_project

    def counting(name: str, path: Path) -> Project | None:
        reads.append(path)
        return real(name, path)

    monkeypatch.setattr(projects_module, "_read_project", counting)
    alpha = write_role(tmp_path, "alpha", "Alpha v1.")
    beta = write_role(tmp_path, "beta", "Beta.")
    catalog = ProjectCatalog(tmp_path)
    first = catalog.projects()
    assert len(reads) == 2

    again = catalog.projects()
    assert len(reads) == 2
    assert again["alpha"] is first["alpha"]

    bump(alpha, "Alpha version two.")
    edited = catalog.projects()
    assert reads[2:] == [alpha]
    assert edited["alpha"].instructions == "Alpha version two."
    assert edited["beta"] is first["beta"]

    write_role(tmp_path, "gamma", "Gamma.")
    assert list(catalog.projects()) == ["alpha", "beta", "gamma"]

    beta.unlink()
    beta.parent.rmdir()
    assert list(catalog.projects()) == ["alpha", "gamma"]

    bump(alpha, "")
    assert list(catalog.projects()) == ["gamma"]
    bump(alpha, "Back again.")
    assert catalog.projects()["alpha"].instructions == "Back again."


def test_get_case_insensitive(tmp_path: Path) -> None:
    write_role(tmp_path, "Research", "Dig deep.")
    catalog = ProjectCatalog(tmp_path)
    for name in ("Research", "research", " RESEARCH "):
        found = catalog.get(name)
        assert found is not None
        assert found.name == "Research"
    assert catalog.get("other") is None


def test_get_prefers_exact_match(tmp_path: Path) -> None:
    write_role(tmp_path, "Work", "Upper.")
    write_role(tmp_path, "work", "Lower.")
    catalog = ProjectCatalog(tmp_path)
    if len(catalog.projects()) < 2:
        pytest.skip("case-insensitive filesystem")
    work = catalog.get("work")
    upper = catalog.get("Work")
    assert work is not None and work.instructions == "Lower."
    assert upper is not None and upper.instructions == "Upper."


def test_returned_dict_is_a_copy(tmp_path: Path) -> None:
    write_role(tmp_path, "one", "One.")
    catalog = ProjectCatalog(tmp_path)
    catalog.projects().clear()
    assert list(catalog.projects()) == ["one"]
