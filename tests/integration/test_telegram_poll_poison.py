"""A poison update in polling mode, as in the webhook: Telegram gives `getUpdates` nothing past
an update until it is confirmed, so one that cannot be read is given up after three tries
(confirmed, audited as dropped, the owner told) and the next message flows; one read but not
stored (the store away) is never given up, however often it fails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.channels.telegram import TelegramChannel
from omega.config.channels import TelegramConfig
from omega.types import IncomingMessage
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.integration.test_telegram import (
    ANA,
    OWNER,
    Omega,
    start,
    telegram,
    telegram_env,
    wait_polling,
)
from tests.integration.test_telegram_webhook_poison import _poison

__all__ = ["start", "telegram"]  # the fixtures this module uses


def test_a_polled_update_failing_three_times_is_dropped_and_the_next_one_is_answered(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    omega = start(telegram_env(telegram, fake_openai) | OWNER)
    wait_polling(telegram)
    poison = _poison(telegram)
    telegram.private(ANA, "after the poison")
    telegram.wait_for(lambda: "echo: after the poison" in telegram.texts(ANA))
    # The owner is told (the alert kept for them goes out once they write).
    telegram.wait_for(lambda: any("was dropped" in text for text in telegram.texts(ANA)))

    code, err = omega.terminate()
    assert code == 0, err
    assert f"polling update {poison} failed 3 times; dropped" in err
    assert err.count(f"update {poison} not read") == 2  # the first two tries, then given up
    with connect_db(isolated_env / "memory.db") as conn:
        dropped = conn.execute(
            "SELECT status, detail FROM audit_log WHERE event = 'telegram_update_dropped'"
        ).fetchall()
    assert len(dropped) == 1
    assert dropped[0][0] == "error" and f"update {poison} dropped after 3" in dropped[0][1]


@pytest.mark.no_store  # the store is a `submit` that fails, then takes the message
async def test_a_polled_message_the_store_cannot_take_is_never_given_up(
    telegram: FakeTelegram,
) -> None:
    config = TelegramConfig.model_validate(
        {"enabled": True, "bot_token": TOKEN, "api_url": telegram.api_url}
    )
    told: list[int] = []

    async def dropped(update_id: int, tries: int, error: str) -> None:
        told.append(update_id)

    channel = TelegramChannel(config, poll_timeout=1, dropped=dropped)
    got: list[IncomingMessage] = []
    refusals = 4  # more than the three tries an unreadable update gets

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        nonlocal refusals
        if refusals:
            refusals -= 1
            raise OSError("the store is away")
        got.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    running = asyncio.create_task(channel.run(submit))
    await asyncio.to_thread(telegram.private, ANA, "keep me")
    for _ in range(400):
        if got:
            break
        await asyncio.sleep(0.05)
    await channel.stop()
    await asyncio.wait_for(running, 30)
    assert [message.text for message in got] == ["keep me"]
    assert refusals == 0 and told == []
