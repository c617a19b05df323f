"""Moved to `omega.turn.marker_context` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.turn.marker_context`."""

from omega.turn.marker_context import *  # noqa: F403
