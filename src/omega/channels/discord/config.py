"""[channel.discord]: the bot token and who may talk to Omega on Discord."""

from __future__ import annotations

import os

from pydantic import Field, SecretStr, field_validator

from omega.channels.plugin import PluginChannelConfig

API_URL = "https://discord.com/api/v10"


class DiscordConfig(PluginChannelConfig):
    """The Discord channel's settings; `allowed_users` are Discord user ids (numbers)."""

    bot_token: SecretStr = Field(
        default=SecretStr(""),
        description=(
            "The bot's token: discord.com/developers/applications, your application, Bot, "
            "Reset Token (empty: the DISCORD_BOT_TOKEN environment variable)"
        ),
    )
    allowed_users: list[str] = Field(
        default_factory=list,
        description=(
            "Discord user ids allowed to talk to Omega (Settings, Advanced, Developer Mode on; "
            'then right-click a name, Copy User ID); "*" for anyone'
        ),
    )
    guilds: bool = Field(
        default=True,
        description=(
            "Answer in servers (guild channels) where Omega is @mentioned; needs the Message "
            "Content intent switched on in the Bot page. False: direct messages only"
        ),
    )
    message_content_intent: bool = Field(
        default=False,
        description=(
            "Ask for the privileged Message Content intent (switch it on in the Bot page "
            "first); not needed for DMs and @mentions, which Discord always sends in full"
        ),
    )
    api_url: str = Field(
        default=API_URL,
        description="Discord's REST API; change only for a proxy or a test double",
    )
    max_download_mb: float = Field(
        default=25.0, gt=0, le=500, description="The largest attachment Omega downloads, in MB"
    )

    @field_validator("allowed_users", mode="before")
    @classmethod
    def _ids_as_text(cls, users: object) -> object:
        # Ids may be written as numbers in TOML; the channel compares them as text.
        if isinstance(users, list):
            return [str(user).strip() for user in users]
        return users

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    def token(self) -> str:
        """The bot token from the section, else from DISCORD_BOT_TOKEN."""
        return (
            self.bot_token.get_secret_value().strip()
            or os.environ.get("DISCORD_BOT_TOKEN", "").strip()
        )
