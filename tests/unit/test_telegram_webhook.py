"""The Telegram webhook's pieces (issue 38): the secret token every replica derives alike, the
settings it refuses, and what the listener answers (the secret checked before anything is
read; 500 when the message could not reach the inbox, so Telegram delivers it again)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from pydantic import ValidationError
from starlette.testclient import TestClient
from telegram import Bot, Update

from omega.channels.health import HealthReporter
from omega.channels.telegram.webhook import (
    DROP_AFTER,
    SECRET_HEADER,
    WebhookReceiver,
    listen_address,
    webhook_path,
    webhook_secret,
)
from omega.config.channels import TelegramConfig
from omega.types import IncomingMessage

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

TOKEN = "7000000001:AAFakeTokenForTestsOnly_abcdefghijklmn"
URL = "https://bot.example.org/hooks/telegram"


def config(**extra: Any) -> TelegramConfig:
    return TelegramConfig.model_validate(
        {"enabled": True, "bot_token": TOKEN, "webhook_url": URL, **extra}
    )


def test_the_derived_secret_is_the_same_for_one_token_and_fits_telegrams_rule() -> None:
    secret = webhook_secret(config())
    assert secret == webhook_secret(config(webhook_listen="127.0.0.1:9000"))
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret)
    assert TOKEN not in secret and TOKEN.split(":")[1] not in secret
    other = config(bot_token="7000000002:AAAnotherTokenForTestsOnly_abcdefghij")
    assert webhook_secret(other) != secret
    assert webhook_secret(config(webhook_secret="chosen-by-me_1")) == "chosen-by-me_1"


def test_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValidationError, match="https://"):
        config(webhook_url="bot.example.org/hook")
    with pytest.raises(ValidationError, match="host:port"):
        config(webhook_listen="8443")
    with pytest.raises(ValidationError, match="A-Z"):
        config(webhook_secret="has spaces and é")
    assert listen_address("[::1]:8443") == ("::1", 8443)
    assert listen_address("0.0.0.0:0") == ("0.0.0.0", 0)
    assert webhook_path(URL) == "/hooks/telegram"
    assert webhook_path("https://bot.example.org") == "/"


UPDATE = {
    "update_id": 1000,
    "message": {
        "message_id": 7,
        "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ana"},
        "from": {"id": 42, "is_bot": False, "first_name": "Ana"},
        "text": "hi",
    },
}


def _client(fail_submit: bool = False) -> tuple[TestClient, list[str], list[tuple[str, str]]]:
    settings = config()
    bot = Bot(TOKEN, base_url="http://127.0.0.1:9/bot")
    refusals: list[tuple[str, str]] = []

    async def refused(why: str, peer: str) -> None:
        refusals.append((why, peer))

    receiver = WebhookReceiver(bot, settings, HealthReporter(None, str), refused)
    submitted: list[str] = []

    async def to_message(update: Update) -> IncomingMessage | None:
        assert update.message is not None
        return IncomingMessage("telegram", "42", update.message.text or "", reply_target="42")

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if fail_submit:
            raise RuntimeError("the store is down")
        submitted.append(message.text)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.set_result(None)
        return future

    return TestClient(receiver.app(to_message, submit)), submitted, refusals


def test_the_listener_checks_the_secret_before_reading_the_update() -> None:
    client, submitted, refusals = _client()
    secret = webhook_secret(config())
    path = "/hooks/telegram"
    assert client.post(path, json=UPDATE).status_code == 401
    assert client.post(path, json=UPDATE, headers={SECRET_HEADER: "nope"}).status_code == 403
    assert client.post(path, content=b"not json", headers={SECRET_HEADER: "x"}).status_code == 403
    assert submitted == []
    assert [why for why, _ in refusals] == ["missing", "wrong", "wrong"]
    right = {SECRET_HEADER: secret}
    assert client.post(path, content=b"not json", headers=right).status_code == 400
    too_big = b" " * (1024 * 1024 + 1)
    assert client.post(path, content=too_big, headers=right).status_code == 413
    assert client.post(path, json=UPDATE, headers=right).status_code == 200
    assert submitted == ["hi"]
    assert client.get(path, headers=right).status_code == 405
    assert client.post("/other", json=UPDATE, headers=right).status_code == 404


def test_an_update_that_cannot_reach_the_inbox_is_answered_500_so_telegram_retries() -> None:
    client, submitted, _ = _client(fail_submit=True)
    secret = webhook_secret(config())
    # However often: an update read but not stored is never given up (that would lose it),
    # unlike one that cannot be read (DROP_AFTER).
    for _ in range(DROP_AFTER + 2):
        response = client.post("/hooks/telegram", json=UPDATE, headers={SECRET_HEADER: secret})
        assert response.status_code == 500
    assert submitted == []
