"""mkdocs hooks (mkdocs.yml `hooks:`): the generated reference pages, made at build time.

The configuration and command references are made from the code by scripts/gen_docs.py and
added to the site as pages of their own (never written into docs/), so they cannot drift from
what this version of Omega reads and offers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("omega_gen_docs", HERE / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site's files, before the nav is built from them."""
    from mkdocs.structure.files import File

    gen = _gen_docs()
    for page, make in (
        (gen.CONFIG_PAGE, gen.config_reference),
        (gen.COMMANDS_PAGE, gen.command_reference),
    ):
        files.append(File.generated(config, page, content=make()))
    return files
