"""What an MCP server installed the ordinary way may read under the sandbox: its virtualenv
and base interpreter (pip, pipx, uv), the interpreter its shebang names, a node package; never
$HOME, a folder holding a credential, nor $OMEGA_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox
from omega.sandbox.modes import ruleset
from omega.sandbox.servers import server_environment

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def executable(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def make_venv(root: Path, base_bin: Path, script: str = "server") -> Path:
    """A virtualenv as `python -m venv` lays it out: pyvenv.cfg naming the base's folder,
    bin/python linking to the base interpreter, a console script whose #! is bin/python."""
    executable(base_bin / "python3.12", "")
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(f"home = {base_bin}\nversion = 3.12.1\n")
    (root / "bin" / "python").symlink_to(base_bin / "python3.12")
    return executable(root / "bin" / script, f"#!{root}/bin/python\nimport server\n")


def sandbox_for(tmp_path: Path, user: Path, path: str = "/usr/bin:/bin") -> Sandbox:
    return Sandbox(
        SandboxSection(), OmegaPaths(tmp_path / "omega"), environ={"HOME": str(user), "PATH": path}
    )


def test_a_venv_console_script_gets_the_venv_and_its_base_interpreter(tmp_path: Path) -> None:
    user = tmp_path / "user"
    base = user / ".pyenv" / "versions" / "3.12.1"
    script = make_venv(user / ".venvs" / "time", base / "bin", "mcp-server-time")
    granted = sandbox_for(tmp_path, user).server_paths(str(script), [])
    assert str(user / ".venvs" / "time") in granted
    assert str(base) in granted  # pyvenv.cfg's home: the interpreter's prefix
    assert str(user) not in granted


def test_bin_python_of_a_venv_gets_the_same(tmp_path: Path) -> None:
    user = tmp_path / "user"
    base = user / ".local" / "share" / "uv" / "python" / "cpython-3.12.1-linux-x86_64-gnu"
    make_venv(user / "proj" / ".venv", base / "bin")
    sandbox = sandbox_for(tmp_path, user)
    granted = sandbox.server_paths(str(user / "proj" / ".venv" / "bin" / "python"), ["-m", "x"])
    assert str(user / "proj" / ".venv") in granted
    assert str(base) in granted
    assert str(user / "proj") not in granted


def test_a_pipx_link_on_path_gets_its_venv(tmp_path: Path) -> None:
    user = tmp_path / "user"
    venv = user / ".local" / "share" / "pipx" / "venvs" / "mcp-server-time"
    script = make_venv(venv, tmp_path / "usr" / "bin", "mcp-server-time")
    (user / ".local" / "bin").mkdir(parents=True)
    (user / ".local" / "bin" / "mcp-server-time").symlink_to(script)
    sandbox = sandbox_for(tmp_path, user, f"{user / '.local' / 'bin'}:/usr/bin:/bin")
    granted = sandbox.server_paths("mcp-server-time", [])
    assert str(venv) in granted
    assert str(tmp_path / "usr") in granted
    # ~/.local holds a credential folder (.local/share/keyrings): never granted whole
    assert not any(p in granted for p in (str(user), str(user / ".local")))


def test_a_uv_tool_gets_its_venv_and_uvs_python(tmp_path: Path) -> None:
    user = tmp_path / "user"
    python = user / ".local" / "share" / "uv" / "python" / "cpython-3.12.1-linux-x86_64-gnu"
    venv = user / ".local" / "share" / "uv" / "tools" / "mcp-server-time"
    script = make_venv(venv, python / "bin", "mcp-server-time")
    granted = sandbox_for(tmp_path, user).server_paths(str(script), [])
    assert {str(venv), str(python)} <= set(granted)


def test_a_script_gets_the_interpreter_its_env_shebang_finds_on_path(tmp_path: Path) -> None:
    user = tmp_path / "user"
    node_bin = user / ".nvm" / "versions" / "node" / "v20.1.0" / "bin"
    executable(node_bin / "node")
    script = executable(user / "servers" / "index.js", "#!/usr/bin/env node\n")
    (user / "servers" / "notes.txt").write_text("private")
    sandbox = sandbox_for(tmp_path, user, f"{node_bin}:/usr/bin:/bin")
    granted = sandbox.server_paths(str(script), [])
    assert str(node_bin.parent) in granted  # node's prefix: its lib/ is beside bin/
    assert str(script) in granted
    assert str(user / "servers") not in granted  # inside $HOME only the file, not its folder


def test_node_given_a_package_file_gets_its_node_modules(tmp_path: Path) -> None:
    user = tmp_path / "user"
    entry = executable(user / "mcp" / "node_modules" / "@scope" / "server" / "dist" / "index.js")
    granted = sandbox_for(tmp_path, user).server_paths("node", [str(entry)])
    assert str(user / "mcp" / "node_modules") in granted


def test_a_base_interpreter_at_home_or_beside_credentials_is_never_granted(tmp_path: Path) -> None:
    user = tmp_path / "user"
    script = make_venv(user / ".venvs" / "a", user / "bin", "server")  # base prefix: $HOME
    granted = sandbox_for(tmp_path, user).server_paths(str(script), [])
    assert str(user / ".venvs" / "a") in granted
    assert str(user) not in granted
    # a venv inside a credential folder, or inside $OMEGA_HOME, is not opened
    ssh = make_venv(user / ".ssh" / "venv", tmp_path / "usr" / "bin")
    assert not any(".ssh" in p for p in sandbox_for(tmp_path, user).server_paths(str(ssh), []))
    omega_venv = make_venv(tmp_path / "omega" / "venv", tmp_path / "usr" / "bin")
    assert not any(
        p.startswith(str(tmp_path / "omega"))
        for p in sandbox_for(tmp_path, user).server_paths(str(omega_venv), [])
    )


def test_in_home_grants_reach_the_policy_but_home_stays_closed(tmp_path: Path) -> None:
    user = tmp_path / "user"
    script = make_venv(user / ".venvs" / "time", tmp_path / "usr" / "bin")
    sandbox = sandbox_for(tmp_path, user)
    extra = sandbox.server_paths(str(script), [])
    policy = sandbox.policy(extra_read=[*extra, str(user), str(user / ".ssh")])
    assert str(user / ".venvs" / "time") in policy.read_own
    assert str(user) not in policy.read_own
    assert policy.home == os.path.realpath(user)
    granted = [path for path, _rights in ruleset(policy, abi=6).paths]
    assert str(user / ".venvs" / "time") in granted
    assert not any(p == str(user) or p.startswith(str(user / ".ssh")) for p in granted)


def test_npm_starts_offline_first_unless_the_skill_says_otherwise() -> None:
    assert server_environment({})["npm_config_prefer_offline"] == "true"
    assert (
        server_environment({"npm_config_prefer_offline": "false"})["npm_config_prefer_offline"]
        == "false"
    )
