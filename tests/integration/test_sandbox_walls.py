"""The walls beside Landlock (issue 24): Unix sockets with a path outside the workspace are
out of reach (bubblewrap's namespace hides them, a seccomp filter refuses new Unix sockets
where it does not), and `rx` keeps credential files and Omega's backups closed.

The end-to-end attacks go through `omega chat --jsonl` with the scripted provider, as a
hostile model would; each is also run in `rwx` mode, where it must get through (so the test is
real). Each wall is then tested alone, without the other.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox, SandboxStatus, bwrap, probe, seccomp
from omega.sandbox.modes import Layout, Mode, build_policy
from omega.sandbox.runner import LAUNCHER
from omega.tools.builtin import BuiltinTools
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import replies, tool_call, tool_results

PY = sys.executable
KEY_COMMENT = "owner-signing-key-5150"
BUS_SECRET = "session-bus-secret-6161"
PGPASS = "db.example.com:5432:*:owner:pg-secret-7171"
CARGO = "cargo-token-secret-8181"
DOCKER = "docker-auth-secret-9191"
RC_KEY = "sk-from-bashrc-secret-6161"
CONFIG_SECRET = "sk-backed-up-config-3131"
WORKSPACE_OK = "workspace-socket-ok"
NOTES = "ordinary-notes-rx-may-read"
# A listener that lives in the workspace and a client that talks to it: ordinary work.
WORKSPACE_SOCKET = f"""cat > ws.py <<'EOF'
import socket, threading
server = socket.socket(socket.AF_UNIX)
server.bind("w.sock")
server.listen(1)
def serve():
    conn, _ = server.accept()
    conn.sendall(b"{WORKSPACE_OK}")
threading.Thread(target=serve).start()
client = socket.socket(socket.AF_UNIX)
client.connect("w.sock")
print(client.recv(64).decode())
EOF
{PY} ws.py"""


def _connect(path: str) -> str:
    """A shell command that connects to the Unix socket at `path` and prints what it says."""
    code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({path!r})"
    return f'{PY} -c "{code}; print(s.recv(64).decode())"'


@contextlib.contextmanager
def _listener(folder: Path, secret: str) -> Iterator[str]:
    """A Unix socket in `folder` that answers every connection with `secret`."""
    path = str(folder / "bus")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(secret.encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()


@contextlib.contextmanager
def _ssh_agent(folder: Path) -> Iterator[str]:
    """A real ssh-agent holding one key (comment KEY_COMMENT), as a user's session has."""
    sock = str(folder / "agent.sock")
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", sock], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        key = folder / "id_ed25519"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", KEY_COMMENT, "-f", str(key)],
            check=True,
        )
        env = {**os.environ, "SSH_AUTH_SOCK": sock}
        subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, capture_output=True)
        yield sock
    finally:
        agent.terminate()
        agent.wait(timeout=5)


@pytest.fixture
def sockets() -> Iterator[tuple[str, str]]:
    """The owner's ssh-agent in /tmp (where ssh-agent puts it) and a session bus in /run
    (where $XDG_RUNTIME_DIR lives)."""
    with contextlib.ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="ssh-", dir="/tmp"))
        stack.callback(shutil.rmtree, tmp, True)
        runtime = os.environ.get("XDG_RUNTIME_DIR", "") or "/tmp"
        run_dir = "/run" if os.access("/run", os.W_OK) else runtime  # /run/user/<uid> if not root
        run = Path(tempfile.mkdtemp(prefix="omega-walls-", dir=run_dir))
        stack.callback(shutil.rmtree, run, True)
        agent = stack.enter_context(_ssh_agent(tmp))
        bus = stack.enter_context(_listener(run, BUS_SECRET))
        yield agent, bus


