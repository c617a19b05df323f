"""`omega init --non-interactive`: every answer as a flag, config.toml written 0600 with no
secret echoed, the provider and Telegram token tested, and a re-run keeping what it does not
ask about (other keys and comments)."""

from __future__ import annotations

import http.server
import json
import stat
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_omega
from tests.fakes.openai_server import FakeOpenAI, Step

SECRETS = ("sk-init-secret-0123456789", "123456:bot-token-secret", "voice-secret-key-987")


class FakeTelegram:
    """Answers getMe for one token; records the paths asked."""

    def __init__(self, token: str) -> None:
        paths: list[str] = []
        self.paths = paths

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                paths.append(self.path)
                ok = self.path == f"/bot{token}/getMe"
                body = (
                    {"ok": True, "result": {"id": 1, "is_bot": True, "username": "omega_bot"}}
                    if ok
                    else {"ok": False, "error_code": 401, "description": "Unauthorized"}
                )
                data = json.dumps(body).encode()
                self.send_response(200 if ok else 401)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    fake = FakeTelegram(SECRETS[1])
    yield fake
    fake.server.shutdown()


def _every_flag(server: FakeOpenAI) -> list[str]:
    return [
        "init",
        "--non-interactive",
        "--provider",
        "openai",
        "--base-url",
        server.base_url,
        "--api-key",
        SECRETS[0],
        "--model",
        "fake-model",
        "--telegram-token",
        SECRETS[1],
        "--telegram-owner",
        "4242",
        "--whatsapp",
        "--voice-base-url",
        "http://127.0.0.1:9/v1",
        "--voice-api-key",
        SECRETS[2],
        "--voice-model",
        "whisper-1",
        "--sandbox",
        "rx",
        "--heartbeat",
        "--heartbeat-minutes",
        "45",
        "--web",
        "--no-service",
    ]


def test_every_answer_as_a_flag(
    fake_openai: FakeOpenAI, telegram: FakeTelegram, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="OK")]
    result = run_omega(
        *_every_flag(fake_openai), env={"OMEGA_CHANNEL__TELEGRAM__API_URL": telegram.url}
    )
    assert result.returncode == 0, result.stderr
    assert "Telegram bot: @omega_bot" in result.stdout
    assert "Provider answered: OK" in result.stdout
    assert len(fake_openai.requests) == 1  # one call tests the provider
    assert telegram.paths == [f"/bot{SECRETS[1]}/getMe"]
    for secret in SECRETS:
        assert secret not in result.stdout + result.stderr

    path = isolated_env / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    config = tomllib.loads(path.read_text())
    assert config["provider"]["default"] == "openai"
    assert config["provider"]["openai"] == {
        "model": "fake-model",
        "api_key": SECRETS[0],
        "base_url": fake_openai.base_url,
    }
    assert config["channel"]["telegram"] == {
        "bot_token": SECRETS[1],
        "enabled": True,
        "allowed_users": [4242],
    }
    assert config["auth"]["owners"] == ["telegram:4242"]
    assert config["channel"]["whatsapp"]["enabled"] is True
    assert config["voice"] == {
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": SECRETS[2],
        "model": "whisper-1",
    }
    assert config["sandbox"]["mode"] == "rx"
    assert config["heartbeat"] == {
        "channel": "telegram",
        "reply_target": "4242",
        "enabled": True,
        "interval_minutes": 45,
    }
    assert config["web"]["enabled"] is True
    # Omega itself takes the file as it is
    status = run_omega("status")
    assert status.returncode == 0, status.stderr
    assert ["provider", "openai"] in [line.split() for line in status.stdout.splitlines()]


