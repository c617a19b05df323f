"""A real Matrix homeserver for the tests: Synapse from its own virtualenv (`.venv-synapse`,
made by `make dev`), configured on loopback with SQLite, shared-secret registration, no
federation, URL previews, metrics or rate limits; and `MatrixUser`, a small synchronous
client-server API client the tests use to play the people who talk to Omega.

Synapse takes several seconds to start on a small machine, so the tests start it once per
session (the `synapse` fixture in tests/conftest.py) and register fresh users per test."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SYNAPSE_PYTHON = ROOT / ".venv-synapse" / "bin" / "python"
SERVER_NAME = "localhost"
_UNLIMITED = {"per_second": 10_000, "burst_count": 100_000}


class SynapseUnavailableError(RuntimeError):
    """Synapse is not installed here or did not start (the message says why)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _configure(directory: Path, port: int) -> dict[str, Any]:
    """Generate Synapse's config with its own tool, then make it a loopback test server."""
    config_path = directory / "homeserver.yaml"
    subprocess.run(
        [
            str(SYNAPSE_PYTHON),
            "-m",
            "synapse.app.homeserver",
            "--server-name",
            SERVER_NAME,
            "--config-path",
            str(config_path),
            "--data-directory",
            str(directory / "data"),
            "--generate-config",
            "--report-stats=no",
        ],
        cwd=directory,
        check=True,
        capture_output=True,
        timeout=120,
    )
    config: dict[str, Any] = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["listeners"] = [
        {
            "port": port,
            "bind_addresses": ["127.0.0.1"],
            "type": "http",
            "tls": False,
            "x_forwarded": False,
            "resources": [{"names": ["client"], "compress": False}],
        }
    ]
    config["database"] = {"name": "sqlite3", "args": {"database": str(directory / "hs.db")}}
    config.update(
        enable_registration=False,
        trusted_key_servers=[],
        suppress_key_server_warning=True,
        federation_domain_whitelist=[],
        url_preview_enabled=False,
        enable_metrics=False,
        report_stats=False,
        presence={"enabled": False},
        # No cached /sync answers: a restarted client gets what is true now, so a test can
        # tell whether the client resumed from its saved token.
        caches={"sync_response_cache_duration": 0},
        rc_message=_UNLIMITED,
        rc_registration=_UNLIMITED,
        rc_admin_redaction=_UNLIMITED,
        rc_joins_per_room=_UNLIMITED,
        rc_media_create=_UNLIMITED,
        rc_login={
            "address": _UNLIMITED,
            "account": _UNLIMITED,
            "failed_attempts": _UNLIMITED,
        },
        rc_joins={"local": _UNLIMITED, "remote": _UNLIMITED},
        rc_invites={"per_room": _UNLIMITED, "per_user": _UNLIMITED, "per_issuer": _UNLIMITED},
    )
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return config


