"""How people reach Omega: [channel.*], [voice] (voice notes) and [web] (the local page)."""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, SecretStr, field_validator, model_validator

from omega.config.base import Section, phone_digits

# What a stranger who writes in a direct chat gets: "allowlist" (the deny message, at most once
# a day; the default, so an upgrade changes nobody's access and keeps nothing of strangers),
# "pairing" (a one-time code the owner approves, memory/pairing.py) or "open" (anyone; needs
# "*" in allowed_users, so it is never a typo). Group chats are never paired.
DmPolicy = Literal["pairing", "allowlist", "open"]


class DmPolicySection(Section):
    """A channel people write to: its allow-list and what a stranger gets."""

    # What a stranger writing in a direct chat gets: "allowlist" (the deny message, at most once
    # a day), "pairing" (a one-time code the owner approves) or "open" (needs "*" in
    # allowed_users).
    dm_policy: DmPolicy = "allowlist"

    @model_validator(mode="after")
    def _policy_matches_list(self) -> DmPolicySection:
        users = [str(user) for user in getattr(self, "allowed_users", [])]
        if self.dm_policy == "open" and "*" not in users:
            raise ValueError(
                'dm_policy = "open" admits anyone: say so with "*" in allowed_users '
                '(or use "pairing" or "allowlist")'
            )
        if self.dm_policy == "pairing" and "*" in users:
            raise ValueError(
                'dm_policy = "pairing" with "*" in allowed_users: nobody would ever need to '
                'pair; remove "*" (or use dm_policy = "open")'
            )
        return self


class TerminalConfig(DmPolicySection):
    enabled: bool = True  # `omega start --jsonl` reads stdin (`omega chat` always does)
    allowed_users: list[str] = Field(default_factory=lambda: ["*"])  # "*": anyone at this machine


