"""What an audit check looks at and what it reports: `AuditContext`, `Finding`, `CheckSpec`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from omega.config import Config
from omega.paths import OmegaPaths

if TYPE_CHECKING:
    from omega.sandbox import SandboxStatus

Severity = Literal["critical", "high", "medium", "low", "info"]
# Worst first: a finding's rank is its index (lower is worse).
SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low", "info")


def rank(severity: Severity) -> int:
    """How bad a severity is: 0 for critical, 4 for info."""
    return SEVERITIES.index(severity)


def milder(severity: Severity) -> Severity:
    """One step less severe (info stays info)."""
    return SEVERITIES[min(rank(severity) + 1, len(SEVERITIES) - 1)]


Repair = Callable[[], str]  # does the fix, returns one line saying exactly what changed


@dataclass(frozen=True)
class Finding:
    """One weakness (or, at `info`, one fact worth knowing) and what to do about it."""

    check: str  # the check's stable id
    severity: Severity
    title: str
    detail: str
    fix: str = ""
    subject: str = ""  # what it is about when a check finds several (a path, a variable)
    repair: Repair | None = field(default=None, compare=False, repr=False)

    @property
    def id(self) -> str:
        """Stable across runs: the check's id, then the subject when there is one."""
        return f"{self.check}:{self.subject}" if self.subject else self.check

    @property
    def fixable(self) -> bool:
        """Whether `omega security audit --fix` repairs it."""
        return self.repair is not None


@dataclass
class AuditContext:
    """What the checks read: the configuration, the home, the environment Omega starts with."""

    config: Config
    paths: OmegaPaths
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    euid: int = field(default_factory=lambda: os.geteuid() if hasattr(os, "geteuid") else -1)
    status: SandboxStatus | None = None  # probed once, on first use, when not given
    # How plug-in channels know their senders, by name (their sender_assurance), where the
    # caller loaded them; the shipped channels are known without (access.sender_proof).
    proofs: Mapping[str, str] = field(default_factory=dict)

    @property
    def store_url(self) -> str:
        """The PostgreSQL store's URL when memory is there ('' : memory.db)."""
        from omega.memory.db import STORE_URL_ENV

        return self.environ.get(STORE_URL_ENV, "").strip() or self.config.store.url

    @cached_property
    def sandbox(self) -> SandboxStatus:
        """The configured sandbox mode and the walls that enforce it here."""
        if self.status is not None:
            return self.status
        from omega.sandbox import probe

        return probe(self.config.sandbox.mode)

    def reloaded(self) -> AuditContext:
        """The same context with config.toml read again (after a fix changed it) and the
        sandbox probed again; the old config when the file no longer loads."""
        from omega.config import ConfigError, load_config

        try:
            config = load_config(self.paths.config, self.environ)
        except ConfigError:
            config = self.config
        return AuditContext(config, self.paths, self.environ, self.euid, self.status, self.proofs)

    @property
    def user_home(self) -> Path | None:
        """The account's home folder ($HOME), where the claude CLI keeps its own login."""
        home = self.environ.get("HOME", "").strip()
        return Path(home) if home and home != "/" else None

    @property
    def confined(self) -> bool:
        """Whether commands the model runs are confined by the OS sandbox here."""
        return self.sandbox.mode != "rwx" and not self.sandbox.degraded


CheckFn = Callable[[AuditContext], list[Finding]]


@dataclass(frozen=True)
class CheckSpec:
    """One entry of the registry: a stable id, what it looks at, and the function."""

    id: str
    title: str
    run: CheckFn
