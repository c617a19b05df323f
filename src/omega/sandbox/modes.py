"""What each sandbox mode lets a command reach, as a `Policy` the launcher turns into rules.

- `sandbox`: read and execute the system folders, read and write the workspace and the private
  temp dir; nothing else under $HOME, nothing of $OMEGA_HOME outside the workspace.
- `rx`: read and execute anywhere except $OMEGA_HOME outside the workspace and known credential
  files; write only the workspace and the private temp dir.
- `rwx`: no filesystem rules at all.

Landlock only allows (it cannot deny a sub-folder of an allowed folder), so a read grant that
contains a protected path is expanded: its other entries are allowed one by one, and the
folders on the way may only be listed. Only the standard library is imported (the launcher
runs this in the child).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from omega.sandbox.landlock import (
    FILE_RIGHTS,
    IOCTL_DEV,
    READ,
    READ_DIR,
    READ_FILE,
    TRUNCATE,
    WRITE,
    WRITE_FILE,
    Ruleset,
)

Mode = Literal["sandbox", "rx", "rwx"]
MODES: tuple[Mode, ...] = ("sandbox", "rx", "rwx")

# What a shell, compilers and interpreters installed by the system need to read and run.
SYSTEM_PATHS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/proc",  # /proc/<pid> of processes outside the sandbox stays closed (Landlock ptrace rule)
    "/sys",
    "/run/systemd/resolve",  # where /etc/resolv.conf usually points
    "/run/resolvconf",
)
# Device files any command may read and write (never the disks).
DEVICE_FILES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
DEVICE_RIGHTS = READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV
# Credential files and folders under $HOME that `rx` keeps closed (the `claude` CLI too: it
# runs with a private CLAUDE_CONFIG_DIR in the temp dir, never the owner's ~/.claude); shell
# start-up files and histories too, where API keys are often exported or typed.
HOME_CREDENTIALS = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".bash_history",
    ".zshrc",
    ".zprofile",
    ".zlogin",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".env",
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pgpass",
    ".my.cnf",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".oci",
    ".claude",
    ".claude.json",
    ".config/gcloud",
    ".config/doctl",
    ".config/gh",
    ".config/hub",
    ".config/git/credentials",
    ".config/rclone",
    ".config/Bitwarden",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".mozilla",
    ".thunderbird",
    ".local/share/keyrings",
)
SYSTEM_CREDENTIALS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh")
# Never readable wholesale: raw disks and memory are all of Omega's secrets at once.
RAW_DEVICES = "/dev"


def real(path: str | os.PathLike[str]) -> str:
    """The absolute path with symlinks resolved (as the kernel checks it)."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it (both real, absolute)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True)
class Layout:
    """The places a policy is about (absolute real paths)."""

    omega_home: str
    workspace: str
    tmpdir: str
    user_home: str = ""  # "" when $HOME is unset or "/"
    backups: tuple[str, ...] = ()  # Omega's backups outside $OMEGA_HOME (`omega backup DIR`)

    def protected(self) -> list[str]:
        """What no command may read in `sandbox` and `rx` (outside the workspace)."""
        paths = [self.omega_home, RAW_DEVICES, *SYSTEM_CREDENTIALS, *self.backups]
        if self.user_home:
            paths += [os.path.join(self.user_home, p) for p in HOME_CREDENTIALS]
        return paths


