"""`Sandbox`: wraps every command Omega starts for the model (shell, `claude`, MCP servers) in
the launcher (and on Linux in a bubblewrap namespace), and says honestly which walls enforce the
configured mode on this system and which are missing."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import omega
from omega.paths import PRIVATE_DIR_MODE
from omega.sandbox import bwrap, seatbelt
from omega.sandbox.modes import Layout, Mode, Policy, build_policy, inside, real
from omega.sandbox.servers import server_candidates
from omega.sandbox.status import SandboxStatus, probe

if TYPE_CHECKING:
    from omega.config.safety import SandboxSection
    from omega.paths import OmegaPaths

log = logging.getLogger(__name__)

LAUNCHER = Path(__file__).with_name("launch.py")
TMP_NAME = ".tmp"
BACKUP_PREFIX = "omega-backup-"  # the folders `omega backup` writes (ops/backup.py)
Profile = Literal["tool", "claude"]
_PROXY_VARS = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")
# Where the `claude` CLI sends its API requests when not to Anthropic's public endpoint.
_CLAUDE_URL_VARS = ("ANTHROPIC_BASE_URL",)


def proxy_ports(environ: Mapping[str, str]) -> list[int]:
    """The ports of configured HTTP proxies (commands must reach them to reach the web)."""
    return url_ports(environ, _PROXY_VARS)


def url_ports(environ: Mapping[str, str], names: Sequence[str]) -> list[int]:
    """The ports of the URLs in the named variables (unset or malformed ones skipped)."""
    ports = []
    for var in names:
        value = environ.get(var, "").strip()
        if not value:
            continue
        try:
            parts = urlsplit(value if "://" in value else f"http://{value}")
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            continue
        ports.append(port)
    return ports


class Sandbox:
    """The OS sandbox of one Omega: builds the argv that runs a command confined."""

    def __init__(
        self,
        settings: SandboxSection,
        paths: OmegaPaths,
        *,
        environ: Mapping[str, str] | None = None,
        status: SandboxStatus | None = None,
        platform: str | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        # The folder commands may write: Omega's workspace, or one person's folder inside it.
        self.workspace = workspace or paths.workspace
        self._environ = os.environ if environ is None else environ
        self._status = status
        self._platform = platform or sys.platform

    def for_workspace(self, workspace: Path) -> Sandbox:
        """The same sandbox with commands confined to `workspace` (one person's folder)."""
        if workspace == self.workspace:
            return self
        return Sandbox(
            self.settings,
            self.paths,
            environ=self._environ,
            status=self._status,
            platform=self._platform,
            workspace=workspace,
        )

    @property
    def mode(self) -> Mode:
        """The configured mode."""
        return self.settings.mode

    @property
    def status(self) -> SandboxStatus:
        """The mode and its enforcement here (probed once)."""
        if self._status is None:
            self._status = probe(self.mode, platform=self._platform)
        return self._status

    @property
    def home_exposed(self) -> bool:
        """Whether commands can change the modes of $OMEGA_HOME's files (Landlock does not
        cover chmod): no bubblewrap namespace hides it (Landlock alone, `rwx`, degraded)."""
        if self.mode == "rwx" or self.status.degraded:
            return True
        return not (self.status.namespace or self._platform == "darwin")

    @property
    def tmpdir(self) -> Path:
        """The private temp dir commands get as TMPDIR (inside the workspace, owner-only)."""
        return self.workspace / TMP_NAME

    @cached_property
    def layout(self) -> Layout:
        """Where things are, as real paths."""
        home = self._environ.get("HOME", "").strip()
        user_home = real(home) if home else ""
        return Layout(
            omega_home=real(self.paths.home),
            workspace=real(self.workspace),
            # never resolved through `.tmp` itself: a command may have made it a symlink
            tmpdir=os.path.join(real(self.workspace), TMP_NAME),
            user_home="" if user_home == "/" else user_home,
            backups=tuple(self.backups()),
        )

    def backups(self) -> list[str]:
        """Omega's backups in the folders `omega backup` wrote into (read at every command,
        so a backup made since is closed too); those inside the workspace stay open."""
        try:
            places = self.paths.backup_places.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        found = []
        for place in (p.strip() for p in places):
            if not place.startswith("/"):
                continue
            try:
                names = sorted(os.listdir(place))
            except OSError:
                continue
            found += [real(os.path.join(place, n)) for n in names if n.startswith(BACKUP_PREFIX)]
        return found

    def own_paths(self) -> list[str]:
        """Omega's own interpreter and package: readable so commands can run Python (and the
        launcher can run inside `claude`), never when they lie inside $OMEGA_HOME."""
        candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix}
        # The folder `omega` is imported from (site-packages, or src/ of a checkout).
        candidates |= {str(Path(sys.executable).parent), str(Path(omega.__file__).parents[1])}
        found = []
        for path in sorted(candidates):
            resolved = real(path)
            if inside(resolved, self.layout.omega_home) or inside(self.layout.omega_home, resolved):
                continue
            home = self.layout.user_home
            if not (home and inside(home, resolved)):  # never $HOME itself or what holds it
                found.append(resolved)
        return found

    def tcp_ports(self, profile: Profile = "tool") -> list[int]:
        """The TCP ports commands may connect to; `claude` also reaches its API's port
        (ANTHROPIC_BASE_URL, e.g. a local gateway)."""
        ports = [*self.settings.tcp_ports, *proxy_ports(self._environ)]
        if profile == "claude":
            ports += url_ports(self._environ, _CLAUDE_URL_VARS)
        return ports

    def limits(self, profile: Profile) -> dict[str, int]:
        """The resource limits of a command: `claude` (a long-lived node program) keeps its
        CPU time and address space unlimited."""
        s = self.settings
        limits = {
            "processes": s.max_processes,
            "file_size_bytes": s.max_file_size_mb * 1024 * 1024,
        }
        if profile == "tool":
            limits["cpu_secs"] = s.max_cpu_secs
            limits["memory_bytes"] = s.max_memory_mb * 1024 * 1024
        return limits

    def policy(
        self, *, profile: Profile = "tool", extra_read: Sequence[str] = (), program: str = ""
    ) -> Policy:
        """The launcher's policy for one command (`program`: the `claude` executable)."""
        self.prepare()
        return build_policy(
            self.mode,
            self.layout,
            landlock=self._platform.startswith("linux") and not self.status.degraded,
            own=[
                *self.own_paths(),
                *(claude_paths(program) if profile == "claude" else []),
                *self.home_grants(self.safe_extra(extra_read)),
            ],
            extra_read=extra_read,
            tcp_ports=self.tcp_ports(profile),
            limits=self.limits(profile),
            unix_filter=self.status.unix_filter and self._platform.startswith("linux"),
        )

    def prepare(self) -> None:
        """Create the workspace and the private temp dir (owner-only). A command may have put
        something else at `.tmp` (a symlink to `$OMEGA_HOME` would become a place every later
        command may write): it is removed and a real folder made in its place."""
        self.workspace.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        tmp = self.tmpdir
        try:
            info = os.lstat(tmp)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISDIR(info.st_mode):  # a symlink, a file...
            log.warning("the sandbox's temp folder was not a folder (%s): made again", tmp)
            tmp.unlink()
        with contextlib.suppress(FileExistsError):
            tmp.mkdir(mode=PRIVATE_DIR_MODE)
        if not stat.S_ISDIR(os.lstat(tmp).st_mode):  # replaced again meanwhile
            raise OSError(f"{tmp} is not a folder")

    def command(
        self, argv: Sequence[str], *, profile: Profile = "tool", extra_read: Sequence[str] = ()
    ) -> list[str]:
        """The argv that runs `argv` confined: the launcher (limits, Landlock, seccomp), on
        Linux inside a bubblewrap namespace where one works, on macOS under `sandbox-exec`."""
        if not argv:
            raise ValueError("empty command")
        extra = self.safe_extra(extra_read)
        policy = self.policy(profile=profile, extra_read=extra, program=argv[0])
        if self.status.namespace and policy.mode != "rwx":
            runtime = self._environ.get("XDG_RUNTIME_DIR", "").strip()
            program = shutil.which(argv[0], path=self._environ.get("PATH")) or argv[0]
            options = bwrap.arguments(policy, runtime_dir=runtime, program=program)
            policy = replace(policy, namespace=(self.status.namespace, *options))
        wrapped = [sys.executable, "-I", "-B", str(LAUNCHER), policy.to_json(), "--", *argv]
        if self._platform == "darwin" and self.mode != "rwx" and not self.status.degraded:
            text = seatbelt.profile(
                self.mode,
                self.layout,
                own=self.own_paths(),
                extra_read=extra,
                tcp_ports=self.tcp_ports(profile),
            )
            wrapped = [seatbelt.SANDBOX_EXEC, "-p", text, *wrapped]
        return wrapped

    def environment(self, env: Mapping[str, str], profile: Profile = "tool") -> dict[str, str]:
        """`env` with TMPDIR (and friends) pointing at the private temp dir; in `sandbox`
        mode commands also get the workspace as HOME (the real one is closed to them, and
        tools such as git stop at a configuration file they may not read)."""
        self.prepare()
        tmp = str(self.tmpdir)
        result = {**env, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}
        if self.mode == "sandbox" and profile == "tool":
            result["HOME"] = str(self.workspace)
        return result

    def server_paths(self, command: str, args: Sequence[str]) -> list[str]:
        """What an MCP server installed the ordinary way needs to read (its program, its
        virtualenv and base interpreter, its shebang's interpreter, the node package an
        argument points into), filtered by `safe_extra`."""
        path_env = self._environ.get("PATH")
        return self.safe_extra(server_candidates(command, args, path_env, self.layout.user_home))

    def safe_extra(self, paths: Sequence[str]) -> list[str]:
        """The extra read grants that open nothing protected: never `/`, never $HOME nor a
        folder that holds it, $OMEGA_HOME or a credential file, never inside $OMEGA_HOME or a
        credential folder. In `sandbox` mode a folder inside $HOME (a virtualenv, a pipx or
        uv environment, a node install) is granted when it holds no credential."""
        layout = self.layout
        closed = [*layout.protected(), *([layout.user_home] if layout.user_home else [])]
        safe = []
        for path in (real(p) for p in paths if p):
            if path == "/" or any(inside(c, path) for c in closed):
                continue  # `/`, $HOME, or a folder holding it or a protected path
            if any(inside(path, p) for p in layout.protected()):
                continue  # inside $OMEGA_HOME, /dev or a credential folder
            safe.append(path)
        return list(dict.fromkeys(safe))

    def home_grants(self, paths: Sequence[str]) -> list[str]:
        """The vetted grants that lie inside $HOME (`sandbox` closes $HOME to plain read
        grants, so these are granted one by one, still never into a protected path)."""
        home = self.layout.user_home
        return [p for p in paths if home and inside(real(p), home)]


def claude_paths(program: str) -> list[str]:
    """The `claude` CLI's program folder and, for an npm install, its package and node."""
    found: list[str] = []
    located = shutil.which(program)
    if located is None:
        return found
    resolved = Path(real(located))
    found.append(str(resolved.parent))
    parts = resolved.parts
    if "node_modules" in parts:
        index = len(parts) - 1 - parts[::-1].index("node_modules")
        found.append(str(Path(*parts[: index + 3])))
        node = shutil.which("node")
        if node:
            found.append(str(Path(real(node)).parent.parent))
    return found
