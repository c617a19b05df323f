"""Human-implemented tools in $OMEGA_HOME/tools/<name>.py, loaded only when pinned.

A file loads only when the artefact registry pins its path and its bytes still hash to the
pinned sha256 (pinned by the owner: `omega tools add`, or approving a proposal while the file
exists and is shown). The bytes that were hashed are the bytes that run. Anything else (a file
the model wrote, one changed since) is refused, noted once for the owner, and never imported.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omega.memory.artefacts import ArtefactStore, file_digest
from omega.memory.store import Store

log = logging.getLogger(__name__)


def load_human_tools(store: Store, home: Path, tools_dir: Path) -> dict[str, Callable[..., Any]]:
    """The pinned, unchanged tool functions by name; refusals are noted, failures logged."""
    artefacts = ArtefactStore(store, home)
    found: dict[str, Callable[..., Any]] = {}
    for path in sorted(tools_dir.glob("*.py")):
        name = path.stem
        try:
            data = path.read_bytes()
        except OSError as exc:
            log.warning("tool file %s unreadable: %s", path.name, exc)
            continue
        digest = file_digest(data)
        verdict = artefacts.verdict("tool", name, path, digest)
        if verdict:
            artefacts.refuse("tool", name, path, digest, verdict)
            continue
        module = types.ModuleType(f"omega_user_tools.{name}")
        module.__file__ = str(path)
        try:
            # The bytes the owner pinned (hash checked above), never a model-written file.
            exec(compile(data, str(path), "exec"), module.__dict__)  # noqa: S102
        except Exception:
            log.exception("tool %s failed to load", name)
            continue
        function = getattr(module, name, None)
        if callable(function):
            found[name] = function
            artefacts.loaded("tool", name, path, digest, "pinned")
        else:
            log.warning("tool file %s has no function %s()", path.name, name)
    return found