def chat(fake: FakeOpenAI, calls: list[dict[str, object]], **env: str) -> dict[str, str]:
    """One owner message whose model answer is `calls`; the tool results it got back."""
    fake.script = [Step(tool_calls=calls), Step(text="Done.")]
    result = run_omega(
        "chat", "--jsonl", env=openai_env(fake, **env), stdin=jsonl({"text": "go"}), timeout=180
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["Done."]
    results: dict[str, str] = {}
    for request in fake.requests:
        results.update(tool_results(request))
    return results


def socket_attack(fake: FakeOpenAI, agent: str, bus: str, mode: str) -> dict[str, str]:
    calls = [
        tool_call("agent", "run_shell", command=f"SSH_AUTH_SOCK={agent} ssh-add -l"),
        tool_call("bus", "run_shell", command=_connect(bus)),
        tool_call("ws", "run_shell", command=WORKSPACE_SOCKET),
    ]
    return chat(fake, calls, OMEGA_SANDBOX__MODE=mode)


@pytest.mark.no_store
def test_bubblewrap_and_seccomp_are_used_here() -> None:
    """This machine must offer both walls (a missing one fails here loudly, not by a skip)."""
    status = probe("sandbox")
    assert status.namespace, status.describe()
    assert seccomp.available()
    assert probe("rx").unix_filter


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_run_shell_cannot_reach_the_owners_agent_nor_the_session_bus(
    fake_openai: FakeOpenAI, isolated_env: Path, sockets: tuple[str, str], mode: str
) -> None:
    agent, bus = sockets
    results = socket_attack(fake_openai, agent, bus, mode)
    assert KEY_COMMENT not in results["agent"], results["agent"]
    assert BUS_SECRET not in results["bus"], results["bus"]
    assert "exit code 0" not in results["agent"] and "exit code 0" not in results["bus"]
    sent = json.dumps([r.body for r in fake_openai.requests])
    assert KEY_COMMENT not in sent and BUS_SECRET not in sent
    if mode == "sandbox":  # a socket the command makes in its own workspace keeps working
        assert WORKSPACE_OK in results["ws"], results["ws"]


@pytest.mark.slow
def test_the_socket_attack_is_real_in_rwx_mode(
    fake_openai: FakeOpenAI, isolated_env: Path, sockets: tuple[str, str]
) -> None:
    agent, bus = sockets
    results = socket_attack(fake_openai, agent, bus, "rwx")
    assert KEY_COMMENT in results["agent"]
    assert BUS_SECRET in results["bus"]
    assert WORKSPACE_OK in results["ws"]


@pytest.fixture
def user_home() -> Iterator[Path]:
    """A user's $HOME with credential files, outside /tmp (which the namespace hides anyway,
    so only the credential rules stand between a command and these files)."""
    base = Path(tempfile.mkdtemp(prefix="omega-walls-", dir=os.path.expanduser("~/.cache")))
    home = base / "home"
    (home / ".cargo").mkdir(parents=True)
    (home / ".docker").mkdir()
    (home / ".pgpass").write_text(PGPASS + "\n")
    (home / "notes.txt").write_text(NOTES + "\n")
    (home / ".bashrc").write_text(f"export OPENAI_API_KEY={RC_KEY}\n")  # where keys often live
    (home / ".cargo" / "credentials.toml").write_text(f'[registry]\ntoken = "{CARGO}"\n')
    (home / ".docker" / "config.json").write_text(json.dumps({"auths": {"x": DOCKER}}))
    yield home
    shutil.rmtree(base, ignore_errors=True)


def credential_attack(fake: FakeOpenAI, omega_home: Path, home: Path, mode: str) -> str:
    """Back up Omega to ~/backups as the owner would, then read it and the credential files."""
    omega_home.mkdir(parents=True, exist_ok=True)
    (omega_home / "config.toml").write_text(f'[provider.anthropic]\napi_key = "{CONFIG_SECRET}"\n')
    assert run_omega("status", env={"HOME": str(home)}).returncode == 0  # creates memory.db
    made = run_omega("backup", str(home / "backups"), env={"HOME": str(home)})
    assert made.returncode == 0, made.stderr
    command = (
        f"cat {home}/.pgpass {home}/.cargo/credentials.toml {home}/.docker/config.json; "
        f"cat {home}/.bashrc; "
        f"cat {home}/backups/omega-backup-*/config.toml; cat {home}/notes.txt"
    )
    calls = [tool_call("c", "run_shell", command=command)]
    return chat(fake, calls, OMEGA_SANDBOX__MODE=mode, HOME=str(home))["c"]


@pytest.mark.slow
def test_rx_keeps_credential_files_and_backups_closed(
    fake_openai: FakeOpenAI, isolated_env: Path, user_home: Path
) -> None:
    out = credential_attack(fake_openai, isolated_env, user_home, "rx")
    for secret in ("pg-secret-7171", CARGO, DOCKER, CONFIG_SECRET, RC_KEY):
        assert secret not in out, out
    assert NOTES in out  # the rest of $HOME stays readable in rx
    assert CONFIG_SECRET not in json.dumps([r.body for r in fake_openai.requests])


@pytest.mark.slow
def test_the_credential_attack_is_real_in_rwx_mode(
    fake_openai: FakeOpenAI, isolated_env: Path, user_home: Path
) -> None:
    out = credential_attack(fake_openai, isolated_env, user_home, "rwx")
    for secret in ("pg-secret-7171", CARGO, DOCKER, CONFIG_SECRET, RC_KEY):
        assert secret in out, out


@pytest.mark.slow
def test_status_says_which_walls_are_up_and_which_are_missing(isolated_env: Path) -> None:
    lines = {}
    for mode in ("sandbox", "rx"):
        result = run_omega("status", env={"OMEGA_SANDBOX__MODE": mode})
        assert result.returncode == 0, result.stderr
        (lines[mode],) = [r for r in result.stdout.splitlines() if r.startswith("sandbox ")]
    assert "sandbox (landlock ABI " in lines["sandbox"]
    assert ", bubblewrap namespace)" in lines["sandbox"]
    assert ", bubblewrap namespace, seccomp unix-socket filter)" in lines["rx"]
    # Without bubblewrap on PATH: the filter takes over, and the missing wall is named.
    bare = run_omega("status", env={"PATH": str(Path(PY).parent)})
    (line,) = [r for r in bare.stdout.splitlines() if r.startswith("sandbox ")]
    assert "seccomp unix-socket filter" in line
    assert "missing: bubblewrap namespace (install the bubblewrap package)" in line
    assert "install bubblewrap (e.g. `apt install bubblewrap`" in bare.stdout  # the self-check


@pytest.mark.slow
def test_slash_status_shows_the_walls(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    stdin = jsonl({"text": "/status"})
    result = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin=stdin)
    assert result.returncode == 0, result.stderr
    (status,) = [str(e["text"]) for e in result.events if e["kind"] == "command"]
    assert "Sandbox: sandbox (landlock ABI " in status
    assert "bubblewrap namespace" in status


# --- each wall alone -------------------------------------------------------------------


@dataclass
class Place:
    """An $OMEGA_HOME with a secret, its workspace, and an outside socket."""

    home: Path
    bus: str

    @property
    def workspace(self) -> Path:
        return self.home / "workspace"


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Place]:
    home = tmp_path / "omega-home"
    OmegaPaths(home).ensure()
    (home / "config.toml").write_text(f'api_key = "{CONFIG_SECRET}"\n')
    outside = Path(tempfile.mkdtemp(prefix="ssh-", dir="/tmp"))
    with _listener(outside, BUS_SECRET) as bus:
        yield Place(home, bus)
    shutil.rmtree(outside, ignore_errors=True)


