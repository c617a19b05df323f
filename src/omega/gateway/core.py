"""Moved to `omega.turn.core` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.turn.core`."""

from omega.turn.core import *  # noqa: F403
