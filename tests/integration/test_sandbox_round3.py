"""Containment round 3: what Landlock and the mount namespace do not cover, attacked through
`omega chat --jsonl` with the scripted provider asking for `run_shell`, as a hostile model would.

- The kernel's keyrings: the user keyring (Kerberos tickets, cached passphrases, anything a
  program of the owner's put there) is shared by every process of the user, namespace or not.
  The seccomp filter refuses `add_key`, `request_key` and `keyctl` wherever Landlock is.
- A `.tmp` the model replaced with a symlink: the `claude` CLI's private home is made there by
  Omega itself, unconfined, before the sandbox repairs `.tmp` for the command; it must never be
  made where the link points ($OMEGA_HOME/skills here).
- Memory: a command that eats it must be what the kernel's OOM killer ends, not Omega.

Each attack is also run where it must get through (`rwx`, or without the fix), so it is real.
"""

from __future__ import annotations

import ctypes
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from omega.providers.claude.home import CONFIG_PREFIX
from omega.sandbox import Mode, probe
from tests.conftest import run_omega
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_sandbox_walls import PY, chat
from tests.integration.test_tool_loop import tool_call

pytestmark = pytest.mark.slow

SYS_ADD_KEY = {"x86_64": 248, "aarch64": 217}
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SEARCH = 10
KEYCTL_READ = 11
KEYCTL_UNLINK = 9
# Read a key of the user keyring by its description (argv[1]) and print its payload.
READ_KEY = """import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nr = {"x86_64": 250, "aarch64": 219}[platform.machine()]
key = libc.syscall(nr, 10, ctypes.c_int(-4), b"user", sys.argv[1].encode(), 0)
if key < 0:
    sys.exit("search: " + os.strerror(ctypes.get_errno()))
buffer = ctypes.create_string_buffer(256)
size = libc.syscall(nr, 11, ctypes.c_long(key), buffer, 256)
print("payload:", buffer.raw[:max(size, 0)].decode())
"""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


@pytest.fixture
def user_key() -> Iterator[tuple[str, str]]:
    """A secret in this user's keyring, as Kerberos or a passphrase cache keeps one:
    (description, payload)."""
    machine = os.uname().machine
    name, secret = f"omega-round3-{uuid.uuid4().hex[:8]}", f"keyring-secret-{uuid.uuid4().hex}"
    libc = _libc()
    key = libc.syscall(
        SYS_ADD_KEY[machine],
        b"user",
        name.encode(),
        secret.encode(),
        ctypes.c_size_t(len(secret)),
        ctypes.c_int(KEY_SPEC_USER_KEYRING),
    )
    assert key > 0, os.strerror(ctypes.get_errno())
    yield name, secret
    libc.syscall(
        SYS_KEYCTL[machine], KEYCTL_UNLINK, ctypes.c_long(key), ctypes.c_int(KEY_SPEC_USER_KEYRING)
    )


def keyring_attack(fake: FakeOpenAI, name: str, mode: str) -> str:
    command = f"cat > k.py <<'EOF'\n{READ_KEY}EOF\n{PY} k.py {name}"
    return chat(fake, [tool_call("k", "run_shell", command=command)], OMEGA_SANDBOX__MODE=mode)["k"]


@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_run_shell_cannot_read_the_users_keyring(
    fake_openai: FakeOpenAI, isolated_env: Path, user_key: tuple[str, str], mode: Mode
) -> None:
    assert not probe(mode).degraded
    name, secret = user_key
    out = keyring_attack(fake_openai, name, mode)
    assert secret not in out, out
    assert "Function not implemented" in out, out
    assert secret not in str([r.body for r in fake_openai.requests])


def test_the_keyring_attack_is_real_in_rwx_mode(
    fake_openai: FakeOpenAI, isolated_env: Path, user_key: tuple[str, str]
) -> None:
    name, secret = user_key
    assert f"payload: {secret}" in keyring_attack(fake_openai, name, "rwx")


def test_a_symlinked_temp_folder_never_gets_the_claude_home(
    fake_openai: FakeOpenAI, isolated_env: Path, tmp_path: Path
) -> None:
    """The model points the workspace's `.tmp` at $OMEGA_HOME/skills; then `omega status`
    asks the `claude` CLI its version, in a private home made in `.tmp`."""
    skills = isolated_env / "skills"
    plant = tool_call("p", "run_shell", command=f"rm -rf .tmp && ln -s {skills} .tmp && ls -la")
    assert ".tmp -> " in chat(fake_openai, [plant])["p"]
    assert (isolated_env / "workspace" / ".tmp").is_symlink()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text("#!/bin/sh\necho '2.1.197 (Claude Code)'\n")
    claude.chmod(0o755)
    env = {
        "OMEGA_PROVIDER__DEFAULT": "claude-code",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    assert run_omega("status", env=env, timeout=120).returncode == 0
    assert not list(skills.glob(CONFIG_PREFIX + "*")), "Omega made the CLI's home in skills/"
    tmp = isolated_env / "workspace" / ".tmp"
    assert tmp.is_dir() and not tmp.is_symlink()


@pytest.mark.parametrize("mode", ["sandbox", "rx", "rwx"])
def test_a_command_is_offered_to_the_oom_killer_before_omega(
    fake_openai: FakeOpenAI, isolated_env: Path, mode: Mode
) -> None:
    """A command that eats the memory (256 processes of 8 GiB each may) is the one the kernel
    ends, not Omega: every command runs with the highest OOM score, whatever the mode."""
    command = "cat /proc/self/oom_score_adj"
    out = chat(
        fake_openai, [tool_call("m", "run_shell", command=command)], OMEGA_SANDBOX__MODE=mode
    )
    assert out["m"].splitlines()[-1].strip() == "1000", out
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"  # not this test's