def _tools(place: Place, status: SandboxStatus, mode: Mode = "sandbox") -> BuiltinTools:
    sandbox = Sandbox(SandboxSection(mode=mode), OmegaPaths(place.home), status=status)
    return BuiltinTools(place.workspace, sandbox=sandbox)


LANDLOCK_ONLY = SandboxStatus("sandbox", "landlock ABI 7", degraded=False)


@pytest.mark.no_store
async def test_the_seccomp_filter_alone_refuses_unix_sockets(place: Place) -> None:
    """No namespace: the filter is what keeps the outside socket closed (and, the price,
    sockets in the workspace too); socketpair and pipes keep working."""
    status = SandboxStatus("sandbox", "landlock ABI 7", degraded=False, unix_filter=True)
    tools = _tools(place, status)
    out = await tools.run_shell(_connect(place.bus))
    assert BUS_SECRET not in out and "Permission denied" in out, out
    out = await tools.run_shell(WORKSPACE_SOCKET)
    assert WORKSPACE_OK not in out and "Permission denied" in out, out
    pair = "import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4))"
    out = await tools.run_shell(f'{PY} -c "{pair}" && echo piped | cat')
    assert "b'pair'" in out and "piped" in out, out
    without = await _tools(place, LANDLOCK_ONLY).run_shell(_connect(place.bus))
    assert BUS_SECRET in without  # the same command reaches it without the filter


