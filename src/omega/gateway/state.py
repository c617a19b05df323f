"""Moved to `omega.turn.state` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.turn.state`."""

from omega.turn.state import *  # noqa: F403
