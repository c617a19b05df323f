"""`omega service`: run Omega in the background, started at login (or boot) and restarted when
it fails — a systemd user unit on Linux, a launchd agent on macOS.

The unit runs `omega start` with this installation's interpreter, this $OMEGA_HOME and the
PATH of the shell that installed it (so `claude` and skill tools are found). Credentials are
never written into the unit: they belong in config.toml (0600), which `omega start` reads.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

UNIT_NAME = "omega.service"
LAUNCHD_LABEL = "dev.omega.agent"
LINGER_HELP = (
    "systemd stops user services when you log out and starts them only when you log in. To keep\n"
    "Omega running while you are logged out, and start it at boot, run once:\n"
    "    sudo loginctl enable-linger {user}"
)


@dataclass(frozen=True)
class ServiceSpec:
    """What the service runs: the command, its data folder and environment."""

    command: tuple[str, ...]
    home: Path
    environment: dict[str, str] = field(default_factory=dict)


def omega_command() -> tuple[str, ...]:
    """How to run this installation's `omega`: the console script beside the interpreter, or
    `python -m omega`."""
    script = Path(sys.executable).with_name("omega")
    if script.is_file() and os.access(script, os.X_OK):
        return (str(script),)
    return (sys.executable, "-m", "omega")


def default_spec(home: Path) -> ServiceSpec:
    """The service for this installation and `home`."""
    env = {"OMEGA_HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)}
    if os.environ.get("OMEGA_ALLOW_ROOT", "").strip() == "1":
        env["OMEGA_ALLOW_ROOT"] = "1"
    return ServiceSpec(command=(*omega_command(), "start"), home=home, environment=env)


def platform_kind(platform: str | None = None) -> str:
    """ "systemd" (Linux), "launchd" (macOS) or "unsupported"."""
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    return "unsupported"


def _systemd_quote(value: str) -> str:
    """One word of a unit file: specifiers (%) escaped, quoted when it has spaces or quotes."""
    value = value.replace("%", "%%")
    if value and not any(c in value for c in " \t\"'\\"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_systemd(spec: ServiceSpec) -> str:
    """The systemd user unit (Type=notify: `omega start` reports READY=1 once it serves)."""
    env_lines = "".join(
        f"Environment={_systemd_quote(f'{key}={value}')}\n"
        for key, value in sorted(spec.environment.items())
    )
    return (
        "[Unit]\n"
        "Description=Omega, a personal AI agent\n"
        "StartLimitIntervalSec=300\n"
        "StartLimitBurst=5\n"
        "\n"
        "[Service]\n"
        "Type=notify\n"
        "NotifyAccess=main\n"
        f"ExecStart={' '.join(_systemd_quote(part) for part in spec.command)}\n"
        # a path setting takes no quotes: only specifiers are escaped
        f"WorkingDirectory={str(spec.home).replace('%', '%%')}\n"
        f"{env_lines}"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "TimeoutStartSec=120\n"
        "# a stop ends within [service] stop_timeout_secs (10); keep this above it\n"
        "TimeoutStopSec=30\n"
        "KillMode=mixed\n"
        "UMask=0077\n"
        "StandardOutput=journal\n"
        "StandardError=journal\n"
        "SyslogIdentifier=omega\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def render_launchd(spec: ServiceSpec) -> bytes:
    """The launchd agent plist (started at login, restarted when it exits with an error)."""
    log = str(spec.home / "omega.service.log")
    return plistlib.dumps(
        {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": list(spec.command),
            "WorkingDirectory": str(spec.home),
            "EnvironmentVariables": dict(spec.environment),
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "ThrottleInterval": 10,
            "ExitTimeOut": 90,
            "ProcessType": "Background",
            "Umask": 0o077,
            "StandardOutPath": log,
            "StandardErrorPath": log,
        }
    )


def unit_path(kind: str) -> Path:
    """Where the unit or plist is installed for the current user."""
    if kind == "launchd":
        return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(config) if config else Path.home() / ".config"
    return base / "systemd" / "user" / UNIT_NAME


def render(kind: str, spec: ServiceSpec) -> str:
    """The unit file text for `kind`."""
    if kind == "launchd":
        return render_launchd(spec).decode()
    return render_systemd(spec)


@dataclass
class Outcome:
    """What a service command did, line by line, and whether all of it worked."""

    lines: list[str] = field(default_factory=list)
    ok: bool = True


def _run(args: list[str], outcome: Outcome, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        outcome.lines.append(f"could not run {' '.join(args)}: {exc}")
        outcome.ok = False
        return subprocess.CompletedProcess(args, 1, "", str(exc))
    if check and proc.returncode != 0:
        outcome.ok = False
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        outcome.lines.append(
            f"{' '.join(args)} failed: {detail[-1] if detail else proc.returncode}"
        )
    return proc


def _user() -> str:
    return os.environ.get("USER") or os.environ.get("LOGNAME") or "$USER"


def linger_note() -> str | None:
    """The advice about lingering when it is off (None when it is on or cannot be told)."""
    if shutil.which("loginctl") is None:
        return LINGER_HELP.format(user=_user())
    try:
        proc = subprocess.run(
            ["loginctl", "show-user", _user(), "--property=Linger"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return LINGER_HELP.format(user=_user())
    if proc.stdout.strip() == "Linger=yes":
        return None
    return LINGER_HELP.format(user=_user())


def install(kind: str, spec: ServiceSpec, start: bool = True) -> Outcome:
    """Write the unit (0644 in the user's own folder), load it, enable it and start it."""
    outcome = Outcome()
    path = unit_path(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(kind, spec), encoding="utf-8")
    outcome.lines.append(f"wrote {path}")
    if kind == "systemd":
        if shutil.which("systemctl") is None:
            outcome.lines.append(
                "systemctl is not available here: the unit is written but not loaded"
            )
            outcome.ok = False
            return outcome
        _run(["systemctl", "--user", "daemon-reload"], outcome)
        action = ["enable", "--now"] if start else ["enable"]
        if outcome.ok:
            _run(["systemctl", "--user", *action, UNIT_NAME], outcome)
        if outcome.ok:
            outcome.lines.append(
                f"enabled{' and started' if start else ''} {UNIT_NAME}; logs: "
                f"journalctl --user -u {UNIT_NAME} -f"
            )
        note = linger_note()
        if note:
            outcome.lines.append(note)
    else:
        domain = f"gui/{os.getuid()}"
        _run(["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"], outcome, check=False)
        _run(["launchctl", "bootstrap", domain, str(path)], outcome)
        if outcome.ok:
            outcome.lines.append(
                f"loaded {LAUNCHD_LABEL}; it starts at login. Logs: {spec.home}/omega.service.log"
            )
    return outcome


def uninstall(kind: str) -> Outcome:
    """Stop and disable the service and remove its unit."""
    outcome = Outcome()
    path = unit_path(kind)
    if kind == "systemd":
        if shutil.which("systemctl") is not None:
            _run(["systemctl", "--user", "disable", "--now", UNIT_NAME], outcome, check=False)
    else:
        _run(["launchctl", "bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"], outcome, check=False)
    if path.exists():
        path.unlink()
        outcome.lines.append(f"removed {path}")
    else:
        outcome.lines.append(f"{path} was not installed")
    if kind == "systemd" and shutil.which("systemctl") is not None:
        _run(["systemctl", "--user", "daemon-reload"], outcome, check=False)
    return outcome


def status(kind: str) -> Outcome:
    """Whether the unit is installed, enabled and running."""
    outcome = Outcome()
    path = unit_path(kind)
    outcome.lines.append(f"unit: {path} ({'installed' if path.exists() else 'not installed'})")
    if kind == "systemd":
        if shutil.which("systemctl") is None:
            outcome.lines.append("systemctl is not available here")
            return outcome
        for query in ("is-enabled", "is-active"):
            proc = _run(["systemctl", "--user", query, UNIT_NAME], outcome, check=False)
            outcome.lines.append(f"{query.removeprefix('is-')}: {proc.stdout.strip() or 'unknown'}")
    else:
        proc = _run(
            ["launchctl", "print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"], outcome, check=False
        )
        outcome.lines.append("loaded: " + ("yes" if proc.returncode == 0 else "no"))
    outcome.ok = path.exists()
    return outcome