class TelegramConfig(DmPolicySection):
    enabled: bool = False  # `omega start` runs the Telegram bot
    bot_token: SecretStr = SecretStr("")  # empty: TELEGRAM_BOT_TOKEN
    allowed_users: list[int | Literal["*"]] = Field(default_factory=list)  # empty: nobody
    # Every call goes to {api_url}/bot{token}/{method}, files to {api_url}/file/bot{token}/{path}:
    # a self-hosted Bot API server (or a test double) works.
    api_url: str = "https://api.telegram.org"
    # The original Omega's key for voice transcription: with no [voice] base_url, voice notes
    # are transcribed through OpenAI's whisper-1.
    whisper_api_key: SecretStr = SecretStr("")
    # Webhook mode (channels/telegram/webhook.py): the public HTTPS address Telegram POSTs each
    # update to (a reverse proxy or load balancer in front of every replica); empty: long
    # polling. Each replica listens on `webhook_listen` for the URL's path; requests must carry
    # `webhook_secret` (empty: one derived from the bot token, the same on every replica).
    webhook_url: str = ""
    # "host:port" where this replica takes the proxy's POSTs (plain HTTP: keep it on loopback or
    # a private network).
    webhook_listen: str = "127.0.0.1:8443"
    # The secret Telegram sends with every update: 1-256 characters of A-Z, a-z, 0-9, _ and -;
    # empty: derived from bot_token, the same on every replica.
    webhook_secret: SecretStr = SecretStr("")

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// (or be empty: long polling)")
        return value

    @field_validator("webhook_listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        host, sep, port = value.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError('must be "host:port", e.g. "127.0.0.1:8443"')
        return value.strip()

    @field_validator("webhook_secret")
    @classmethod
    def _secret(cls, value: SecretStr) -> SecretStr:
        secret = value.get_secret_value().strip()
        # Telegram's rule for secret_token: 1-256 characters A-Z, a-z, 0-9, _ and -.
        if secret and (len(secret) > 256 or not re.fullmatch(r"[A-Za-z0-9_-]+", secret)):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return SecretStr(secret)


class WhatsAppConfig(DmPolicySection):
    enabled: bool = False  # `omega start` runs the WhatsApp channel (the `whatsapp` extra)
    # Phone numbers in international form ("+351900000000"); "*": anyone; empty: nobody.
    allowed_users: list[str] = Field(default_factory=list)
    # personal: Omega is linked to the owner's own account and answers only the "message
    # yourself" chat; bot: Omega has a number of its own that people message.
    mode: Literal["personal", "bot"] = "personal"
    # The original Omega's key for voice transcription (OpenAI's whisper), as for Telegram;
    # [voice] wins when it is set.
    whisper_api_key: SecretStr = SecretStr("")

    @field_validator("allowed_users", mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        if isinstance(value, list):
            return [phone_digits(str(item)) for item in value]
        return value


class WebChannelConfig(DmPolicySection):
    allowed_users: list[str] = Field(default_factory=lambda: ["*"])  # local page: the owner


class ChannelSection(Section):
    """[channel.*]: the built-in channels' sections, typed here, and any other table, kept as
    it was written for the channel plug-in of that name to validate with its own model
    (omega.channels.registry binds it); an unknown key inside a built-in one is still an error."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    terminal: TerminalConfig = Field(default_factory=TerminalConfig)
    web: WebChannelConfig = Field(default_factory=WebChannelConfig)
    telegram: TelegramConfig = Field(default_factory=TelegramConfig)
    whatsapp: WhatsAppConfig = Field(default_factory=WhatsAppConfig)

    @model_validator(mode="after")
    def _plugin_sections_are_tables(self) -> ChannelSection:
        for name, value in (self.model_extra or {}).items():
            if not isinstance(value, dict | Section):
                raise ValueError(  # the value is not quoted: it may be a token
                    f"[channel.{name}] must be a table of the {name!r} channel's settings, "
                    f"not a {type(value).__name__}"
                )
        return self

    def plugin_sections(self) -> dict[str, object]:
        """The sections of channels that are not built in: a raw table until the plug-in of
        that name validated it, then its model."""
        return dict(self.model_extra or {})


class VoiceSection(Section):
    """Voice notes are transcribed by an OpenAI-compatible `/audio/transcriptions` endpoint
    (OpenAI, Groq, a local whisper server). Empty `base_url`: voice notes are not transcribed,
    unless the original's `whisper_api_key` of [channel.telegram] or [channel.whatsapp] is set
    (then OpenAI's)."""

    base_url: str = ""  # e.g. https://api.openai.com/v1, https://api.groq.com/openai/v1
    api_key: SecretStr = SecretStr("")  # the endpoint's key
    model: str = "whisper-1"  # Groq: whisper-large-v3
    timeout_secs: Annotated[float, Field(gt=0, le=600)] = 60.0  # for one transcription

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


class WebSection(Section):
    """The local web page (chat and the owner's dashboard), served by `omega start`."""

    enabled: bool = False  # serve the page from `omega start`
    # Where to listen; anything but a loopback address is refused unless allow_remote.
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8765  # 0: any free port (tests)
    # Binding to anything but a loopback address must be asked for explicitly: whoever holds
    # the login link is the owner.
    allow_remote: bool = False
    session_hours: Annotated[float, Field(gt=0)] = 24 * 7  # a session idle this long ends
    # The page's address behind your TLS proxy ("https://omega.example.org"): its login links
    # name it, a POST from it is the page's own, and the session cookie is `Secure`.
    public_url: str = ""

    @field_validator("public_url")
    @classmethod
    def _https_origin(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value:
            return value
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a port that is not one
        except ValueError:
            raise ValueError(
                'must be an https:// address, e.g. "https://omega.example.org"'
            ) from None
        if parts.scheme != "https" or not parts.hostname or parts.path or parts.query:
            raise ValueError(
                "must be the page's https:// address and nothing after it, e.g. "
                '"https://omega.example.org"'
            )
        return value
