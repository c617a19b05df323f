"""What the wheel carries besides Python modules (issue 41, `make dist`): every data file under
src/omega is matched by `[tool.setuptools.package-data]`, so an installed Omega finds its
migrations, prompts, bundled skills and web page where it reads them (importlib.resources and
the package folder), and the base dependencies leave the optional SDKs to their extras."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "omega"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def data_files() -> set[Path]:
    """Every file of the package that is not Python source or its bytecode."""
    return {
        path.relative_to(PACKAGE)
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }


def test_every_data_file_is_packaged_and_every_pattern_matches_one() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["omega"]
    packaged: set[Path] = set()
    for pattern in patterns:
        found = {p.relative_to(PACKAGE) for p in PACKAGE.glob(pattern) if p.is_file()}
        assert found, f"package-data pattern {pattern!r} matches nothing"
        packaged |= found
    missing = sorted(str(p) for p in data_files() - packaged)
    assert not missing, f"not in the wheel (add to package-data): {missing}"


def test_the_data_omega_reads_is_where_it_reads_it() -> None:
    from omega.memory.migrations import latest_version
    from omega.skills import bundled_skill_names

    assert latest_version() >= 24  # migrations/*.sql through importlib.resources
    for name in ("SYSTEM_PROMPT.md", "WELCOME.toml"):
        assert resources.files("omega.prompts").joinpath(name).is_file()
    assert "skill-creator" in bundled_skill_names()
    web = resources.files("omega.web")
    assert web.joinpath("templates", "base.html").is_file()
    assert web.joinpath("static", "app.js").is_file()
    assert resources.files("omega").joinpath("py.typed").is_file()


def test_the_base_install_leaves_other_providers_sdks_to_extras() -> None:
    project = PYPROJECT["project"]
    base = " ".join(project["dependencies"])
    for heavy in ("anthropic", "google", "[mcp", "fastmcp", "llama-cpp", "tiktoken"):
        assert heavy not in base, heavy
    extras = project["optional-dependencies"]
    assert "pydantic-ai-slim[anthropic]" in extras["anthropic"][0]
    assert "pydantic-ai-slim[google]" in extras["gemini"][0]
    assert any("pydantic-ai-slim[mcp]" in r for r in extras["mcp"])
    # The test suite exercises them all.
    assert "omega-agent[anthropic,gemini,mcp]" in extras["dev"]
