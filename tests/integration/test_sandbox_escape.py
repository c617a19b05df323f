"""Escape attempts against the OS sandbox, on the real kernel (Landlock; Linux only).

Every attack runs through `run_shell` exactly as a model's tool call would. Each must fail in
`sandbox` and `rx` mode; the same attacks succeed in `rwx` mode, which proves they are real
(and that these tests fail when the sandbox is switched off). No skips: a kernel without
Landlock fails `test_landlock_is_enforced_here` loudly.
"""

from __future__ import annotations

import os
import socket
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox, probe
from omega.sandbox.modes import Mode
from omega.tools.builtin import BuiltinTools

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

CONFIG_SECRET = "sk-config-secret-4242"
DB_SECRET = "memory-db-secret-7373"
NOTES_SECRET = "home-notes-secret-1111"
SSH_SECRET = "ssh-key-secret-2222"
PY = sys.executable


@dataclass
class World:
    """An $OMEGA_HOME with secrets, a user $HOME with private files, and a listening port."""

    home: Path
    user_home: Path
    outside: Path  # a folder outside both, e.g. /tmp for the attacker
    port: int

    @property
    def workspace(self) -> Path:
        return self.home / "workspace"

    def tools(self, mode: Mode) -> BuiltinTools:
        sandbox = Sandbox(SandboxSection(mode=mode, tcp_ports=[443]), OmegaPaths(self.home))
        return BuiltinTools(self.workspace, sandbox=sandbox)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    home = tmp_path / "omega-home"
    paths = OmegaPaths(home)
    paths.ensure()
    paths.config.write_text(f'[provider.openai]\napi_key = "{CONFIG_SECRET}"\n')
    paths.db.write_text(DB_SECRET)
    user_home = tmp_path / "user-home"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / "notes.txt").write_text(NOTES_SECRET)
    (user_home / ".ssh" / "id_rsa").write_text(SSH_SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original")
    monkeypatch.setenv("HOME", str(user_home))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield World(home, user_home, outside, listener.getsockname()[1])
    listener.close()


Check = Callable[[World, str], bool]


@dataclass(frozen=True)
class Attack:
    name: str
    command: str  # formatted with the World's fields and the test process's pid
    succeeded: Check  # given the world and run_shell's output
    modes: tuple[Mode, ...] = ("sandbox", "rx")  # where it must fail


def _shows(secret: str) -> Check:
    return lambda world, out: secret in out


def _exists(relative: str) -> Check:
    return lambda world, out: (
        (world.home / relative).exists() or (world.outside / relative).exists()
    )


ATTACKS = [
    Attack("read config.toml", "cat ../config.toml", _shows(CONFIG_SECRET)),
    Attack("read config.toml by absolute path", "cat {home}/config.toml", _shows(CONFIG_SECRET)),
    Attack("read memory.db", "cat ../memory.db", _shows(DB_SECRET)),
    Attack(
        "read Omega's environment",
        "cat /proc/{pid}/environ | tr '\\0' '\\n'",
        lambda world, out: "PATH=" in out,
    ),
    Attack(
        "read a file under $HOME", "cat {user_home}/notes.txt", _shows(NOTES_SECRET), ("sandbox",)
    ),
    Attack("read an ssh key", "cat {user_home}/.ssh/id_rsa", _shows(SSH_SECRET)),
    Attack("write outside the workspace", "echo x > {outside}/dropped.txt", _exists("dropped.txt")),
    Attack(
        "overwrite a file outside the workspace",
        "echo pwned > {outside}/victim.txt",
        lambda world, out: (world.outside / "victim.txt").read_text() != "original",
    ),
    Attack(
        "write into $OMEGA_HOME/tools",
        "echo 'import os' > ../tools/evil.py",
        _exists("tools/evil.py"),
    ),
    Attack(
        "write into $OMEGA_HOME/skills",
        "mkdir -p ../skills/evil && echo hi > ../skills/evil/SKILL.md",
        _exists("skills/evil"),
    ),
    Attack(
        "append to config.toml",
        "echo '# x' >> ../config.toml",
        lambda w, out: "# x" in (w.home / "config.toml").read_text(),
    ),
    Attack("read through a symlink", "ln -s ../config.toml cfg && cat cfg", _shows(CONFIG_SECRET)),
    Attack(
        "write through a symlink",
        "ln -s ../tools t && echo 'import os' > t/linked.py",
        _exists("tools/linked.py"),
    ),
    Attack(
        "read through /proc/self/root",
        "cat /proc/self/root{home}/config.toml",
        _shows(CONFIG_SECRET),
    ),
    Attack(
        "write through /proc/self/root",
        "echo x > /proc/self/root{home}/tools/root.py",
        _exists("tools/root.py"),
    ),
    Attack("read through a hard link", "ln ../config.toml hard && cat hard", _shows(CONFIG_SECRET)),
    Attack(
        "write through a hard link",
        "ln {outside}/victim.txt hard2 && echo pwned > hard2",
        lambda world, out: (world.outside / "victim.txt").read_text() != "original",
    ),
    Attack("signal Omega", "kill -0 {pid} && echo SIGNALLED", _shows("SIGNALLED")),
    Attack(
        "connect to a local TCP service",
        PY
        + " -c \"import socket; socket.create_connection(('127.0.0.1', {port})); print('TCP-OK')\"",
        _shows("TCP-OK"),
    ),
    Attack(
        "listen on TCP",
        PY + " -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
        " print('LISTENING')\"",
        _shows("LISTENING"),
    ),
]
if os.geteuid() == 0:  # CI runs as root: a root command must not keep its capabilities
    ATTACKS.append(
        Attack(
            "keep root capabilities",
            "grep CapEff /proc/self/status",
            lambda world, out: "CapEff:\t0000000000000000" not in out,
        )
    )


async def _attack(world: World, mode: Mode, attack: Attack) -> tuple[bool, str]:
    command = attack.command.format(
        home=world.home,
        user_home=world.user_home,
        outside=world.outside,
        pid=os.getpid(),
        port=world.port,
    )
    out = await world.tools(mode).run_shell(command)
    return attack.succeeded(world, out), out


def test_landlock_is_enforced_here() -> None:
    status = probe("sandbox")
    assert not status.degraded, f"this CI machine must offer Landlock: {status.describe()}"
    assert status.enforcement.startswith("landlock ABI ")


@pytest.mark.parametrize(
    ("mode", "attack"),
    [(mode, attack) for attack in ATTACKS for mode in attack.modes],
    ids=lambda value: value if isinstance(value, str) else value.name,
)
async def test_every_escape_fails(world: World, mode: Mode, attack: Attack) -> None:
    succeeded, out = await _attack(world, mode, attack)
    assert not succeeded, f"{attack.name} escaped the {mode} sandbox:\n{out}"


async def test_the_same_escapes_succeed_in_rwx_mode(world: World) -> None:
    """The attacks are real: without the sandbox every one of them gets through."""
    escaped = []
    for attack in ATTACKS:
        succeeded, out = await _attack(world, "rwx", attack)
        escaped.append(attack.name) if succeeded else print(attack.name, out)
    assert escaped == [a.name for a in ATTACKS]


def _wheel(folder: Path) -> Path:
    """A minimal pure-Python wheel, for pip to find without the network."""
    path = folder / "tinypkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("tinypkg/__init__.py", "VALUE = 1\n")
        wheel.writestr(
            "tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"
        )
        wheel.writestr(
            "tinypkg-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr("tinypkg-1.0.dist-info/RECORD", "")
    return path


ORDINARY_WORK = [
    (
        "compile and run C",
        "printf '#include <stdio.h>\\nint main(void){puts(\"hello from C\");return 0;}\\n' > a.c"
        " && cc a.c -o a && ./a",
        "hello from C",
    ),
    ("run python", f"{PY} -c 'import json, tempfile; print(json.dumps(6 * 7))'", "42"),
    (
        "git init and commit",
        "git init -q repo && cd repo && echo hi > f && git add f"
        " && git -c user.email=o@example.com -c user.name=o commit -qm first"
        " && git log --format=%s",
        "first",
    ),
    ("pip runs", f"{PY} -m pip --version", "pip "),
    (
        "pip download into the workspace cache",
        f"{PY} -m pip download --no-index --find-links wheels -d cache/pip tinypkg && ls cache/pip",
        "tinypkg-1.0-py3-none-any.whl",
    ),
    ("temp files", "mktemp && echo made", "made"),
]


@pytest.mark.parametrize("mode", ["sandbox", "rx"])
@pytest.mark.parametrize("work", ORDINARY_WORK, ids=lambda w: w[0])
async def test_ordinary_work_still_works(
    world: World, mode: Mode, work: tuple[str, str, str]
) -> None:
    _name, command, expected = work
    (world.workspace / "wheels").mkdir()
    _wheel(world.workspace / "wheels")
    out = await world.tools(mode).run_shell(command, timeout_secs=120)
    assert out.startswith("exit code 0\n"), out
    assert expected in out
