"""What an MCP server installed the ordinary way needs to read: its program, the virtualenv it
lives in (pip, pipx, `uv tool`) with its base interpreter's prefix from `pyvenv.cfg`, the
interpreter its shebang names (`#!/usr/bin/env node` looked up on PATH) and that
interpreter's prefix, and the node package an absolute argument points into.

Everything here is a candidate: `Sandbox.safe_extra` decides what is granted (never $HOME, a
folder holding it or a credential, nor anything of $OMEGA_HOME outside the workspace).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from omega.sandbox.modes import real

# Programs whose standard library or modules live under their prefix (`<prefix>/bin/<name>`).
_INTERPRETER = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|bun|deno|ruby|perl|php)$")
_SHEBANG_BYTES = 256
_MAX_DEPTH = 3  # a script whose interpreter is a script whose interpreter is...


def venv_paths(program: str) -> list[str]:
    """The virtualenv a program (or the link to it) lives in, and its base interpreter's
    prefix (`home` in `pyvenv.cfg` is that interpreter's folder)."""
    found: list[str] = []
    for candidate in dict.fromkeys([Path(os.path.abspath(program)), Path(real(program))]):
        root = candidate.parent.parent
        cfg = root / "pyvenv.cfg"
        if not cfg.is_file():
            continue
        found.append(real(root))
        home = _cfg_value(cfg, "home")
        if home:
            for folder in dict.fromkeys([Path(home), Path(real(home))]):
                found.append(str(folder.parent if folder.name == "bin" else folder))
    return found


def _cfg_value(cfg: Path, key: str) -> str:
    """One `key = value` of a `pyvenv.cfg` ("" when absent or unreadable)."""
    try:
        lines = cfg.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in lines:
        name, sep, value = line.partition("=")
        if sep and name.strip().lower() == key:
            return value.strip()
    return ""


def shebang(program: str, path_env: str | None) -> str | None:
    """The interpreter a script's `#!` line names, looked up on PATH for `/usr/bin/env`."""
    try:
        with open(program, "rb") as handle:
            head = handle.read(_SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) != "env":
        return words[0]
    # `env [-S] [-i] [NAME=value]... program`: the first word that is neither.
    name = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), None)
    return shutil.which(name, path=path_env) if name else None


def prefix_of(program: str) -> str | None:
    """An interpreter's prefix (`<prefix>/bin/<name>`: its libraries are beside `bin`)."""
    resolved = Path(real(program))
    if resolved.parent.name == "bin" and _INTERPRETER.match(resolved.name):
        return str(resolved.parent.parent)
    return None


def program_paths(program: str, path_env: str | None, home: str = "", depth: int = 0) -> list[str]:
    """What running `program` reads: its folder (only the file itself inside $HOME, where
    its folder may be any of the person's), its virtualenv, its interpreter's."""
    resolved = real(program)
    inside_home = bool(home) and (resolved + "/").startswith(home.rstrip("/") + "/")
    found = [resolved if inside_home else str(Path(resolved).parent), *venv_paths(program)]
    prefix = prefix_of(program)
    if prefix:
        found.append(prefix)
    interpreter = shebang(real(program), path_env)
    if interpreter and depth < _MAX_DEPTH and os.path.isfile(interpreter):
        found += program_paths(interpreter, path_env, home, depth + 1)
    return found


def package_root(path: str) -> str | None:
    """The `node_modules` folder a file lies in (a package finds its dependencies there)."""
    parts = Path(real(path)).parts
    if "node_modules" not in parts:
        return None
    return str(Path(*parts[: parts.index("node_modules") + 1]))


def server_candidates(
    command: str, args: Sequence[str], path_env: str | None, home: str = ""
) -> list[str]:
    """Every path a server started as `command args` may need to read (not yet vetted);
    `home`: the user's real $HOME."""
    found: list[str] = []
    program = shutil.which(command, path=path_env)
    if program:
        found += program_paths(program, path_env, home)
    for arg in args:
        if not (arg.startswith("/") and os.path.isfile(arg)):
            continue
        found.append(arg)
        root = package_root(arg)
        if root:
            found.append(root)
        elif os.access(arg, os.X_OK):  # a script run by its shebang
            found += program_paths(arg, path_env, home)[1:]
    return list(dict.fromkeys(found))


# npm/npx run by a server: the cache is $HOME/.npm, which in `sandbox` mode is the person's
# folder (writable); once a package is there it starts without asking the registry again.
_NPM_DEFAULTS = {
    "npm_config_prefer_offline": "true",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
}


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """A server's declared environment with npm's quiet, offline-first defaults (what the
    skill declares wins)."""
    return {**_NPM_DEFAULTS, **env}
