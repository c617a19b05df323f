"""safe_fs: opens beneath a root descriptor never follow a symlink, never leave the root, and
refuse hard links and special files; with openat2 and with the component walk (forced)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from omega.tools import safe_fs
from omega.tools.safe_fs import UnsafePathError

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

SECRET = "api_key = sk-secret-5151"


@pytest.fixture(params=["openat2", "walk"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with openat2 (where the kernel has it) and with the fallback walk."""
    if request.param == "walk":
        monkeypatch.setattr(safe_fs, "openat2_available", lambda: False)
    elif not safe_fs.openat2_available():
        pytest.fail("this kernel has no openat2 (Linux >= 5.6 expected on the test machines)")
    return str(request.param)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An $OMEGA_HOME-like folder: config.toml beside the workspace `ws`."""
    (tmp_path / "config.toml").write_text(SECRET)
    (tmp_path / "ws" / "d").mkdir(parents=True)
    (tmp_path / "ws" / "d" / "config.toml").write_text("harmless")
    return tmp_path


@pytest.fixture
def root(home: Path) -> Iterator[int]:
    fd = safe_fs.open_root(home / "ws")
    yield fd
    os.close(fd)


def read(root: int, path: str) -> str:
    fd = safe_fs.open_for_reading(root, safe_fs.parts_of(path))
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode()


def write(root: int, path: str, text: str) -> None:
    fd = safe_fs.open_for_writing(root, safe_fs.parts_of(path))
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode())


def test_an_ordinary_file_is_read_written_and_made_private(way: str, root: int, home: Path) -> None:
    assert read(root, "d/config.toml") == "harmless"
    assert read(root, "./d//config.toml") == "harmless"
    write(root, "new/deeper/notes.txt", "hello")
    made = home / "ws" / "new" / "deeper" / "notes.txt"
    assert made.read_text() == "hello"
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert stat.S_IMODE(made.parent.stat().st_mode) == 0o700
    write(root, "new/deeper/notes.txt", "hi")  # overwritten, emptied first
    assert made.read_text() == "hi"
    fd = safe_fs.open_folder(root, ())
    try:
        assert sorted(os.listdir(fd)) == ["d", "new"]
    finally:
        os.close(fd)


@pytest.mark.parametrize("path", ["../config.toml", "d/../../config.toml", "/etc/passwd", "~/x"])
def test_dotdot_and_absolute_paths_are_refused(path: str) -> None:
    with pytest.raises(ValueError):
        safe_fs.parts_of(path)


@pytest.mark.parametrize("parts", [("..", "config.toml"), ("d", "..", "..", "config.toml")])
def test_dotdot_given_anyway_never_leaves_the_root(
    way: str, root: int, home: Path, parts: tuple[str, ...]
) -> None:
    """Even given '..' (parts_of refuses it first), nothing is opened, made or removed
    outside the root."""
    with pytest.raises(UnsafePathError):
        safe_fs.open_for_reading(root, parts)
    with pytest.raises(UnsafePathError):
        safe_fs.open_for_writing(root, parts)
    with pytest.raises(UnsafePathError):
        safe_fs.open_folder(root, (*parts[:-1], "new"), create=True)
    with pytest.raises(UnsafePathError):
        safe_fs.unlink_beneath(root, parts)
    assert (home / "config.toml").read_text() == SECRET
    assert not (home / "new").exists()


def test_a_symlink_in_a_parent_folder_is_never_followed(way: str, root: int, home: Path) -> None:
    (home / "ws" / "up").symlink_to("..")
    (home / "ws" / "inside").symlink_to("d")  # even one that stays inside
    for path in ("up/config.toml", "inside/config.toml"):
        with pytest.raises(UnsafePathError) as caught:
            read(root, path)
        assert caught.value.errno == errno.ELOOP
        with pytest.raises(UnsafePathError):
            write(root, path, "overwritten")
    with pytest.raises(UnsafePathError):
        write(root, "up/planted.txt", "x")
    with pytest.raises(UnsafePathError):
        safe_fs.open_folder(root, ("up",))
    with pytest.raises(UnsafePathError):
        safe_fs.open_folder(root, ("up", "ws"), create=True)
    assert (home / "config.toml").read_text() == SECRET
    assert not (home / "planted.txt").exists()


def test_a_symlink_as_the_last_component_is_never_followed(way: str, root: int, home: Path) -> None:
    (home / "ws" / "cfg").symlink_to(home / "config.toml")
    (home / "ws" / "dangling").symlink_to(home / "created-outside.txt")
    with pytest.raises(UnsafePathError):
        read(root, "cfg")
    with pytest.raises(UnsafePathError):
        write(root, "cfg", "overwritten")
    with pytest.raises(UnsafePathError):
        write(root, "dangling", "x")
    assert (home / "config.toml").read_text() == SECRET
    assert not (home / "created-outside.txt").exists()


def test_a_hard_link_is_refused_and_never_emptied(way: str, root: int, home: Path) -> None:
    os.link(home / "config.toml", home / "ws" / "hard")
    with pytest.raises(UnsafePathError) as caught:
        read(root, "hard")
    assert caught.value.errno == errno.EMLINK
    with pytest.raises(UnsafePathError):
        write(root, "hard", "overwritten")
    assert (home / "config.toml").read_text() == SECRET


def test_a_fifo_or_device_is_refused_without_blocking(way: str, root: int, home: Path) -> None:
    os.mkfifo(home / "ws" / "pipe")
    started = time.monotonic()
    with pytest.raises(UnsafePathError):
        read(root, "pipe")
    with pytest.raises(OSError):  # ENXIO (no reader) or UnsafePathError: never a hang
        write(root, "pipe", "x")
    assert time.monotonic() - started < 5
    if os.geteuid() == 0:  # only root may make a device node
        os.mknod(home / "ws" / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        with pytest.raises(UnsafePathError):
            read(root, "null")
        with pytest.raises(UnsafePathError):
            write(root, "null", "x")


def test_a_folder_is_not_a_file(way: str, root: int) -> None:
    with pytest.raises(IsADirectoryError):
        read(root, "d")
    with pytest.raises(IsADirectoryError):
        write(root, "d", "x")
    with pytest.raises(NotADirectoryError):
        read(root, "d/config.toml/x")
    with pytest.raises(FileNotFoundError):
        read(root, "d/missing.txt")


def test_unlink_beneath_removes_only_inside(way: str, root: int, home: Path) -> None:
    (home / "ws" / "up").symlink_to("..")
    with pytest.raises(UnsafePathError):
        safe_fs.unlink_beneath(root, ("up", "config.toml"))
    assert (home / "config.toml").exists()
    safe_fs.unlink_beneath(root, ("d", "config.toml"))
    assert not (home / "ws" / "d" / "config.toml").exists()


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _swapper(folder: Path, stop: threading.Event) -> None:
    """Swap `d` (a folder) and `s` (a symlink to `..`) as fast as the kernel allows."""
    libc = ctypes.CDLL(None, use_errno=True)
    d, s = os.fsencode(folder / "d"), os.fsencode(folder / "s")
    while not stop.is_set():
        libc.renameat2(_AT_FDCWD, d, _AT_FDCWD, s, _RENAME_EXCHANGE)


def test_the_rename_exchange_race_never_reaches_config_toml(
    way: str, root: int, home: Path
) -> None:
    """The attack of issue 24 in one process: a thread swaps `d` with a symlink to `..`
    while the opens run; no read returns the secret, no write lands outside."""
    (home / "ws" / "s").symlink_to("..")
    stop = threading.Event()
    thread = threading.Thread(target=_swapper, args=(home / "ws", stop), daemon=True)
    thread.start()
    outcomes: dict[str, int] = {}
    try:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                text = read(root, "d/config.toml")
                assert SECRET not in text
                outcomes["read"] = outcomes.get("read", 0) + 1
            except OSError as exc:
                outcomes[type(exc).__name__] = outcomes.get(type(exc).__name__, 0) + 1
            with contextlib.suppress(OSError):
                write(root, "d/config.toml", "written by the model")
    finally:
        stop.set()
        thread.join()
    assert (home / "config.toml").read_text() == SECRET
    assert outcomes.get("read", 0) > 0  # the ordinary path still worked between swaps
    assert outcomes.get("UnsafePathError", 0) > 0  # and the race was really run
