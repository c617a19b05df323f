"""Moved to `omega.turn.privileges` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.turn.privileges`."""

from omega.turn.privileges import *  # noqa: F403
