"""Real MCP servers installed the ordinary ways, for the tests: the official `mcp-server-time`
(PyPI) in a virtualenv made with `python -m venv` and `pip install`, and the official
`@modelcontextprotocol/server-memory` (npm) run through `npx` by a node installed nvm-style
under the user's home.

Each is built once into ~/.cache/omega/test-venvs (PyPI and the npm registry are reached only
then) and copied into a test's own user home, so reruns are fast and offline.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

CACHE = Path.home() / ".cache" / "omega" / "test-venvs"
TIME_VERSION = "2026.10.19"
MEMORY_PACKAGE = "@modelcontextprotocol/server-memory"
MEMORY_VERSION = "2026.8.31"
DONE = ".omega-done"


class UnavailableError(Exception):
    """The install cannot be made here (the reason says why)."""


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One builder at a time (tests may run in parallel)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(argv: list[str], **kwargs: object) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise UnavailableError(f"{argv[:3]} failed: {(done.stderr or done.stdout)[-800:]}")


def time_venv() -> Path:
    """The cached virtualenv with `mcp-server-time` (built on first use)."""
    base = os.path.realpath(sys.base_prefix)
    key = hashlib.sha256(base.encode()).hexdigest()[:8]
    folder = (
        CACHE / f"mcp-server-time-{TIME_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}-{key}"
    )
    with _locked(folder):
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(folder)])
            _run(
                [
                    str(folder / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    f"mcp-server-time=={TIME_VERSION}",
                ],
                timeout=600,
            )
            (folder / DONE).write_text(TIME_VERSION)
    return folder


def install_time_venv(dest: Path) -> Path:
    """The cached virtualenv as if made at `dest` (`python -m venv dest` + `pip install`):
    copied, with its scripts' `#!` lines naming dest's interpreter."""
    source = time_venv()
    shutil.copytree(source, dest, symlinks=True)
    old, new = f"#!{source}/bin/".encode(), f"#!{dest}/bin/".encode()
    for script in (dest / "bin").iterdir():
        if script.is_symlink() or not script.is_file():
            continue
        data = script.read_bytes()
        if data.startswith(old):
            script.write_bytes(new + data[len(old) :])
    return dest


def npm_cache() -> Path:
    """The cached npm cache in which `npx` has installed the memory server (first use)."""
    if shutil.which("npx") is None:
        raise UnavailableError("npx is not installed")
    folder = CACHE / f"npm-server-memory-{MEMORY_VERSION}"
    with _locked(folder):
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            home = folder.with_name(folder.name + ".home")
            home.mkdir(parents=True, exist_ok=True)
            env = {
                "PATH": os.environ["PATH"],
                "HOME": str(home),
                "npm_config_cache": str(folder),
                "npm_config_update_notifier": "false",
            }
            _run(
                ["npx", "-y", f"{MEMORY_PACKAGE}@{MEMORY_VERSION}"],
                input="",
                env=env,
                timeout=300,
            )
            shutil.rmtree(home, ignore_errors=True)
            (folder / DONE).write_text(MEMORY_VERSION)
    return folder


def install_npm_cache(dest: Path) -> Path:
    """The npm cache with the memory server at `dest` (a copy: npm writes its cache)."""
    shutil.copytree(npm_cache(), dest, symlinks=True, ignore=shutil.ignore_patterns(DONE))
    return dest


def install_user_node(home: Path) -> Path:
    """This machine's node and npm laid out as nvm does it, under `home`; returns its bin
    folder (put it first on PATH)."""
    node = shutil.which("node")
    npx = shutil.which("npx")
    if node is None or npx is None:
        raise UnavailableError("node/npx are not installed")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    prefix = home / ".nvm" / "versions" / "node" / (version or "v0")
    (prefix / "bin").mkdir(parents=True)
    try:
        os.link(os.path.realpath(node), prefix / "bin" / "node")
    except OSError:
        shutil.copy2(os.path.realpath(node), prefix / "bin" / "node")
    npm_package = Path(os.path.realpath(npx)).parents[1]  # .../lib/node_modules/npm
    shutil.copytree(npm_package, prefix / "lib" / "node_modules" / "npm", symlinks=True)
    for name in ("npm", "npx"):
        (prefix / "bin" / name).symlink_to(f"../lib/node_modules/npm/bin/{name}-cli.js")
    return prefix / "bin"
