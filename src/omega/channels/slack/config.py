"""[channel.slack]: the Slack app Omega runs as (its bot token and its Socket Mode app token)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, SecretStr

from omega.channels.plugin import PluginChannelConfig

DEFAULT_API_URL = "https://slack.com/api/"


class SlackConfig(PluginChannelConfig):
    """The Slack channel's settings; `allowed_users` are Slack member ids (U0123ABCD)."""

    allowed_users: list[str] = Field(
        default_factory=list,
        description=(
            "Slack member ids allowed to talk to Omega (in Slack: a profile, the ⋮ menu, "
            "'Copy member ID'), such as U0123ABCD"
        ),
    )
    bot_token: SecretStr = Field(
        default=SecretStr(""),
        description=(
            "The app's Bot User OAuth Token (xoxb-...), from 'OAuth & Permissions' in the "
            "app's settings at api.slack.com/apps; SLACK_BOT_TOKEN when empty"
        ),
    )
    app_token: SecretStr = Field(
        default=SecretStr(""),
        description=(
            "An app-level token with the connections:write scope (xapp-...), from 'Basic "
            "Information' > 'App-Level Tokens'; Socket Mode needs it; SLACK_APP_TOKEN when empty"
        ),
    )
    api_url: str = Field(
        default=DEFAULT_API_URL,
        description="The Slack Web API's address (change it only to test against a double)",
    )
    follow_threads: bool = Field(
        default=True,
        description=(
            "Once it answered a mention in a channel, answer later messages of that thread "
            "without a new mention"
        ),
    )
    max_file_bytes: Annotated[int, Field(ge=0, le=1_000_000_000)] = Field(
        default=20 * 1024 * 1024,
        description="Files sent to Omega larger than this many bytes are not downloaded",
    )

    def bot_token_value(self, env: dict[str, str]) -> str:
        """The bot token: the setting, else $SLACK_BOT_TOKEN."""
        return self.bot_token.get_secret_value().strip() or env.get("SLACK_BOT_TOKEN", "").strip()

    def app_token_value(self, env: dict[str, str]) -> str:
        """The app-level token: the setting, else $SLACK_APP_TOKEN."""
        return self.app_token.get_secret_value().strip() or env.get("SLACK_APP_TOKEN", "").strip()
