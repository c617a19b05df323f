"""Package faces that load on first use: a package's `__init__` names what it offers, and a
command that needs one name does not pay for importing all of them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def loader(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `homes` maps each name to its submodule.

    A name may not be a submodule's too: once that submodule is imported, Python binds the
    module under the name and `from package import name` would return it instead."""
    clash = sorted(set(homes) & set(homes.values()))
    if clash:
        raise ValueError(f"{package}: {clash} name both a submodule and a value")

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return attribute