@pytest.mark.no_store
def test_the_launcher_refuses_unix_sockets_when_the_policy_says_so(tmp_path: Path) -> None:
    """The launcher alone (no namespace, no Landlock): only the filter stands."""
    code = "import socket; socket.socket(socket.AF_UNIX); print('opened')"
    for unix_filter, expected in ((True, "PermissionError"), (False, "opened")):
        policy = build_policy(
            "sandbox", Layout(str(tmp_path), str(tmp_path), str(tmp_path)), unix_filter=unix_filter
        )
        policy = type(policy)(**{**policy.__dict__, "landlock": False})
        done = subprocess.run(
            [PY, "-I", str(LAUNCHER), policy.to_json(), "--", PY, "-c", code],
            capture_output=True,
            text=True,
            check=False,
        )
        assert expected in done.stdout + done.stderr, done


def _namespace_only(place: Place, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv` in bubblewrap's namespace of the `sandbox` policy, without Landlock or the
    filter: only the namespace stands."""
    sandbox = Sandbox(SandboxSection(mode="sandbox"), OmegaPaths(place.home), status=LANDLOCK_ONLY)
    policy = sandbox.policy()
    policy = type(policy)(**{**policy.__dict__, "landlock": False, "unix_filter": False})
    launcher = [PY, "-I", str(LAUNCHER), policy.to_json(), "--"]
    namespace = [bwrap.find(), *bwrap.arguments(policy)]
    return subprocess.run(
        bwrap.wrap(namespace, [*launcher, *argv]),
        cwd=place.workspace,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.no_store
def test_bubblewrap_alone_hides_what_the_policy_does_not_grant(place: Place) -> None:
    dropped = place.home.parent / "dropped.txt"  # outside the workspace
    script = f"cat ../config.toml; {_connect(place.bus)}; echo x > {dropped}; {WORKSPACE_SOCKET}"
    done = _namespace_only(place, ["/bin/sh", "-c", script])
    out = done.stdout + done.stderr
    assert CONFIG_SECRET not in out and BUS_SECRET not in out, out
    assert not dropped.exists()
    assert WORKSPACE_OK in out, out  # the workspace is the same folder, at the same path
    bare = subprocess.run(
        ["/bin/sh", "-c", script], cwd=place.workspace, capture_output=True, text=True
    )
    assert CONFIG_SECRET in bare.stdout and BUS_SECRET in bare.stdout  # the attack is real
    assert dropped.exists()


@pytest.mark.no_store
async def test_ordinary_tools_run_in_the_namespace(place: Place) -> None:
    """sh, Omega's Python, git and node (asyncio subprocesses too) under every wall at once."""
    status = probe("rx")
    assert status.namespace and status.unix_filter
    tools = _tools(place, status, "rx")
    asyncio_code = (
        "import asyncio\n"
        "async def main():\n"
        "    p = await asyncio.create_subprocess_exec('echo', 'async-ok', stdout=-1)\n"
        "    print((await p.communicate())[0].decode())\n"
        "asyncio.run(main())\n"
    )
    (place.workspace / "a.py").write_text(asyncio_code)
    commands = {
        "sh": ("echo $((6 * 7))", "42"),
        "python": (f"{PY} a.py", "async-ok"),
        "git": ("git init -q r && git -C r status --short && echo git-ok", "git-ok"),
        "node": (
            "node -e \"require('child_process').exec('echo node-ok', (e, o) => console.log(o))\"",
            "node-ok",
        ),
    }
    for name, (command, expected) in commands.items():
        out = await tools.run_shell(command, timeout_secs=60)
        assert out.startswith("exit code 0\n") and expected in out, (name, out)


USER_DRIVER = """
import asyncio, json, sys
from pathlib import Path
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox
from omega.tools.builtin import BuiltinTools
paths = OmegaPaths(Path(sys.argv[1]))
found = {}
for mode in ("sandbox", "rx", "rwx"):
    tools = BuiltinTools(paths.workspace, sandbox=Sandbox(SandboxSection(mode=mode), paths))
    found[mode] = asyncio.run(tools.run_shell(sys.argv[2]))
print(json.dumps(found))
"""


@pytest.mark.no_store
def test_the_walls_hold_for_an_ordinary_user(tmp_path: Path) -> None:
    """Omega run by an unprivileged user (root plays `nobody`): bubblewrap then builds its
    namespace in a user namespace; a socket that user may connect to stays out of reach."""
    from tests.fakes.real_claude import user_python

    root = os.geteuid() == 0
    python = user_python() if root else PY
    assert python, "no Python interpreter that user 65534 may run"
    uid = 65534 if root else os.geteuid()
    base = Path(tempfile.mkdtemp(prefix="omega-user-"))
    try:
        OmegaPaths(base / "omega").ensure()
        for path in [base, *base.rglob("*")]:
            os.chown(path, uid, uid)
        os.chmod(base, 0o755)
        with _listener(base, BUS_SECRET) as bus:
            os.chmod(bus, 0o777)  # the user may connect: only the walls stand in the way
            site = str(Path(seccomp.__file__).parents[2])
            purelib = next(p for p in sys.path if p.endswith("site-packages"))
            prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
            attack = _connect(bus).replace(PY, python)
            done = subprocess.run(
                [*(prefix if root else []), python, "-c", USER_DRIVER, str(base / "omega"), attack],
                env={**os.environ, "HOME": str(base), "PYTHONPATH": f"{site}:{purelib}"},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                cwd=base,
            )
        assert done.returncode == 0, done.stderr[-3000:]
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert BUS_SECRET not in found["sandbox"] and BUS_SECRET not in found["rx"], found
        assert BUS_SECRET in found["rwx"]  # the attack is real
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.no_store
@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_a_program_in_a_virtualenv_under_tmp_runs_in_the_namespace(
    tmp_path: Path, mode: Mode
) -> None:
    """An MCP server installed below /tmp: its virtualenv and its script. rx covers /tmp (its
    sockets), then shows the grants below it again: the virtualenv's `python` link is shown by
    the bind, so it is not made a second time (bwrap refused: "Can't make symlink ... File
    exists"), and the script's folder is shown too (it was covered: "can't open file")."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.symlink_to(os.path.realpath(sys.executable))
    server = tmp_path / "server"
    server.mkdir()
    (server / "serve.py").write_text("print('ran')\n")
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    layout = Layout(str(home), str(home / "workspace"), str(home / "workspace"))
    policy = build_policy(mode, layout, own=[str(venv), sys.base_prefix], extra_read=[str(server)])
    namespace = [bwrap.find(), *bwrap.arguments(policy, program=str(python))]
    done = subprocess.run(
        bwrap.wrap(namespace, [str(python), str(server / "serve.py")]),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() == "ran", done.stderr
