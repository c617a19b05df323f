"""Moved to `omega.turn.auth` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.turn.auth`."""

from omega.turn.auth import *  # noqa: F403
