"""What enforces the configured mode here: `probe` asks the kernel for Landlock's ABI, looks for
bubblewrap and tries it once, checks for seccomp; `SandboxStatus` names the walls up and the
ones missing (for `omega status`, `/status`, the self-check and the owner's alert)."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from omega.sandbox import bwrap, landlock, seatbelt, seccomp
from omega.sandbox.modes import Mode

if TYPE_CHECKING:
    from omega.paths import OmegaPaths

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SandboxStatus:
    """The configured mode and the walls that enforce it here."""

    mode: Mode
    enforcement: str  # "landlock ABI 7", "seatbelt", or "none"
    degraded: bool  # the mode asks for confinement this system cannot give
    detail: str = ""
    namespace: str = ""  # the `bwrap` program when commands run in its namespace
    unix_filter: bool = False  # the seccomp filter refusing new Unix sockets is applied
    missing: tuple[str, ...] = ()  # walls this system could have and lacks, with the fix

    def walls(self) -> list[str]:
        """The walls up, the main one first."""
        found = [self.enforcement]
        if self.namespace:
            found.append("bubblewrap namespace")
        if self.unix_filter:
            found.append("seccomp unix-socket filter")
        return found

    def describe(self) -> str:
        """One line for `omega status` and `/status`."""
        if self.mode == "rwx":
            return "rwx - UNRESTRICTED: commands can read and write everything you can"
        if self.degraded:
            return f"{self.mode} - DEGRADED, commands run unconfined: {self.detail}"
        line = f"{self.mode} ({', '.join(self.walls())})"
        if self.missing:
            line += "; missing: " + "; ".join(self.missing)
        return line


def _linux_walls(
    mode: Mode, abi: int, namespace: str | None, filter_ok: bool | None
) -> tuple[str, bool, tuple[str, ...]]:
    """The namespace program ('' when none), whether the seccomp filter applies, and what is
    missing. The filter applies wherever the namespace does not hide path sockets: without
    it, in `rx` (all of `/` is shown, and sockets live in more places than /tmp and /run),
    and below Landlock ABI 6 (abstract sockets are not scoped, and the network namespace
    is shared). In `sandbox` mode with the namespace it stays off, so sockets a command
    makes in its own workspace keep working (tmux, ssh ControlMaster, test databases)."""
    program = bwrap.find() if namespace is None else namespace
    missing = []
    works, why = bwrap.usable(program) if program else (False, "")
    if not program:
        missing.append("bubblewrap namespace (install the bubblewrap package)")
    elif not works:
        missing.append(f"bubblewrap namespace (bwrap cannot create namespaces here: {why})")
        program = ""
    if filter_ok is None:
        filter_ok = seccomp.available()
    wanted = mode == "rx" or not program or abi < 6
    if wanted and not filter_ok:
        missing.append("seccomp unix-socket filter (not supported on this machine)")
    return program, wanted and filter_ok, tuple(missing)


def probe(
    mode: Mode,
    *,
    platform: str | None = None,
    abi: int | None = None,
    namespace: str | None = None,
    unix_filter: bool | None = None,
) -> SandboxStatus:
    """How `mode` can be enforced on this system (Landlock's ABI is asked of the kernel,
    bubblewrap is looked for on PATH and tried once; `namespace`="" means no bubblewrap)."""
    system = platform or sys.platform
    if mode == "rwx":
        return SandboxStatus(mode, "none", degraded=False, detail="unrestricted by configuration")
    if system.startswith("linux"):
        version = landlock.abi_version() if abi is None else abi
        if version >= 1:
            program, use_filter, missing = _linux_walls(mode, version, namespace, unix_filter)
            return SandboxStatus(
                mode,
                f"landlock ABI {version}",
                degraded=False,
                namespace=program,
                unix_filter=use_filter,
                missing=missing,
            )
        return SandboxStatus(
            mode, "none", degraded=True, detail="this Linux kernel does not offer Landlock"
        )
    if system == "darwin":
        if os.path.exists(seatbelt.SANDBOX_EXEC):
            return SandboxStatus(mode, "seatbelt", degraded=False)
        return SandboxStatus(mode, "none", degraded=True, detail="sandbox-exec is missing")
    return SandboxStatus(mode, "none", degraded=True, detail=f"no OS sandbox on {system}")


def degraded_alert(status: SandboxStatus, paths: OmegaPaths) -> str | None:
    """The owner alert for a degraded sandbox, once per distinct cause (remembered in
    $OMEGA_HOME); None when confined as configured or already alerted."""
    if not status.degraded:
        return None
    line = status.describe()
    try:
        if paths.sandbox_alerted.read_text(encoding="utf-8").strip() == line:
            return None
    except OSError:
        pass
    try:
        paths.sandbox_alerted.write_text(line + "\n", encoding="utf-8")
    except OSError:
        log.warning("could not record the sandbox alert in %s", paths.sandbox_alerted)
    return (
        f"Warning: the OS sandbox is not enforced here. Sandbox: {line}. Commands I run "
        "(shell, MCP servers, the claude CLI) can reach your files and Omega's secrets."
    )
