"""The sandbox's policy, its macOS profile, its reporting when degraded, resource limits, and
the in-process tools' and fetch_url's own guards."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from threading import Thread

import pytest

from omega.config import Config, load_config
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox, SandboxStatus, bwrap, degraded_alert, probe, seccomp
from omega.sandbox import landlock as ll
from omega.sandbox.modes import Layout, Policy, build_policy, expand, inside, ruleset
from omega.sandbox.seatbelt import profile
from omega.tools import ToolError
from omega.tools import fetch as fetch_module
from omega.tools.builtin import BuiltinTools

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    home = tmp_path / "omega"
    (home / "workspace" / ".tmp").mkdir(parents=True)
    (home / "tools").mkdir()
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    return Layout(
        omega_home=str(home),
        workspace=str(home / "workspace"),
        tmpdir=str(home / "workspace" / ".tmp"),
        user_home=str(user),
    )


# ---- the policy ----------------------------------------------------------------------------


def test_expand_allows_everything_beside_the_excluded_path(tmp_path: Path) -> None:
    for name in ("a", "b/keep", "b/secret/x"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "file").write_text("x")
    rules = dict(expand(str(tmp_path), ll.READ, [str(tmp_path / "b" / "secret")]))
    assert rules[str(tmp_path)] == ll.READ_DIR  # the way there may only be listed
    assert rules[str(tmp_path / "b")] == ll.READ_DIR
    assert rules[str(tmp_path / "a")] == ll.READ
    assert rules[str(tmp_path / "file")] == ll.READ
    assert rules[str(tmp_path / "b" / "keep")] == ll.READ
    assert str(tmp_path / "b" / "secret") not in rules
    assert expand(str(tmp_path / "b" / "secret" / "x"), ll.READ, [str(tmp_path / "b")]) == []


def test_sandbox_policy_reads_the_system_and_writes_only_the_workspace(layout: Layout) -> None:
    policy = build_policy("sandbox", layout, tcp_ports=[443])
    assert "/usr" in policy.read and "/etc" in policy.read and "/" not in policy.read
    assert policy.write == (layout.workspace,)  # the temp dir is inside it: no grant of its own
    assert policy.home == layout.user_home
    assert layout.omega_home in policy.exclude and "/dev" in policy.exclude
    assert policy.tcp_ports == (443,)
    assert Policy.from_json(policy.to_json()) == policy


def test_rx_policy_reads_everywhere_but_protected_places(layout: Layout) -> None:
    policy = build_policy("rx", layout)
    assert policy.read == ("/",)
    assert policy.home == ""
    assert os.path.join(layout.user_home, ".ssh") in policy.exclude
    rules = dict(ruleset(policy, abi=7).paths)
    assert rules[layout.workspace] == ll.WRITE
    assert layout.omega_home not in rules
    assert os.path.join(layout.omega_home, "tools") not in rules
    assert os.path.join(layout.user_home, ".ssh") not in rules
    assert not ll.WRITE & (ll.MAKE_BLOCK | ll.MAKE_CHAR)  # no device nodes, even as root


def test_rwx_policy_has_no_rules_but_keeps_the_limits(layout: Layout) -> None:
    policy = build_policy("rwx", layout, limits={"cpu_secs": 5})
    assert not policy.landlock and policy.read == () and policy.limits == {"cpu_secs": 5}


def test_claude_writes_nothing_under_home(tmp_path: Path) -> None:
    """The CLI keeps its state in a private home in the temp dir: no grant under $HOME
    (~/.claude, ~/.local/share/claude where its binary lives), and its program is read-only."""
    home = tmp_path / "user"
    sandbox = Sandbox(SandboxSection(), OmegaPaths(tmp_path / "omega"), environ={"HOME": str(home)})
    tool, claude = sandbox.policy(), sandbox.policy(profile="claude", program=sys.executable)
    assert claude.write == tool.write == (sandbox.layout.workspace,)
    assert claude.files == tool.files
    assert not any(inside(p, str(home)) for p in claude.write)


def test_the_launcher_refuses_to_run_unconfined(tmp_path: Path) -> None:
    from omega.sandbox.reaper import EXIT_REFUSED
    from omega.sandbox.runner import LAUNCHER

    marker = tmp_path / "ran"
    broken = '{"mode": "sandbox", "landlock": true, "limits": {"cpu_secs": "lots"}}'
    command = [sys.executable, "-I", str(LAUNCHER), broken, "--", "touch", str(marker)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == EXIT_REFUSED
    assert "refusing to run the command unconfined" in result.stderr
    assert not marker.exists()


def test_landlock_rights_follow_the_abi() -> None:
    assert ll.fs_rights(1) == (1 << 13) - 1
    assert ll.fs_rights(3) & ll.TRUNCATE and not ll.fs_rights(3) & ll.IOCTL_DEV
    assert ll.fs_rights(7) & ll.IOCTL_DEV


# ---- macOS ---------------------------------------------------------------------------------


def test_seatbelt_sandbox_profile_closes_home_and_omega_home(layout: Layout) -> None:
    text = profile("sandbox", layout, own=["/opt/py"], tcp_ports=[443])
    lines = text.splitlines()
    assert lines[:2] == ["(version 1)", "(allow default)"]
    closed = next(line for line in lines if line.startswith("(deny file-read* file-write*"))
    assert f'(subpath "{layout.omega_home}")' in closed
    assert f'(subpath "{layout.user_home}")' in closed
    deny_writes = lines.index("(deny file-write*)")
    reopen = next(i for i, line in enumerate(lines) if f'(subpath "{layout.workspace}")' in line)
    assert reopen > deny_writes  # the last matching rule wins
    assert '(allow file-read* (subpath "/opt/py"))' in lines
    assert '(allow network-outbound (remote tcp "*:443"))' in lines


def test_seatbelt_rx_profile_closes_credentials_only(layout: Layout) -> None:
    text = profile("rx", layout)
    assert f'(subpath "{layout.user_home}/.ssh")' in text
    assert f'(deny file-read* file-write* (subpath "{layout.omega_home}"))' in text
    assert f'(subpath "{layout.user_home}")' not in text.replace(f"{layout.user_home}/", "")
    assert profile("rwx", layout) == "(version 1)\n(allow default)\n"


def test_macos_commands_go_through_sandbox_exec(tmp_path: Path) -> None:
    status = SandboxStatus("sandbox", "seatbelt", degraded=False)
    sandbox = Sandbox(SandboxSection(), OmegaPaths(tmp_path), status=status, platform="darwin")
    argv = sandbox.command(["ls"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert "(deny file-write*)" in argv[2]
    assert argv[-2:] == ["--", "ls"]
    assert Policy.from_json(argv[-3]).landlock is False  # Seatbelt confines, the launcher limits
    rx = Sandbox(SandboxSection(mode="rx"), OmegaPaths(tmp_path), status=status, platform="darwin")
    text = rx.command(["ls"], extra_read=["/", str(tmp_path)])[2]
    assert (
        '(subpath "/")' not in text
        and f'(subpath "{tmp_path.resolve()}")' not in text.split("(deny file-write*)")[1]
    )


# ---- reporting -----------------------------------------------------------------------------


def test_probe_reports_landlock_or_a_degraded_mode() -> None:
    alone = probe("sandbox", platform="linux", abi=7, namespace="", unix_filter=True)
    assert alone.describe() == (
        "sandbox (landlock ABI 7, seccomp unix-socket filter); "
        "missing: bubblewrap namespace (install the bubblewrap package)"
    )
    degraded = probe("rx", platform="linux", abi=0)
    assert degraded.degraded and "DEGRADED" in degraded.describe()
    assert "does not offer Landlock" in degraded.describe()
    assert probe("sandbox", platform="win32").degraded
    assert "UNRESTRICTED" in probe("rwx", platform="linux", abi=7).describe()


def test_a_degraded_sandbox_alerts_the_owner_once(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path)
    paths.ensure()
    degraded = probe("sandbox", platform="linux", abi=0)
    first = degraded_alert(degraded, paths)
    assert first is not None and "not enforced" in first
    assert degraded_alert(degraded, paths) is None
    assert degraded_alert(probe("sandbox", platform="linux", abi=7), paths) is None


async def test_without_landlock_commands_still_run_and_say_so(tmp_path: Path) -> None:
    status = probe("sandbox", platform="linux", abi=0)
    sandbox = Sandbox(SandboxSection(), OmegaPaths(tmp_path), status=status)
    assert Policy.from_json(sandbox.command(["true"])[-3]).landlock is False
    tools = BuiltinTools(tmp_path / "workspace", sandbox=sandbox)
    assert (await tools.run_shell("echo ran")).endswith("ran\n")


def test_config_has_sandbox_and_tools_sections(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[sandbox]\nmode = "rx"\ntcp_ports = [443]\n[tools]\nallow_private_urls = true\n'
    )
    config = load_config(path, environ={})
    assert config.sandbox.mode == "rx" and config.sandbox.tcp_ports == [443]
    assert config.tools.allow_private_urls is True
    assert Config().sandbox.mode == "sandbox" and Config().tools.allow_private_urls is False


# ---- resource limits -----------------------------------------------------------------------


def limited(tmp_path: Path, **limits: int) -> BuiltinTools:
    sandbox = Sandbox(SandboxSection.model_validate(limits), OmegaPaths(tmp_path))
    return BuiltinTools(tmp_path / "workspace", sandbox=sandbox)


async def test_file_size_is_capped(tmp_path: Path) -> None:
    tools = limited(tmp_path, max_file_size_mb=1)
    await tools.run_shell("head -c 3000000 /dev/zero > big")
    assert (tmp_path / "workspace" / "big").stat().st_size <= 1024 * 1024


async def test_cpu_time_is_capped(tmp_path: Path) -> None:
    tools = limited(tmp_path, max_cpu_secs=1)
    started = asyncio.get_running_loop().time()
    out = await tools.run_shell("while :; do :; done", timeout_secs=30)
    assert not out.startswith("exit code 0")
    assert asyncio.get_running_loop().time() - started < 15


async def test_memory_is_capped(tmp_path: Path) -> None:
    tools = limited(tmp_path, max_memory_mb=300)
    out = await tools.run_shell(f"{sys.executable} -c 'bytearray(1024 ** 3)'")
    assert "MemoryError" in out


async def test_process_count_is_capped(tmp_path: Path) -> None:
    # Root is exempt from RLIMIT_NPROC by the kernel; the limit is still set for everyone.
    script = "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    out = await limited(tmp_path, max_processes=50).run_shell(f'{sys.executable} -c "{script}"')
    limit = int(out.splitlines()[1])
    assert 50 <= limit < 100_000


# ---- in-process tools ----------------------------------------------------------------------


def test_file_tools_refuse_omega_home_in_every_mode(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("secret")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "cfg").symlink_to(tmp_path / "config.toml")
    os.link(tmp_path / "config.toml", workspace / "hard")
    for mode in ("sandbox", "rx", "rwx"):
        sandbox = Sandbox(SandboxSection(mode=mode), OmegaPaths(tmp_path))  # type: ignore[arg-type]
        tools = BuiltinTools(workspace, sandbox=sandbox)
        for path in ("../config.toml", str(tmp_path / "config.toml"), "cfg", "hard"):
            with pytest.raises(ToolError, match="refused"):
                tools.read_file(path)
        with pytest.raises(ToolError, match="refused"):
            tools.write_file("hard", "overwritten")
        with pytest.raises(ToolError, match="refused"):
            tools.write_file("../tools/evil.py", "import os")
    assert (tmp_path / "config.toml").read_text() == "secret"


# ---- fetch_url -----------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            if self.path.startswith("/go"):
                self.send_response(302)
                self.send_header("Location", self.path.split("=", 1)[1])
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"internal secret page")

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(
    "url",
    [
        "http://{server}/",
        "http://localhost:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://10.0.0.1/",
        "http://0.0.0.0:{port}/",
    ],
)
async def test_fetch_url_refuses_private_addresses(tmp_path: Path, server: str, url: str) -> None:
    tools = BuiltinTools(tmp_path / "workspace")
    target = url.format(server=server, port=server.split(":")[1])
    with pytest.raises(ToolError, match="refused"):
        await tools.fetch_url(target)


@pytest.mark.parametrize(
    "hop", ["http://localhost:{port}/", "http://169.254.169.254/", "file:///etc/passwd"]
)
async def test_fetch_url_checks_every_redirect(
    tmp_path: Path, server: str, hop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_check = fetch_module.public_address

    async def first_hop_public(host: str, port: int) -> str:
        # Pretend the test server's own address is public, so the redirect is what is tested.
        return host if host == "127.0.0.1" else await real_check(host, port)

    monkeypatch.setattr(fetch_module, "public_address", first_hop_public)
    tools = BuiltinTools(tmp_path / "workspace")
    target = hop.format(port=server.split(":")[1])
    assert "internal secret page" in await tools.fetch_url(f"http://{server}/page")
    with pytest.raises(ToolError, match="refused"):
        await tools.fetch_url(f"http://{server}/go?to={target}")


async def test_fetch_url_may_reach_private_addresses_when_allowed(
    tmp_path: Path, server: str
) -> None:
    tools = BuiltinTools(tmp_path / "workspace", allow_private_urls=True)
    assert "internal secret page" in await tools.fetch_url(f"http://{server}/")


def test_extra_read_grants_never_open_protected_places(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path / "omega")
    user = tmp_path / "user"
    (user / "bin").mkdir(parents=True)
    sandbox = Sandbox(SandboxSection(), paths, environ={"HOME": str(user)})
    tool = tmp_path / "server.py"
    tool.write_text("")
    asked = [
        "/",
        str(tmp_path),  # holds $HOME and $OMEGA_HOME
        str(paths.home / "skills"),
        str(user),
        str(user / ".local"),  # holds .local/share/keyrings
        str(user / ".ssh" / "id_ed25519"),
        str(user / "bin"),  # a folder of $HOME that holds no credential
        str(tool),
        "/usr",
        "/dev",
    ]
    expected = [str((user / "bin").resolve()), str(tool.resolve()), "/usr"]
    assert sandbox.safe_extra(asked) == expected
    rx = Sandbox(SandboxSection(mode="rx"), paths, environ={"HOME": str(user)})
    assert rx.safe_extra([str(user / "bin"), str(user)]) == [str((user / "bin").resolve())]
    # an MCP server's arguments: files only, never folders
    assert sandbox.server_paths("true", ["/etc", str(tool), "-v"]) == [
        os.path.dirname(os.path.realpath(shutil.which("true") or "")),
        str(tool),
    ]


# ---- the walls beside Landlock -----------------------------------------------------------


def test_probe_names_the_walls_up_and_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap, "usable", lambda program: (True, ""))
    both = probe("rx", platform="linux", abi=7, namespace="/usr/bin/bwrap", unix_filter=True)
    assert both.describe() == (
        "rx (landlock ABI 7, bubblewrap namespace, seccomp unix-socket filter)"
    )
    # `sandbox` with the namespace keeps workspace sockets usable: no filter needed...
    sandbox = probe("sandbox", platform="linux", abi=7, namespace="/usr/bin/bwrap")
    assert sandbox.describe() == "sandbox (landlock ABI 7, bubblewrap namespace)"
    # ...unless Landlock cannot scope abstract sockets (ABI < 6, shared network namespace).
    assert probe("sandbox", platform="linux", abi=5, namespace="/usr/bin/bwrap").unix_filter
    none = probe("sandbox", platform="linux", abi=7, namespace="", unix_filter=False)
    assert "missing: bubblewrap namespace" in none.describe()
    assert "seccomp unix-socket filter (not supported" in none.describe()
    monkeypatch.setattr(bwrap, "usable", lambda program: (False, "No permissions to create"))
    broken = probe("sandbox", platform="linux", abi=7, namespace="/usr/bin/bwrap")
    assert not broken.namespace and broken.unix_filter is seccomp.available()
    assert "bwrap cannot create namespaces here: No permissions" in broken.describe()


def test_commands_run_in_the_namespace_only_when_it_is_up(tmp_path: Path) -> None:
    up = SandboxStatus("sandbox", "landlock ABI 7", degraded=False, namespace="/usr/bin/bwrap")
    argv = Sandbox(SandboxSection(), OmegaPaths(tmp_path), status=up).command(["ls"])
    assert argv[0] == sys.executable and argv[-2:] == ["--", "ls"]  # the launcher runs bwrap
    policy = Policy.from_json(argv[-3])
    assert policy.namespace[0] == "/usr/bin/bwrap" and "--unshare-pid" in policy.namespace
    assert not policy.unix_filter
    down = SandboxStatus("sandbox", "landlock ABI 7", degraded=False, unix_filter=True)
    argv = Sandbox(SandboxSection(), OmegaPaths(tmp_path), status=down).command(["ls"])
    assert Policy.from_json(argv[-3]).unix_filter and not Policy.from_json(argv[-3]).namespace
    rwx = Sandbox(SandboxSection(mode="rwx"), OmegaPaths(tmp_path), status=up).command(["ls"])
    assert not Policy.from_json(rwx[-3]).namespace


def test_the_namespace_binds_grants_at_their_paths_and_covers_the_rest(layout: Layout) -> None:
    (Path(layout.omega_home) / "config.toml").write_text("secret")
    policy = build_policy("sandbox", layout, own=[sys.prefix])
    args = bwrap.arguments(policy)
    pairs = list(zip(args, args[1:], args[2:], strict=False))
    assert ("--ro-bind-try", "/usr", "/usr") in pairs
    assert ("--bind-try", layout.workspace, layout.workspace) in pairs
    dev = args.index("--dev")
    assert args[dev : dev + 4] == ["--dev", "/dev", "--proc", "/proc"]
    assert layout.omega_home not in args and layout.user_home not in args  # never bound
    assert not any(a.startswith("/run") or a == "/tmp" for a in args)
    rx = bwrap.arguments(build_policy("rx", layout), runtime_dir="/run/user/1000")
    assert rx[rx.index("--ro-bind-try") + 1 : rx.index("--ro-bind-try") + 3] == ["/", "/"]
    for hidden in ("/tmp", "/run"):  # (this test's $OMEGA_HOME and $HOME lie in /tmp)
        assert ["--tmpfs", hidden] == rx[rx.index(hidden) - 1 : rx.index(hidden) + 1], hidden
    assert rx[rx.index("/etc/shadow") - 2 :][:3] == ["--ro-bind", "/dev/null", "/etc/shadow"]
    # the workspace (in the hidden /tmp) is bound again after the cover
    assert rx.index(layout.workspace) > rx.index("/tmp")


def test_rx_shows_a_grant_below_tmp_again_but_never_tmp_itself(
    layout: Layout, tmp_path: Path
) -> None:
    server = tmp_path / "server"  # an MCP server's script folder, below /tmp here
    server.mkdir()
    rx = bwrap.arguments(build_policy("rx", layout, extra_read=[str(server), "/tmp"]))
    cover = rx.index("/tmp", rx.index("--tmpfs"))
    shown = [i for i, a in enumerate(rx) if a == str(server) and rx[i - 1] == "--ro-bind-try"]
    assert shown and shown[-1] > cover  # bound again after /tmp is covered
    assert "/tmp" not in rx[cover + 1 :]  # /tmp itself stays covered (its sockets)
    assert layout.omega_home not in rx[cover:]  # nothing holding $OMEGA_HOME is shown again


def test_the_seccomp_program_checks_the_arch_and_the_domain() -> None:
    for arch in ("x86_64", "aarch64"):
        code = seccomp.program(arch)
        assert 10 <= len(code) < 30 and all(len(insn) == 8 for insn in code)
    words = [int.from_bytes(insn[4:], "little") for insn in seccomp.program("x86_64")]
    assert 0xC000003E in words and 0x40000003 in words  # x86-64 and i386
    assert seccomp.X32_SYSCALL_BIT in words  # x32 refused outright


def test_rx_closes_the_common_credential_files(layout: Layout) -> None:
    protected = layout.protected()
    for name in (".pgpass", ".cargo/credentials.toml", ".docker", ".config/gh", ".mozilla"):
        assert os.path.join(layout.user_home, name) in protected


def test_backups_written_anywhere_are_closed(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path / "omega")
    paths.ensure()
    place = tmp_path / "elsewhere"
    (place / "omega-backup-20260101-000000").mkdir(parents=True)
    (place / "holiday-photos").mkdir()
    paths.backup_places.write_text(f"{place}\nnot-absolute\n{tmp_path / 'gone'}\n")
    sandbox = Sandbox(SandboxSection(mode="rx"), paths)
    assert sandbox.layout.backups == (str((place / "omega-backup-20260101-000000").resolve()),)
    assert sandbox.layout.backups[0] in sandbox.policy().exclude


def test_omega_init_offers_bubblewrap() -> None:
    from omega.ops.setup import bubblewrap_install

    found = {"apt-get": "/usr/bin/apt-get"}
    assert bubblewrap_install(found.get, "linux") == ["apt-get", "install", "-y", "bubblewrap"]
    assert bubblewrap_install({"dnf": "/usr/bin/dnf"}.get, "linux") == [
        "dnf",
        "install",
        "-y",
        "bubblewrap",
    ]
    assert bubblewrap_install({"bwrap": "/usr/bin/bwrap", **found}.get, "linux") is None
    assert bubblewrap_install(found.get, "darwin") is None
