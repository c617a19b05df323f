"""This process as one replica among those sharing a database: its name, the machine and pid
namespace it runs in, and whether another replica's process is certainly gone.

One name per process serves the fleet's rows and leases (app.fleet), the inbox claims
(gateway.claims) and introspection's lease (evolution.introspection)."""

from __future__ import annotations

import functools
import os
import secrets
import socket


def pid_namespace() -> str:
    """This process's pid namespace (two containers may share a host name, never this)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def pid_space() -> str:
    """This machine and pid namespace: replicas with the same one see each other's pids."""
    return f"{socket.gethostname()} {pid_namespace()}".strip()


def pid_alive(pid: int) -> bool:
    """Whether a process of this pid namespace runs (another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _host() -> str:
    return socket.gethostname().replace("/", "-")


@functools.cache
def replica_name() -> str:
    """This process's name among the replicas (one per process): host, pid namespace, pid,
    and a random part (a pid is reused; a name never is)."""
    return f"{_host()}/{pid_namespace()}/{os.getpid()}/{secrets.token_hex(4)}"


def known_dead(name: str) -> bool:
    """Whether a replica's process is certainly gone: only a replica of this host and pid
    namespace can be checked (any other is alive until its leases run out)."""
    parts = name.split("/")
    if len(parts) != 4 or not parts[2].isdecimal():
        return False
    host, namespace, pid, _ = parts
    if host != _host() or namespace != pid_namespace():
        return False
    if int(pid) == os.getpid():
        return False  # this process: another Gateway of ours (tests), or this very one
    return not pid_alive(int(pid))
