"""pydantic-ai, imported once and by one thread at a time, for the API providers
(providers.api): `prepare` loads it on a worker thread so that the first answer does not pay
for it, and a call made meanwhile waits for that import instead of racing it.
"""

from __future__ import annotations

import os
import threading

# pydantic-ai is imported by one thread at a time: `prepare` loads it on a worker thread, and a
# call made meanwhile on the event loop imported it too; the two met a circular import half-way
# ("cannot import name ... from partially initialized module") and the call failed.
SDK_LOCK = threading.RLock()
sdk_loaded = threading.Event()


def load_sdk() -> None:
    """Import pydantic-ai and the modules Omega uses from it, once (about a second)."""
    with SDK_LOCK:
        if sdk_loaded.is_set():
            return
        import pydantic_ai
        import pydantic_ai.direct  # noqa: F401

        import omega.tools.mcp
        import omega.tools.wrappers  # noqa: F401

        sdk_loaded.set()


# pydantic-ai prints a Logfire advertisement into a person's terminal on the first run of an
# agent; a chat is no place for it (its own switch; a user who sets it otherwise keeps that).
os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
