"""A channel's health as it last reported it: kept current by the running channel, described
for status.

`omega status` runs in another process than `omega start`, so the running channel keeps a small
file (0600, omega.health_file) with its account and whether it is receiving (through its
`HealthReporter`); `/status` reads the same file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from omega.config import Config
from omega.health_file import read_health, write_health
from omega.paths import OmegaPaths

# A report older than this is from a channel that is no longer running (it rewrites it often).
STALE_SECS = 180
HEALTH_EVERY_SECS = 60.0  # a healthy channel rewrites its health file this often


class HealthReporter:
    """A running channel's health file, kept current: written on every change of state, and
    every `every` seconds while the state stays the same (so status can tell it is alive)."""

    def __init__(
        self,
        path: Path | None,
        account: Callable[[], str],
        every: float = HEALTH_EVERY_SECS,
        **fields: object,
    ) -> None:
        self._path = path
        self._account = account  # the channel's account as people read it, "" while unknown
        self._every = every
        self._fields = fields  # written with every report (e.g. WhatsApp's mode)
        self._state = ""
        self._written = 0.0

    def report(self, state: str, detail: str = "") -> None:
        """Record `state` (and why) unless it was written less than `every` seconds ago."""
        now = time.monotonic()
        if state == self._state and now - self._written < self._every:
            return
        self._state, self._written = state, now
        if self._path is not None:
            write_health(
                self._path, account=self._account(), state=state, detail=detail, **self._fields
            )


def describe_health(path: Path, now: float | None = None) -> str:
    """One line for status: the account and whether it is receiving, or why not."""
    data = read_health(path)
    if data is None:
        return "not running (no report yet)"
    account = str(data.get("account") or "")
    state = str(data.get("state") or "unknown")
    detail = str(data.get("detail") or "")
    updated = data.get("updated_at")
    age = (now or time.time()) - float(updated) if isinstance(updated, int | float) else None
    line = f"{account}, {state}" if account else state
    if detail:
        line += f" ({detail})"
    # (a failure is written once, at the start it happened in: it does not go stale)
    if age is not None and age > STALE_SECS and state not in ("stopped", "failed"):
        line += f"; last report {int(age // 60)} min ago, Omega is probably not running"
    return line


def channel_health_lines(config: Config, paths: OmegaPaths) -> list[tuple[str, str]]:
    """(channel, state) for each enabled channel that reports its health: Telegram, WhatsApp
    and every channel plug-in with a [channel.<name>] section: its health while `enabled =
    true` (the plug-in's own report, or the one Omega keeps for it), else "off"."""
    lines = []
    if config.channel.telegram.enabled:
        lines.append(("Telegram", describe_health(paths.channel_health("telegram"))))
    if config.channel.whatsapp.enabled:
        lines.append(("WhatsApp", describe_health(paths.channel_health("whatsapp"))))
    for name, section in sorted(config.channel.plugin_sections().items()):
        enabled = section.get("enabled") if isinstance(section, dict) else None
        if enabled is True or getattr(section, "enabled", False) is True:
            lines.append((name, "plug-in, " + describe_health(paths.channel_health(name))))
        else:
            lines.append((name, "plug-in, off"))
    return lines
