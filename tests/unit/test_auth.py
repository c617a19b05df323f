"""Per-channel allow-lists: '*' admits anyone, empty admits nobody, unknown channels too."""

from __future__ import annotations

from omega.config import Config
from omega.turn import check_auth
from omega.types import IncomingMessage


def msg(channel: str, sender: str) -> IncomingMessage:
    return IncomingMessage(channel=channel, sender_id=sender, text="hi")


def test_terminal_admits_the_local_user_by_default() -> None:
    assert check_auth(Config(), msg("terminal", "anyone")) is None


def test_each_channel_uses_its_own_list() -> None:
    config = Config.model_validate(
        {
            "channel": {
                "telegram": {"allowed_users": [42]},
                "terminal": {"allowed_users": ["ana"]},
                "whatsapp": {"allowed_users": ["*"]},
            }
        }
    )
    assert check_auth(config, msg("telegram", "42")) is None
    assert "not in allowed_users" in (check_auth(config, msg("telegram", "43")) or "")
    assert check_auth(config, msg("terminal", "ana")) is None
    assert check_auth(config, msg("terminal", "bob"))
    assert check_auth(config, msg("whatsapp", "+351900000000")) is None


def test_empty_list_admits_nobody_and_unknown_channel_is_denied() -> None:
    assert "empty" in (check_auth(Config(), msg("telegram", "42")) or "")
    assert "no allow-list" in (check_auth(Config(), msg("carrier-pigeon", "x")) or "")


def test_auth_disabled_admits_everyone() -> None:
    config = Config.model_validate({"auth": {"enabled": False}})
    assert check_auth(config, msg("telegram", "7")) is None
