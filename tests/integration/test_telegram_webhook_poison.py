"""A poison update through the real webhook of `omega start`: Telegram delivers nothing after an
update until that one is taken, so an update that fails every time is given up after three
deliveries (answered 200, audited as dropped, the owner told) and the next message flows."""

from __future__ import annotations

from pathlib import Path

from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram
from tests.integration.test_telegram import ANA, OWNER, Omega, start, telegram
from tests.integration.test_telegram_webhook import PATH, _free_port, wait_listening, webhook_env

__all__ = ["start", "telegram"]  # the fixtures this module uses


def _poison(telegram: FakeTelegram) -> int:
    """A group message addressed to Omega whose text holds a lone surrogate: it parses as an
    Update, but reading its entities fails, every time it comes."""
    mention = f"@{BOT_USERNAME}"
    return telegram.queue(
        {
            "chat": {"id": -100200, "type": "supergroup", "title": "Team"},
            "from": {"id": ANA, "is_bot": False, "first_name": "Ana"},
            "text": f"\ud800 {mention} hi",
            "entities": [{"type": "mention", "offset": 2, "length": len(mention)}],
        }
    )


def test_an_update_failing_three_times_is_dropped_and_the_next_one_is_answered(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    port = _free_port()
    local = f"http://127.0.0.1:{port}{PATH}"
    omega = start(webhook_env(telegram, fake_openai, port) | OWNER)
    wait_listening(omega, port)
    telegram.wait_for(lambda: bool(telegram.webhook_url))

    poison = _poison(telegram)
    # Telegram tries again after each 500; the third failure is the last.
    assert [telegram.deliver(poison, to=local) for _ in range(3)] == [500, 500, 200]
    good = telegram.private(ANA, "after the poison")
    assert telegram.deliver(good, to=local) == 200
    telegram.wait_for(lambda: "echo: after the poison" in telegram.texts(ANA))
    # The owner is told (the alert kept for them goes out once they write).
    telegram.wait_for(lambda: any("was dropped" in text for text in telegram.texts(ANA)))

    code, err = omega.terminate()
    assert code == 0, err
    assert f"webhook update {poison} failed 3 times; dropped" in err
    with connect_db(isolated_env / "memory.db") as conn:
        dropped = conn.execute(
            "SELECT status, detail FROM audit_log WHERE event = 'telegram_update_dropped'"
        ).fetchall()
    assert len(dropped) == 1
    assert dropped[0][0] == "error" and f"update {poison} dropped after 3" in dropped[0][1]