class Synapse:
    """One Synapse process on loopback; `register` makes accounts through the admin API."""

    def __init__(self, directory: Path) -> None:
        if not SYNAPSE_PYTHON.exists():
            raise SynapseUnavailableError(f"{SYNAPSE_PYTHON} is missing: run `make dev`")
        self.directory = directory
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.secret = str(_configure(directory, self.port)["registration_shared_secret"])
        self._log = (directory / "synapse.out").open("wb")
        self.proc = subprocess.Popen(
            [
                str(SYNAPSE_PYTHON),
                "-m",
                "synapse.app.homeserver",
                "-c",
                str(directory / "homeserver.yaml"),
            ],
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "SYNAPSE_CACHE_FACTOR": "0.1"},
        )
        self._names = itertools.count(1)
        self._wait_until_up()

    def _wait_until_up(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SynapseUnavailableError(f"Synapse exited: {self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_matrix/client/versions", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SynapseUnavailableError(f"Synapse did not answer in {timeout:.0f} s: {self.tail()}")

    def tail(self) -> str:
        """The end of Synapse's output, for a failure's message."""
        path = self.directory / "synapse.out"
        return path.read_text(encoding="utf-8", errors="replace")[-3000:] if path.exists() else ""

    def register(self, name: str, password: str = "", admin: bool = False) -> MatrixUser:
        """A new account `<name><n>` (unique in this session), logged in."""
        localpart = f"{name}{next(self._names)}"
        password = password or f"pw-{localpart}-0123"
        nonce = _request("GET", f"{self.url}/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
        mac.update(
            b"\x00".join(
                [
                    nonce.encode(),
                    localpart.encode(),
                    password.encode(),
                    b"admin" if admin else b"notadmin",
                ]
            )
        )
        answer = _request(
            "POST",
            f"{self.url}/_synapse/admin/v1/register",
            {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": admin,
                "mac": mac.hexdigest(),
            },
        )
        return MatrixUser(self.url, answer["user_id"], answer["access_token"], password)

    def stop(self) -> None:
        """Stop Synapse (it exits on SIGTERM)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


def _request(
    method: str,
    url: str,
    body: dict[str, Any] | bytes | None = None,
    token: str = "",
    content_type: str = "application/json",
) -> dict[str, Any]:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            result: dict[str, Any] = json.loads(answer.read() or b"{}")
            return result
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"{method} {url}: {exc.code} {exc.read()!r}") from None


class MatrixUser:
    """A person on the homeserver, driven through the client-server API."""

    def __init__(self, url: str, user_id: str, token: str, password: str) -> None:
        self.url = url
        self.user_id = user_id
        self.token = token
        self.password = password
        self._txn = itertools.count(1)

    def _api(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return _request(method, f"{self.url}/_matrix/client/v3{path}", body, self.token)

    def set_name(self, name: str) -> None:
        """Set the display name."""
        self._api("PUT", f"/profile/{_q(self.user_id)}/displayname", {"displayname": name})

    def create_room(
        self, invite: list[str], name: str = "", encrypted: bool = False, direct: bool = False
    ) -> str:
        """A new private room, inviting `invite`; its id."""
        body: dict[str, Any] = {"invite": invite, "preset": "private_chat", "is_direct": direct}
        if name:
            body["name"] = name
        if encrypted:
            body["initial_state"] = [
                {
                    "type": "m.room.encryption",
                    "state_key": "",
                    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
                }
            ]
        return str(self._api("POST", "/createRoom", body)["room_id"])

    def invite(self, room_id: str, user_id: str) -> None:
        """Invite someone into a room."""
        self._api("POST", f"/rooms/{_q(room_id)}/invite", {"user_id": user_id})

    def join(self, room_id: str) -> None:
        """Join a room this user was invited to."""
        self._api("POST", f"/join/{_q(room_id)}", {})

    def invitations(self) -> list[str]:
        """The rooms this user is invited to and has not joined."""
        answer = self._api("GET", "/sync?timeout=0")
        return list(answer.get("rooms", {}).get("invite", {}))

    def membership(self, room_id: str, user_id: str) -> str:
        """`user_id`'s membership of the room ("invite", "join", "leave"...)."""
        path = f"/rooms/{_q(room_id)}/state/m.room.member/{_q(user_id)}"
        return str(self._api("GET", path).get("membership") or "")

    def members(self, room_id: str) -> list[str]:
        """Who has joined the room."""
        return list(self._api("GET", f"/rooms/{_q(room_id)}/joined_members")["joined"])

    def send(self, room_id: str, content: dict[str, Any], kind: str = "m.room.message") -> str:
        """Send an event; its id."""
        txn = f"t{time.time_ns()}-{next(self._txn)}"
        path = f"/rooms/{_q(room_id)}/send/{kind}/{txn}"
        return str(self._api("PUT", path, content)["event_id"])

    def say(self, room_id: str, text: str, **extra: Any) -> str:
        """Send a text message; its event id."""
        return self.send(room_id, {"msgtype": "m.text", "body": text, **extra})

    def upload(self, data: bytes, mime: str, name: str) -> str:
        """Upload a file; its mxc:// URI."""
        url = f"{self.url}/_matrix/media/v3/upload?filename={_q(name)}"
        return str(_request("POST", url, data, self.token, mime)["content_uri"])

    def download(self, mxc: str) -> bytes:
        """A file's bytes from the media repository (authenticated media)."""
        server, media = mxc.removeprefix("mxc://").split("/", 1)
        request = urllib.request.Request(
            f"{self.url}/_matrix/client/v1/media/download/{server}/{media}"
        )
        request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return bytes(answer.read())

    def messages(self, room_id: str, sender: str = "") -> list[dict[str, Any]]:
        """The room's messages, oldest first (from `sender` only, when given)."""
        path = f"/rooms/{_q(room_id)}/messages?dir=b&limit=1000"
        chunk = self._api("GET", path)["chunk"]
        found = [e for e in reversed(chunk) if e.get("type") == "m.room.message"]
        return [e for e in found if not sender or e.get("sender") == sender]

    def texts(self, room_id: str, sender: str) -> list[str]:
        """The bodies of `sender`'s text messages in the room, oldest first."""
        return [
            str(e["content"].get("body"))
            for e in self.messages(room_id, sender)
            if e["content"].get("msgtype") in ("m.text", "m.notice")
        ]

    def watch_typing(self, room_id: str) -> TypingWatch:
        """Start noting who is shown typing in the room from now on."""
        return TypingWatch(self, room_id, str(self._api("GET", "/sync?timeout=0")["next_batch"]))


class TypingWatch:
    """Who was shown typing in a room, from incremental syncs of its ephemeral events (each
    sync goes on from the last: Synapse answers a repeated request from its cache)."""

    def __init__(self, user: MatrixUser, room_id: str, since: str) -> None:
        self.user = user
        self.room_id = room_id
        self.since = since
        self.typists: set[str] = set()

    def seen(self) -> set[str]:
        """Everyone shown typing so far."""
        room_filter = json.dumps({"room": {"rooms": [self.room_id], "timeline": {"limit": 1}}})
        answer = self.user._api(
            "GET", f"/sync?timeout=1000&since={_q(self.since)}&filter={_q(room_filter)}"
        )
        self.since = str(answer["next_batch"])
        room = answer.get("rooms", {}).get("join", {}).get(self.room_id, {})
        for event in room.get("ephemeral", {}).get("events", []):
            if event.get("type") == "m.typing":
                self.typists.update(event["content"].get("user_ids", []))
        return self.typists


def _q(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def wait_until(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:
    """Poll `condition` until it is true, else fail naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what or condition}")