@dataclass(frozen=True)
class Policy:
    """Everything the launcher needs to confine one command (JSON on its command line)."""

    mode: Mode
    landlock: bool  # enforce Landlock (False: rwx, or a degraded system)
    read: tuple[str, ...] = ()  # read+execute, never into `exclude` nor `home`
    read_own: tuple[str, ...] = ()  # Omega's own Python and package: may be under $HOME
    write: tuple[str, ...] = ()  # read+write (the workspace and the temp dir)
    files: tuple[tuple[str, int], ...] = ()  # single files with their Landlock rights
    exclude: tuple[str, ...] = ()
    home: str = ""  # `sandbox`: $HOME is closed to `read` grants
    tcp_ports: tuple[int, ...] | None = None  # None: TCP is not restricted
    limits: dict[str, int] = field(default_factory=dict)
    unix_filter: bool = False  # refuse socket(AF_UNIX) with seccomp (see seccomp.py)
    namespace: tuple[str, ...] = ()  # `bwrap` and its options: the launcher runs in it first

    def to_json(self) -> str:
        """The policy as one compact JSON string."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Policy:
        """Parse what `to_json` wrote."""
        data = json.loads(text)
        ports = data.get("tcp_ports")
        return cls(
            mode=data["mode"],
            landlock=bool(data["landlock"]),
            read=tuple(data.get("read", ())),
            read_own=tuple(data.get("read_own", ())),
            write=tuple(data.get("write", ())),
            files=tuple((str(p), int(r)) for p, r in data.get("files", ())),
            exclude=tuple(data.get("exclude", ())),
            home=str(data.get("home", "")),
            tcp_ports=None if ports is None else tuple(int(p) for p in ports),
            limits={str(k): int(v) for k, v in data.get("limits", {}).items()},
            unix_filter=bool(data.get("unix_filter", False)),
            namespace=tuple(str(a) for a in data.get("namespace", ())),
        )


def build_policy(
    mode: Mode,
    layout: Layout,
    *,
    landlock: bool = True,
    own: Sequence[str] = (),
    extra_read: Sequence[str] = (),
    tcp_ports: Sequence[int] | None = None,
    limits: dict[str, int] | None = None,
    unix_filter: bool = False,
) -> Policy:
    """The policy of `mode`; `extra_read` adds the paths a command needs (an MCP server's
    program), never inside a protected place or $HOME. The `claude` CLI writes nothing more
    than any command: its state lives in a private home inside the temp dir, its program (in
    `own`) is read-only, so nothing it or its tools write runs later outside the sandbox.
    `unix_filter` refuses new Unix sockets (seccomp)."""
    if mode == "rwx":
        return Policy(mode=mode, landlock=False, limits=dict(limits or {}))
    home = layout.user_home
    write = writable_places(layout)
    files = [(RAW_DEVICES, READ_DIR), *((d, DEVICE_RIGHTS) for d in DEVICE_FILES)]
    read = ["/"] if mode == "rx" else list(SYSTEM_PATHS)
    read += [real(p) for p in extra_read]
    return Policy(
        mode=mode,
        landlock=landlock,
        read=tuple(dict.fromkeys(read)),
        read_own=tuple(dict.fromkeys(real(p) for p in own)),
        write=tuple(dict.fromkeys(real(p) for p in write)),
        files=tuple(files),
        exclude=tuple(dict.fromkeys(real(p) for p in layout.protected())),
        home=home if mode == "sandbox" else "",
        tcp_ports=None if tcp_ports is None else tuple(sorted(set(tcp_ports))),
        limits=dict(limits or {}),
        unix_filter=unix_filter,
    )


def writable_places(layout: Layout) -> list[str]:
    """Where commands may write: the workspace, and the temp dir only when it is elsewhere.
    Inside the workspace it needs no grant of its own, and must not have one: a command can
    replace `.tmp` with a symlink, and a grant resolved through it would open wherever it
    points (`$OMEGA_HOME`) to every later command."""
    if inside(layout.tmpdir, layout.workspace):
        return [layout.workspace]
    return [layout.workspace, layout.tmpdir]


def expand(root: str, rights: int, exclude: Iterable[str]) -> list[tuple[str, int]]:
    """Rules granting `rights` on `root` except the `exclude`d paths: folders on the way to an
    excluded path may only be listed; everything beside it gets `rights`."""
    root = real(root)
    excluded = [real(p) for p in exclude]
    if any(inside(root, e) for e in excluded):
        return []
    if not any(inside(e, root) for e in excluded):
        return [(root, rights)]
    rules = [(root, rights & READ_DIR)]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return rules
    for name in names:
        entry = os.path.join(root, name)
        if os.path.islink(entry):
            continue  # the kernel checks the target, which has rules of its own
        rules += expand(entry, rights, excluded)
    return rules


def ruleset(policy: Policy, abi: int) -> Ruleset:
    """The Landlock rules of a policy for a kernel offering `abi`."""
    rules = Ruleset(abi=abi, restrict_tcp=policy.tcp_ports is not None)
    closed = [*policy.exclude, *([policy.home] if policy.home else [])]
    for path in policy.read:
        for rule in expand(path, READ, closed):
            rules.allow(*rule)
    for path in policy.read_own:
        for rule in expand(path, READ, policy.exclude):
            rules.allow(*rule)
    for path in policy.write:
        if os.path.exists(path):
            rules.allow(path, WRITE)
    for path, rights in policy.files:
        if os.path.exists(path):
            rules.allow(path, rights if os.path.isdir(path) else rights & FILE_RIGHTS)
    rules.tcp_connect_ports = list(policy.tcp_ports or ())
    return rules
