"""Replica names and which replicas are known dead: only a process of this host and pid
namespace that is gone; any other replica is alive until its leases run out."""

from __future__ import annotations

import socket
import subprocess

import pytest

from omega.replica import known_dead, replica_name

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def name_for(pid: int, host: str = "", namespace: str = "") -> str:
    _, own_namespace, _, _ = replica_name().split("/")
    return f"{host or socket.gethostname()}/{namespace or own_namespace}/{pid}/00ff00ff"


def test_one_name_per_process_and_it_is_never_dead_to_itself() -> None:
    assert replica_name() == replica_name()
    assert not known_dead(replica_name())


def test_a_gone_process_of_this_host_is_dead_a_live_one_or_another_hosts_is_not() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        assert known_dead(name_for(gone.pid))
        assert not known_dead(name_for(alive.pid))
        assert not known_dead(name_for(gone.pid, host="elsewhere"))
        assert not known_dead(name_for(gone.pid, namespace="1"))  # another container
        assert not known_dead("no-such-shape")
    finally:
        alive.kill()
        alive.wait()
