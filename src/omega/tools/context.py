"""What a tool sees of the run it serves: its deps (who asked, on which channel, in which
folder), made current around each call, and the error a tool raises to tell the model.

Both the registry and its pydantic-ai wrappers import this module; it imports neither.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass

from omega.errors import OmegaError


class ToolError(OmegaError):
    """A tool could not do what was asked; the message goes back to the model, the turn goes on."""


class FailedOutput(str):
    """A tool's answer that reports a failure the model should read as it is (a shell command
    that exited non-zero): the text goes to the model unchanged, the record says it failed."""

    __slots__ = ()


@dataclass(frozen=True)
class ToolDeps:
    """Per-run facts tools may rely on; they come from Omega, never from the model."""

    sender_id: str = ""
    channel: str = ""
    workspace: str = ""  # this person's folder ("": the tools' own workspace, the owner's)
    # The conversation answered (Context.thread) and whether it is a group room's: there,
    # memory search stays inside that conversation.
    thread: str = ""
    group: bool = False
    call_id: str = ""  # the model's id of the tool call running now (set by the toolset)


# The run's deps, set around each tool call by the registry's toolset, so plain functions (no
# pydantic-ai RunContext in their signature, hence no pydantic-ai import) can still see them.
_CURRENT_DEPS: ContextVar[ToolDeps | None] = ContextVar("omega_tool_deps", default=None)


def current_deps() -> ToolDeps:
    """The dependencies of the run whose tool is executing now (empty outside a run)."""
    return _CURRENT_DEPS.get() or ToolDeps()


def set_current_deps(deps: ToolDeps) -> Token[ToolDeps | None]:
    """Make `deps` the current run's dependencies; reset with the returned token."""
    return _CURRENT_DEPS.set(deps)


def reset_current_deps(token: Token[ToolDeps | None]) -> None:
    """Undo `set_current_deps`."""
    _CURRENT_DEPS.reset(token)