@pytest.mark.no_store
def test_rerun_keeps_other_keys_and_comments(isolated_env: Path) -> None:
    isolated_env.mkdir(parents=True)
    path = isolated_env / "config.toml"
    path.write_text(
        "# my Omega, hand-tuned\n"
        "[omega]\n"
        'name = "Zed"  # what it calls itself\n'
        "\n"
        "[provider]\n"
        'default = "anthropic"\n'
        "timeout_secs = 90.0\n"
        "\n"
        "[provider.anthropic]\n"
        "# kept across re-runs\n"
        'api_key = "sk-ant-keep-me-0123456789"\n'
        "\n"
        "[memory]\n"
        "max_context_messages = 12\n"
    )
    path.chmod(0o644)
    result = run_omega(
        "init",
        "--non-interactive",
        "--provider",
        "ollama",
        "--model",
        "qwen3",
        "--sandbox",
        "sandbox",
        "--no-check",
    )
    assert result.returncode == 0, result.stderr
    assert "Updated" in result.stdout
    text = path.read_text()
    for kept in (
        "# my Omega, hand-tuned",
        'name = "Zed"  # what it calls itself',
        "# kept across re-runs",
        'api_key = "sk-ant-keep-me-0123456789"',
        "timeout_secs = 90.0",
        "max_context_messages = 12",
    ):
        assert kept in text, kept
    config = tomllib.loads(text)
    assert config["provider"]["default"] == "ollama"
    assert config["provider"]["ollama"] == {"model": "qwen3"}
    assert config["sandbox"] == {"mode": "sandbox"}
    assert "telegram" not in config.get("channel", {})  # not asked, not written
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    again = run_omega("init", "--non-interactive", "--telegram-owner", "77", "--no-check")
    assert again.returncode == 0, again.stderr
    config = tomllib.loads(path.read_text())
    assert config["provider"]["default"] == "ollama"
    assert config["channel"]["telegram"]["allowed_users"] == [77]
    assert config["auth"]["owners"] == ["telegram:77"]


@pytest.mark.no_store
def test_key_from_the_environment_is_written_for_the_service(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    result = run_omega(
        "init",
        "--non-interactive",
        "--provider",
        "openai",
        "--base-url",
        fake_openai.base_url,
        env={"OPENAI_API_KEY": SECRETS[0]},
    )
    assert result.returncode == 0, result.stderr
    assert SECRETS[0] not in result.stdout + result.stderr
    config = tomllib.loads((isolated_env / "config.toml").read_text())
    assert config["provider"]["openai"]["api_key"] == SECRETS[0]
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {SECRETS[0]}"


@pytest.mark.no_store
def test_bad_answers_write_nothing(
    fake_openai: FakeOpenAI, telegram: FakeTelegram, isolated_env: Path
) -> None:
    config = isolated_env / "config.toml"
    bad = run_omega("init", "--non-interactive", "--provider", "nope", "--no-check")
    assert bad.returncode == 1 and "unknown provider 'nope'" in bad.stderr
    bad = run_omega("init", "--non-interactive", "--sandbox", "open", "--no-check")
    assert bad.returncode == 1 and "sandbox" in bad.stderr
    for owner in ("ana", "\u00b9\u00b2"):  # superscripts: str.isdigit() passed them to int()
        bad = run_omega("init", "--non-interactive", "--telegram-owner", owner, "--no-check")
        assert bad.returncode == 1 and "must be a number" in bad.stderr, bad.stderr
    fake_openai.script = [Step(status=401, text="bad key")] * 5
    failing = run_omega(
        "init",
        "--non-interactive",
        "--provider",
        "openai",
        "--base-url",
        fake_openai.base_url,
        "--api-key",
        SECRETS[0],
    )
    assert failing.returncode == 1 and "--no-check" in failing.stderr
    refused = run_omega(
        "init",
        "--non-interactive",
        "--telegram-token",
        "999:wrong",
        env={"OMEGA_CHANNEL__TELEGRAM__API_URL": telegram.url},
    )
    assert refused.returncode == 1 and "Unauthorized" in refused.stderr
    assert "999:wrong" not in refused.stderr
    assert not config.exists()


@pytest.mark.no_store
def test_asks_only_on_a_terminal(isolated_env: Path) -> None:
    result = run_omega("init")
    assert result.returncode == 2 and "--non-interactive" in result.stderr
