"""macOS: the policy as a Seatbelt profile for `sandbox-exec -p <profile> command...`.

Seatbelt can deny inside an allowed folder and the last matching rule wins, so the profile is
written as: allow by default, close $HOME (`sandbox`) or the credential files (`rx`) and
$OMEGA_HOME, close every write, then reopen the workspace, the temp dir and what else the
policy lists.
"""

from __future__ import annotations

from omega.sandbox.modes import DEVICE_FILES, Layout, Mode, writable_places

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def _quote(path: str) -> str:
    """A path as an SBPL string literal."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpaths(paths: list[str]) -> str:
    return " ".join(f"(subpath {_quote(p)})" for p in paths)


def _literals(paths: list[str]) -> str:
    return " ".join(f"(literal {_quote(p)})" for p in paths)


def profile(
    mode: Mode,
    layout: Layout,
    *,
    own: list[str] | None = None,
    extra_read: list[str] | None = None,
    tcp_ports: list[int] | None = None,
) -> str:
    """The Seatbelt profile confining a command to `mode` (rwx: allow everything)."""
    lines = ["(version 1)", "(allow default)"]
    if mode == "rwx":
        return "\n".join(lines) + "\n"
    closed = [layout.omega_home]
    if mode == "sandbox" and layout.user_home:
        closed.append(layout.user_home)
    lines.append(f"(deny file-read* file-write* {_subpaths(closed)})")
    if mode == "rx":
        protected = [p for p in layout.protected() if p not in closed and p != "/dev"]
        lines.append(f"(deny file-read* file-write* {_subpaths(protected)})")
    lines.append("(deny file-write*)")
    writable = writable_places(layout)
    files = [*DEVICE_FILES, "/dev/dtracehelper"]
    readable = [p for p in [*(own or []), *(extra_read or [])] if p]
    if readable:
        lines.append(f"(allow file-read* {_subpaths(readable)})")
    lines.append(f"(allow file-read* file-write* {_subpaths(writable)})")
    lines.append(f"(allow file-read* file-write* {_literals(files)})")
    if tcp_ports is not None:
        lines.append("(deny network-bind (local tcp))")
        lines.append("(deny network-outbound (remote tcp))")
        for port in sorted(set(tcp_ports)):
            lines.append(f'(allow network-outbound (remote tcp "*:{port}"))')
    return "\n".join(lines) + "\n"
