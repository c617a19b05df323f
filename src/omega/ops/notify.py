"""sd_notify without a dependency: tell systemd (Type=notify) that Omega is ready or stopping."""

from __future__ import annotations

import os
import socket


def sd_notify(state: str) -> bool:
    """Send `state` (e.g. "READY=1") to $NOTIFY_SOCKET; False when not run by systemd or the
    message could not be sent (never raises)."""
    address = os.environ.get("NOTIFY_SOCKET", "")
    if not address or address[0] not in "/@":
        return False
    target = "\0" + address[1:] if address[0] == "@" else address  # abstract namespace
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(target)
            sock.sendall(state.encode())
    except OSError:
        return False
    return True
