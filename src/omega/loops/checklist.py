"""Moved to `omega.checklist` (issue 16: one-way layers).

This name stays only so that branches written before the move keep importing; import from
`omega.checklist`."""

from omega.checklist import *  # noqa: F403
