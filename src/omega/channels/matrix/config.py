"""[channel.matrix]: the homeserver Omega logs in to and the account it uses."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator

from omega.channels.plugin import PluginChannelConfig

# Matrix refuses events over 65,536 bytes. A piece of 4,000 UTF-16 units stays under it with
# its HTML copy even when every character is escaped in the JSON (\uXXXX, 6 bytes).
MAX_MESSAGE_UNITS = 4000


class MatrixConfig(PluginChannelConfig):
    """The Matrix channel's settings; `allowed_users` are Matrix ids such as @ana:example.org."""

    allowed_users: list[str] = Field(
        default_factory=list,
        description="The Matrix ids allowed to talk to Omega, e.g. @ana:example.org",
    )
    homeserver: str = Field(
        "",
        description="The homeserver's address, e.g. https://matrix.example.org",
    )
    user_id: str = Field(
        "",
        description="Omega's own Matrix account, e.g. @omega:example.org (make it a new account)",
    )
    password: SecretStr = Field(
        SecretStr(""),
        description="That account's password (or leave empty and give an access token)",
    )
    access_token: SecretStr = Field(
        SecretStr(""),
        description="An access token of that account, used instead of the password",
    )
    device_name: str = Field(
        "Omega", description="The name of the device Omega logs in as, shown in your sessions"
    )
    invites: Literal["auto", "anyone", "allowed"] = Field(
        "auto",
        description=(
            "Whose room invitations Omega accepts: anyone (strangers are then refused or "
            "offered pairing when they write), only allowed users and owners, or auto: "
            "allowed under dm_policy = allowlist, anyone under pairing or open"
        ),
    )
    sync_timeout_secs: Annotated[float, Field(gt=0, le=300)] = Field(
        30.0, description="How long one sync waits for new events on the server, in seconds"
    )

    @field_validator("allowed_users")
    @classmethod
    def _user_ids(cls, users: list[str]) -> list[str]:
        # A sender's id is @localpart:server; the server part is case-insensitive only by
        # convention, so ids are kept as written, without surrounding spaces.
        return [user.strip() for user in users]

    @field_validator("homeserver")
    @classmethod
    def _no_trailing_slash(cls, url: str) -> str:
        return url.strip().rstrip("/")

    def invites_from_anyone(self) -> bool:
        """Whether a stranger's invitation is accepted: `invites`, where "auto" follows the
        DM policy (a stranger must reach Omega to ask for pairing; under the allow-list
        nothing they write is read, so their rooms are not joined)."""
        if self.invites == "auto":
            return self.dm_policy != "allowlist"
        return self.invites == "anyone"
