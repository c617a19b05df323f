"""The start-up self-check: each check passes when things are right and, when not, fails with
what to do; channels add their own checks."""

from __future__ import annotations

import http.server
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from omega.config import Config
from omega.health_file import write_health
from omega.memory import Store
from omega.ops import selfcheck
from omega.ops.selfcheck import Check, CheckContext, register_check, run_checks, unregister_check
from omega.paths import OmegaPaths
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def paths(tmp_path: Path) -> OmegaPaths:
    home = OmegaPaths(tmp_path / "home")
    home.ensure()
    return home


@pytest.fixture
def store(paths: OmegaPaths) -> Iterator[Store]:
    db = Store(paths.db)
    yield db
    db.close()


def _by_name(results: list[Check]) -> dict[str, Check]:
    return {c.name.split(" ")[0]: c for c in results}


def _config(**sections: Any) -> Config:
    return Config.model_validate(sections)


def test_a_healthy_home_passes(paths: OmegaPaths, store: Store) -> None:
    config = _config(provider={"default": "openai", "openai": {"base_url": "http://x/v1"}})
    results = _by_name(run_checks(CheckContext(config, paths, store)))
    assert set(results) == {"database", "provider", "sandbox", "disk", "security"}
    assert all(c.ok for c in results.values()), results
    assert results["database"].detail.startswith("writable, schema ")


def test_database_closed_or_read_only_fails_with_advice(paths: OmegaPaths) -> None:
    db = Store(paths.db)
    db.close()
    check = selfcheck.check_database(CheckContext(Config(), paths, db))
    assert not check.ok and "belong to you" in check.fix
    assert not selfcheck.check_database(CheckContext(Config(), paths, None)).ok


@pytest.mark.no_store
def test_provider_reachability_and_refused_key(paths: OmegaPaths, fake_openai: FakeOpenAI) -> None:
    config = _config(
        provider={
            "default": "openai",
            "openai": {"base_url": fake_openai.base_url, "api_key": "sk-test-1234567890"},
        }
    )
    check = selfcheck.check_provider(CheckContext(config, paths, network=True))
    assert check.ok and "answers (HTTP" in check.detail
    assert fake_openai.requests == []  # no completion was asked for

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config.provider.openai.base_url = f"http://127.0.0.1:{port}/v1"
    check = selfcheck.check_provider(CheckContext(config, paths, network=True))
    assert not check.ok and "does not answer" in check.detail and "base_url" in check.fix
    # without network only the configuration is looked at
    assert selfcheck.check_provider(CheckContext(config, paths)).ok

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config.provider.openai.base_url = f"http://127.0.0.1:{server.server_port}/v1"
        check = selfcheck.check_provider(CheckContext(config, paths, network=True))
    finally:
        server.shutdown()
    assert not check.ok and "refused" in check.detail and "api_key" in check.fix
    assert "sk-test-1234567890" not in check.line()


