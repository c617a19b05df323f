"""Moved to `omega.turn.prompt` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.turn.prompt`."""

from omega.turn.prompt import *  # noqa: F403
