"""deploy/systemd/omega@.service, the template docs/replicas.md ("Start three replicas") installs:
it runs `omega start` like `omega service install`'s unit does, one web port per replica."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.ops.service import ServiceSpec, render_systemd

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

UNIT = Path(__file__).resolve().parents[2] / "deploy" / "systemd" / "omega@.service"


def _service_keys(text: str) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, _, value = line.partition("=")
            keys.setdefault(key, []).append(value)
    return keys


def test_the_replica_template_runs_omega_start_as_the_single_unit_does() -> None:
    template = _service_keys(UNIT.read_text())
    single = _service_keys(render_systemd(ServiceSpec(("/x/omega", "start"), Path("/h"))))
    for key in ("Type", "NotifyAccess", "Restart", "KillMode", "UMask", "TimeoutStopSec"):
        assert template[key] == single[key], key
    assert template["ExecStart"][0].endswith("/omega start")
    # Each instance its own web port (8760 + n); the rest is shared through the store.
    assert "OMEGA_WEB__PORT=876%i" in template["Environment"]
    assert any(v.startswith("OMEGA_HOME=") for v in template["Environment"])
