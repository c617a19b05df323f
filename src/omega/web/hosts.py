"""Which `Host` a request may name: the page answers only at its own addresses.

DNS rebinding: a site the owner visits makes its own host name resolve to 127.0.0.1, and the
owner's browser then talks to this server as that site, same-origin. The browser still names
that site in the `Host` header, so a request whose Host is not one of the page's own addresses
is refused (400) before anything else is looked at (no login, no session lookup).

The page's own addresses, at the port the request reached: `localhost`, `127.0.0.1`, `[::1]`,
the `[web] host` it listens on, and the IP address the connection reached (an IP literal, which
no DNS answer can stand for; with `host = "0.0.0.0"` it is the machine's address the browser
used); and the host of `[web] public_url` at its port (443 when it names none), as a TLS proxy
forwards it.
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_PORT = re.compile(r"[0-9]{1,5}")
DEFAULT_PORTS = {"http": 80, "https": 443}


def bracketed(host: str) -> str:
    """A host as a Host header names it: lower case, an IPv6 address in brackets."""
    host = host.strip().lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def split_host(value: str) -> tuple[str, int | None] | None:
    """The name and the port (None when not given) of a Host header; None when it is not a
    valid one (empty, an unbracketed IPv6 address, a port that is not a number)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value.partition("]")
        if not bracket:
            return None
        name += bracket
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    if not name or name == "[]":
        return None
    if not rest:
        return name, None
    if rest[0] != ":" or not _PORT.fullmatch(rest[1:]):
        return None
    return name, int(rest[1:])


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


class HostCheck:
    """The page's own addresses, from `[web] host` and `[web] public_url`."""

    def __init__(self, bind_host: str, public_url: str = "") -> None:
        names = set(LOOPBACK_NAMES)
        bind = bracketed(bind_host)
        if bind and not _unspecified(bind):  # "0.0.0.0", "::": no address a browser names
            names.add(bind)
        self.names = frozenset(names)
        self.public: tuple[str, int] | None = None
        if public_url:
            try:
                parts = urlsplit(public_url)
                port = parts.port or DEFAULT_PORTS.get(parts.scheme, 443)
            except ValueError:  # the config refuses such a public_url; nothing to allow
                return
            if parts.hostname:
                self.public = (bracketed(parts.hostname), port)

    def allows(self, host: str, server: Sequence[object] | None) -> bool:
        """Whether a request with this Host header, on a connection that reached `server`
        (ASGI's `(address, port)` of the listening socket), is for this page."""
        found = split_host(host)
        if found is None:
            return False
        name, port = found
        public_port = port if port is not None else DEFAULT_PORTS["https"]
        if self.public is not None and (name, public_port) == self.public:
            return True
        if not server or len(server) < 2:
            return False
        local, listening = server[0], server[1]
        if (port if port is not None else DEFAULT_PORTS["http"]) != listening:
            return False
        return name in self.names or name == bracketed(str(local))


class RefusalLog:
    """When a refused Host is worth a log line: the first request for a name, then at most one
    a `window` (seconds) with the count of those refused meanwhile, for at most `names` names
    (the oldest forgotten). A page rebinding to this server, or a scanner making up names, so
    cannot fill the log one line a request."""

    def __init__(self, window: float = 600.0, names: int = 64) -> None:
        self.window = window
        self.names = names
        self._seen: OrderedDict[str, tuple[float, int]] = OrderedDict()  # last line, unlogged

    def record(self, host: str, now: float | None = None) -> int | None:
        """Count a refusal for `host`; the refusals left unlogged before it when this one is
        to be logged, else None."""
        now = time.monotonic() if now is None else now
        key = host[:80]
        last = self._seen.pop(key, None)
        if last is not None and now - last[0] < self.window:
            self._seen[key] = (last[0], last[1] + 1)
            return None
        self._seen[key] = (now, 0)
        while len(self._seen) > self.names:
            self._seen.popitem(last=False)
        return last[1] if last is not None else 0