@pytest.mark.no_store
def test_missing_claude_cli_says_how_to_install(
    paths: OmegaPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    check = selfcheck.check_provider(
        CheckContext(_config(provider={"default": "claude-code"}), paths)
    )
    assert not check.ok and check.name == "provider claude-code"
    assert "claude" in check.detail and "omega init" in check.fix


@pytest.mark.no_store
def test_sandbox_degraded_or_unrestricted(
    paths: OmegaPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    rwx = selfcheck.check_sandbox(CheckContext(_config(sandbox={"mode": "rwx"}), paths))
    assert rwx.ok and rwx.warning and "UNRESTRICTED" in rwx.detail
    from omega.sandbox import landlock

    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    degraded = selfcheck.check_sandbox(CheckContext(Config(), paths))
    assert not degraded.ok and "Landlock" in degraded.fix


@pytest.mark.no_store
def test_low_disk(paths: OmegaPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    usage = shutil.disk_usage(paths.home)
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage._replace(free=100 * 1024 * 1024))
    check = selfcheck.check_disk(CheckContext(Config(), paths))
    assert not check.ok and "free some space" in check.fix


@pytest.mark.no_store
def test_enabled_channels_need_credentials(paths: OmegaPaths) -> None:
    assert selfcheck.check_telegram(CheckContext(Config(), paths)) is None  # disabled
    config = _config(channel={"telegram": {"enabled": True}, "whatsapp": {"enabled": True}})
    telegram = selfcheck.check_telegram(CheckContext(config, paths))
    assert telegram is not None and not telegram.ok and "bot_token" in telegram.fix
    config.channel.telegram.bot_token = SecretStr("123:abc")
    telegram = selfcheck.check_telegram(CheckContext(config, paths))
    assert telegram is not None and telegram.ok and telegram.warning  # nobody allowed yet
    whatsapp = selfcheck.check_whatsapp(CheckContext(config, paths))
    assert whatsapp is not None and not whatsapp.ok and "/whatsapp" in whatsapp.fix


@pytest.mark.no_store
def test_channel_checks_follow_what_the_running_channel_reported(paths: OmegaPaths) -> None:
    config = _config(
        channel={
            "telegram": {"enabled": True, "bot_token": "1:x", "allowed_users": [42]},
            "whatsapp": {"enabled": True},
        }
    )
    # A session folder alone is no pairing: neonize creates session.db before any QR scan.
    paths.whatsapp.mkdir(parents=True, exist_ok=True)
    (paths.whatsapp / "session.db").write_bytes(b"x")
    assert not selfcheck.check_whatsapp(CheckContext(config, paths)).ok  # type: ignore[union-attr]
    write_health(paths.channel_health("whatsapp"), account="+351900000000", state="connected")
    whatsapp = selfcheck.check_whatsapp(CheckContext(config, paths))
    assert whatsapp is not None and whatsapp.ok and "+351900000000" in whatsapp.detail
    write_health(paths.channel_health("whatsapp"), account="+351900000000", state="logged out")
    whatsapp = selfcheck.check_whatsapp(CheckContext(config, paths))
    assert whatsapp is not None and not whatsapp.ok and "logged out" in whatsapp.detail
    write_health(paths.channel_health("telegram"), account="", state="token rejected")
    telegram = selfcheck.check_telegram(CheckContext(config, paths))
    assert telegram is not None and not telegram.ok and "@BotFather" in telegram.fix
    write_health(paths.channel_health("telegram"), account="@omega_bot", state="polling")
    telegram = selfcheck.check_telegram(CheckContext(config, paths))
    assert telegram is not None and telegram.ok and "@omega_bot" in telegram.detail


def test_channels_register_their_own_checks(paths: OmegaPaths, store: Store) -> None:
    config = _config(channel={"telegram": {"enabled": True, "bot_token": "1:x"}})

    def get_me(ctx: CheckContext) -> Check:
        return Check("telegram", False, "getMe: Unauthorized", "create a new token")

    def broken(ctx: CheckContext) -> Check:
        raise RuntimeError("boom")

    register_check("telegram", get_me)  # replaces the built-in presence check
    register_check("flaky", broken)
    try:
        results = _by_name(run_checks(CheckContext(config, paths, store)))
    finally:
        unregister_check("telegram")
        unregister_check("flaky")
    assert results["telegram"].detail == "getMe: Unauthorized"
    assert not results["flaky"].ok and "boom" in results["flaky"].detail
    assert "flaky" not in _by_name(run_checks(CheckContext(config, paths, store)))


def test_security_audit_feeds_the_self_check(paths: OmegaPaths, store: Store) -> None:
    """The audit's critical findings fail the `security` check, high ones warn, and the fix
    names `omega security audit`; root and the sandbox are not said twice."""
    config = _config(provider={"default": "local"})
    assert _by_name(run_checks(CheckContext(config, paths, store)))["security"].ok
    paths.config.write_text("")
    paths.config.chmod(0o644)
    paths.home.chmod(0o755)
    check = _by_name(run_checks(CheckContext(config, paths, store)))["security"]
    assert not check.ok
    assert "file-modes:config.toml" in check.detail and "home-mode" in check.detail
    assert "omega security audit` (--fix repairs 2 of them)" in check.fix
    paths.config.chmod(0o600)
    paths.home.chmod(0o700)
    web = _config(
        provider={"default": "local"},
        web={"host": "0.0.0.0", "allow_remote": True, "enabled": True},
    )
    check = _by_name(run_checks(CheckContext(web, paths, store)))["security"]
    assert check.ok and check.warning and "web-bind" in check.detail
    assert "process-root" not in check.detail


@pytest.mark.no_store
def test_lines_and_summary(paths: OmegaPaths) -> None:
    results = [
        Check("disk", True, "9 GiB free"),
        Check("telegram", False, "no token", "set bot_token"),
    ]
    assert results[1].line() == "telegram: FAILED - no token -> set bot_token"
    assert selfcheck.summary(results) == (
        "Self-check: 1 of 2 ok\n- telegram: FAILED - no token -> set bot_token"
    )
