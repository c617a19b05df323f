"""The Matrix channel plug-in: rooms and direct chats through a homeserver's client API, on
matrix-nio (the optional extra `matrix`). Declared as the `matrix` entry point of the
`omega.channels` group; nio is imported only when the channel is built."""

from __future__ import annotations

import importlib.util

from omega.channels.base import Channel
from omega.channels.matrix.checks import STATE_FILE, check_matrix, missing_settings
from omega.channels.matrix.config import MAX_MESSAGE_UNITS, MatrixConfig
from omega.channels.plugin import (
    Capabilities,
    ChannelContext,
    ChannelPlugin,
    ChannelUnavailableError,
    platform_proven,
)

__all__ = ["PLUGIN", "MatrixConfig"]

INSTALL = "pip install 'omega-agent[matrix]'"


def _build(ctx: ChannelContext) -> Channel:
    """The running channel; unavailable while matrix-nio or settings are missing."""
    assert isinstance(ctx.section, MatrixConfig)
    if importlib.util.find_spec("nio") is None:
        raise ChannelUnavailableError(f"the Matrix channel needs matrix-nio: {INSTALL}")
    missing = missing_settings(ctx.section)
    if missing:
        raise ChannelUnavailableError(f"[channel.matrix] needs {', '.join(missing)}")
    from omega.channels.builtin import report_dropped
    from omega.channels.matrix.channel import MatrixChannel
    from omega.channels.matrix.state import SyncState

    section = ctx.section
    owners = tuple(
        owner.partition(":")[2] for owner in ctx.config.auth.owners if owner.startswith("matrix:")
    )
    state = SyncState.load(ctx.paths.home / STATE_FILE, ctx.state())
    # An event skipped unread is audited and told to the owner, as Telegram's updates are.
    dropped = report_dropped(ctx.store, "matrix", "event") if ctx.store is not None else None
    return MatrixChannel(section, state, ctx.health(lambda: section.user_id), owners, dropped)


PLUGIN = ChannelPlugin(
    name="matrix",
    config_model=MatrixConfig,
    factory=_build,
    capabilities=Capabilities(
        typing=True,
        photos=True,
        voice=True,
        groups=True,
        max_message_length=MAX_MESSAGE_UNITS,
        markdown="html",
    ),
    checks={"matrix": check_matrix},
    reports_health=True,
    description="Matrix: rooms and direct chats on any homeserver (no end-to-end encryption)",
    sender_assurance=platform_proven,
    prompt_hint="Platform: Matrix. Markdown is supported (bold, italic, code blocks; no tables).",
)
