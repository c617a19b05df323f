"""Telegram's webhook mode through the real `omega start` (issue 38): Telegram POSTs updates to
every replica behind a load balancer, the secret token is checked, a re-delivered update is
answered once, and switching back to polling deletes the webhook."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.integration.test_telegram import ANA, Omega, start, telegram, telegram_env

__all__ = ["start", "telegram"]  # the fixtures this module uses
PUBLIC_URL = "https://bot.example.org/omega/telegram"  # what the load balancer serves
PATH = "/omega/telegram"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def webhook_env(telegram: FakeTelegram, provider: FakeOpenAI, port: int) -> dict[str, str]:
    return telegram_env(
        telegram,
        provider,
        OMEGA_CHANNEL__TELEGRAM__WEBHOOK_URL=PUBLIC_URL,
        OMEGA_CHANNEL__TELEGRAM__WEBHOOK_LISTEN=f"127.0.0.1:{port}",
    )


def wait_listening(omega: Omega, port: int, timeout: float = 30.0) -> None:
    """Until the replica's webhook listener takes connections."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert omega.proc.poll() is None, "".join(omega.stderr)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("".join(omega.stderr))


def _request(url: str, method: str) -> int:
    request = urllib.request.Request(url, data=b"{}" if method == "POST" else None, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _asked(provider: FakeOpenAI, text: str) -> int:
    """The answering calls for `text` (background calls quote it after "User:")."""
    return sum(
        text in r.last_user_text and f"User: {text}" not in r.last_user_text
        for r in provider.requests
    )


def _leases(home: Path) -> set[str]:
    with connect_db(home / "memory.db") as conn:
        return {row[0] for row in conn.execute("SELECT name FROM leases").fetchall()}


def test_webhook_mode_answers_posted_updates_once_and_refuses_a_wrong_secret(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    port = _free_port()
    local = f"http://127.0.0.1:{port}{PATH}"
    omega = start(webhook_env(telegram, fake_openai, port))
    wait_listening(omega, port)
    telegram.wait_for(lambda: telegram.webhook_url == PUBLIC_URL)
    # setWebhook: the public URL, a secret token, message updates only; never polled.
    (registered,) = telegram.calls_of("setWebhook")
    assert registered.params["url"] == PUBLIC_URL
    secret = str(registered.params["secret_token"])
    assert len(secret) >= 32 and telegram.webhook_secret == secret
    allowed = registered.params["allowed_updates"]
    assert (json.loads(allowed) if isinstance(allowed, str) else allowed) == ["message"]
    assert telegram.calls_of("getUpdates") == []

    first = telegram.private(ANA, "hello through the hook")
    assert telegram.deliver(first, to=local) == 200
    telegram.wait_for(lambda: "echo: hello through the hook" in telegram.texts(ANA))
    # Telegram delivers it again (its 200 got lost): recognised by the inbox, not answered.
    assert telegram.deliver(first, to=local) == 200

    # Without the secret, or with a wrong one: refused, never handled.
    forged = telegram.private(ANA, "forged update")
    assert telegram.deliver(forged, to=local, secret="") == 401
    assert telegram.deliver(forged, to=local, secret="not-the-secret") == 403
    assert telegram.deliver(forged, to=local, secret=secret[:-1]) == 403
    # Only POST on the webhook's path exists.
    assert _request(local, "GET") == 405
    assert _request(f"http://127.0.0.1:{port}/", "POST") == 404
    assert _request(f"http://127.0.0.1:{port}/chat", "GET") == 404

    last = telegram.private(ANA, "after the forgery")
    assert telegram.deliver(last, to=local) == 200
    telegram.wait_for(lambda: "echo: after the forgery" in telegram.texts(ANA))
    time.sleep(0.5)
    code, err = omega.terminate()
    assert code == 0, err
    assert "Traceback" not in err
    assert telegram.texts(ANA).count("echo: hello through the hook") == 1
    assert _asked(fake_openai, "hello through the hook") == 1
    assert not any("forged update" in r.last_user_text for r in fake_openai.requests)
    assert not any("forged" in text for text in telegram.texts())
    assert "webhook request refused (missing secret token)" in err
    assert secret not in err and secret not in (isolated_env / "omega.log").read_text()
    with connect_db(isolated_env / "memory.db") as conn:
        refused = conn.execute(
            "SELECT status, detail FROM audit_log WHERE event = 'telegram_webhook_refused'"
        ).fetchall()
        inbox = conn.execute("SELECT id FROM inbox ORDER BY id").fetchall()
    assert refused and refused[0][0] == "denied" and "secret token" in refused[0][1]
    assert len(inbox) == 2  # the forged update never reached the inbox
    # A stop keeps the webhook: other replicas still serve it.
    assert telegram.calls_of("deleteWebhook") == []
    assert telegram.webhook_url == PUBLIC_URL


def test_two_replicas_each_take_what_the_balancer_hands_them_and_answer_once(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    ports = _free_port(), _free_port()
    replicas = [start(webhook_env(telegram, fake_openai, port)) for port in ports]
    for omega, port in zip(replicas, ports, strict=True):
        wait_listening(omega, port)
    telegram.wait_for(lambda: len(telegram.calls_of("setWebhook")) == 2)
    assert {c.params["secret_token"] for c in telegram.calls_of("setWebhook")} == {
        telegram.webhook_secret
    }  # the same secret on every replica, with nothing configured but the bot token
    urls = [f"http://127.0.0.1:{port}{PATH}" for port in ports]

    # The balancer hands one update to each replica: each receives and answers it.
    one = telegram.private(ANA, "to the first replica")
    two = telegram.private(ANA, "to the second replica")
    assert telegram.deliver(one, to=urls[0]) == 200
    assert telegram.deliver(two, to=urls[1]) == 200
    # Telegram re-delivers both, and the balancer sends each to the other replica.
    assert telegram.deliver(one, to=urls[1]) == 200
    assert telegram.deliver(two, to=urls[0]) == 200
    telegram.wait_for(
        lambda: (
            {"echo: to the first replica", "echo: to the second replica"}
            <= set(telegram.texts(ANA))
        )
    )
    time.sleep(1.0)
    for omega in replicas:
        code, err = omega.terminate()
        assert code == 0, err
    assert telegram.texts(ANA).count("echo: to the first replica") == 1
    assert telegram.texts(ANA).count("echo: to the second replica") == 1
    assert _asked(fake_openai, "to the first replica") == 1
    assert _asked(fake_openai, "to the second replica") == 1
    assert telegram.calls_of("getUpdates") == []
    assert "channel:telegram" not in _leases(isolated_env)  # every replica receives


def test_switching_back_to_polling_deletes_the_webhook(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    port = _free_port()
    hooked = start(webhook_env(telegram, fake_openai, port))
    telegram.wait_for(lambda: telegram.webhook_url == PUBLIC_URL)
    assert hooked.terminate()[0] == 0
    waiting = telegram.private(ANA, "sent while nobody served the webhook")

    polling = start(telegram_env(telegram, fake_openai))
    telegram.wait_for(lambda: telegram.calls_of("getUpdates"))
    (deleted,) = telegram.calls_of("deleteWebhook")
    assert telegram.webhook_url == ""
    # Pending updates are kept: what Telegram held for the webhook comes through polling.
    assert str(deleted.params.get("drop_pending_updates", "false")).lower() == "false"
    assert telegram.calls.index(deleted) < telegram.calls.index(telegram.calls_of("getUpdates")[0])
    telegram.wait_for(lambda: "echo: sent while nobody served the webhook" in telegram.texts(ANA))
    assert waiting
    telegram.private(ANA, "polled")
    telegram.wait_for(lambda: "echo: polled" in telegram.texts(ANA))
    assert polling.terminate()[0] == 0
