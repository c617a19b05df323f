"""`omega service`: the rendered systemd unit and launchd plist, install/uninstall against
recording stand-ins for systemctl and loginctl, and sd_notify over a real datagram socket."""

from __future__ import annotations

import os
import plistlib
import shutil
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from omega.ops import service
from omega.ops.notify import sd_notify
from omega.ops.service import ServiceSpec, default_spec, render_launchd, render_systemd

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def _verify(unit: str, folder: Path) -> str:
    """systemd-analyze verify's complaints about a unit (empty when it has none)."""
    assert SYSTEMD_ANALYZE is not None
    path = folder / "omega.service"
    path.write_text(unit)
    proc = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", str(path)], capture_output=True, text=True, check=False
    )
    # `verify` exits 0 even for unknown keys; what it says on stderr is the verdict
    return (proc.stderr + ("" if proc.returncode == 0 else f"exit {proc.returncode}")).strip()


def test_systemd_unit_has_what_a_service_needs(tmp_path: Path) -> None:
    unit = render_systemd(default_spec(tmp_path / "home"))
    lines = unit.splitlines()
    for expected in (
        "Type=notify",
        "Restart=on-failure",
        "StandardOutput=journal",
        "StandardError=journal",
        "WantedBy=default.target",
        f"Environment=OMEGA_HOME={tmp_path / 'home'}",
    ):
        assert expected in lines, expected
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start.endswith(" start")
    assert "API_KEY" not in unit and "TOKEN" not in unit


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    assert _verify(render_systemd(default_spec(tmp_path)), tmp_path) == ""
    # quoting holds for awkward paths: spaces, quotes and a % (a systemd specifier)
    odd = tmp_path / 'my "omega" 100%'
    odd.mkdir()
    spec = ServiceSpec(
        command=(*service.omega_command(), "start"),
        home=odd,
        environment={"OMEGA_HOME": str(odd), "PATH": "/usr/bin:/bin"},
    )
    assert _verify(render_systemd(spec), tmp_path) == ""
    # and the check itself notices a broken unit
    broken = render_systemd(spec).replace("Type=notify", "Type=notfy")
    assert "notfy" in _verify(broken, tmp_path)


def test_launchd_plist_starts_at_login_and_restarts_on_failure(tmp_path: Path) -> None:
    spec = default_spec(tmp_path)
    plist = plistlib.loads(render_launchd(spec))
    assert plist["Label"] == service.LAUNCHD_LABEL
    assert plist["ProgramArguments"] == list(spec.command)
    assert plist["ProgramArguments"][-1] == "start"
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["EnvironmentVariables"]["OMEGA_HOME"] == str(tmp_path)
    assert plist["StandardErrorPath"].startswith(str(tmp_path))


def _stand_in(bin_dir: Path, name: str, log: Path, stdout: str = "") -> None:
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nprintf "%s" "{stdout}"\nexit 0\n')
    script.chmod(0o755)


def test_install_and_uninstall_with_systemctl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    _stand_in(bin_dir, "systemctl", log)
    _stand_in(bin_dir, "loginctl", log, stdout="Linger=no")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("USER", "ana")

    outcome = service.install("systemd", default_spec(tmp_path / "home"))
    unit = tmp_path / "config" / "systemd" / "user" / "omega.service"
    assert outcome.ok, outcome.lines
    assert unit.read_text() == render_systemd(default_spec(tmp_path / "home"))
    calls = log.read_text().splitlines()
    assert calls[:2] == [
        "systemctl --user daemon-reload",
        "systemctl --user enable --now omega.service",
    ]
    text = "\n".join(outcome.lines)
    assert "sudo loginctl enable-linger ana" in text
    assert "journalctl --user -u omega.service" in text

    log.unlink()
    outcome = service.uninstall("systemd")
    assert not unit.exists()
    assert log.read_text().splitlines() == [
        "systemctl --user disable --now omega.service",
        "systemctl --user daemon-reload",
    ]


def test_linger_already_on_needs_no_advice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stand_in(bin_dir, "loginctl", tmp_path / "log", stdout="Linger=yes")
    monkeypatch.setenv("PATH", str(bin_dir))
    assert service.linger_note() is None


def test_sd_notify_reaches_a_datagram_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sd_notify("READY=1") is False  # not run by systemd: nothing to do
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        assert sd_notify("READY=1") is True
        assert server.recv(64) == b"READY=1"
    # the abstract namespace, written with a leading @
    name = f"omega-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind("\0" + name)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert sd_notify("STOPPING=1") is True
        assert server.recv(64) == b"STOPPING=1"
    os.environ["NOTIFY_SOCKET"] = str(tmp_path / "gone.sock")
    assert sd_notify("READY=1") is False  # never raises
