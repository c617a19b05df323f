"""[channel.email]: the mailbox Omega reads (IMAP) and the server it sends through (SMTP)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator

from omega.channels.email.identity import addresses_in
from omega.channels.plugin import PluginChannelConfig

# How a connection is secured: "ssl" (TLS from the first byte, ports 993/465), "starttls"
# (plain, then upgraded: ports 143/587), "plain" (no TLS: for a server on loopback only).
Security = Literal["ssl", "starttls", "plain"]


class EmailConfig(PluginChannelConfig):
    """The e-mail channel's settings; `allowed_users` are e-mail addresses."""

    # The descriptions are `omega init`'s questions (omega.channels.setup).

    imap_host: str = Field("", description="IMAP server Omega reads mail from (imap.example.org)")
    imap_security: Security = Field(
        "ssl", description="IMAP security (ssl: port 993; starttls: 143; plain: loopback only)"
    )
    imap_port: Annotated[int, Field(ge=0, le=65535)] = Field(
        0, description="IMAP port (0: the usual one for its security)"
    )  # 0: 993 for ssl, else 143
    imap_user: str = Field("", description="The mailbox's user name (usually its address)")
    imap_password: SecretStr = Field(
        SecretStr(""), description="The mailbox's password (an app password where there are)"
    )
    folder: str = "INBOX"  # the folder new mail is read from
    # Seconds between checks when the server has no IDLE (and the longest an IDLE waits).
    poll_secs: Annotated[float, Field(gt=0, le=3600)] = 60.0
    idle: bool = True  # use IMAP IDLE where the server offers it

    smtp_host: str = Field("", description="SMTP server Omega sends mail through")
    smtp_security: Security = Field(
        "starttls", description="SMTP security (ssl: port 465; starttls: 587; plain: 25)"
    )
    smtp_port: Annotated[int, Field(ge=0, le=65535)] = Field(
        0, description="SMTP port (0: the usual one for its security)"
    )  # 0: 465 for ssl, 587 starttls, 25
    # "" with a password: imap_user's name is used
    smtp_user: str = Field("", description="SMTP user name (Enter: the IMAP one)")
    smtp_password: SecretStr = Field(
        SecretStr(""), description="SMTP password (Enter: send without logging in)"
    )
    from_address: str = Field(
        "", description="Address Omega's mail comes from (Enter: the IMAP user)"
    )
    # Other addresses whose mail lands in this mailbox (omega+home@example.org, an old
    # address forwarded here). A proven mail counts for Omega only when its To or Cc names
    # one of Omega's addresses: from_address, imap_user (when it is an address) and these
    # (docs/channels/email.md: who is speaking).
    aliases: list[str] = Field(default_factory=list, json_schema_extra={"init": False})
    # Who vouches for a sender: the authserv-id of the receiving mail server, the first word of
    # the Authentication-Results field it writes at the top of every mail (Gmail:
    # mx.google.com). Only the topmost Authentication-Results field, and only with this id, is
    # read; a sender is proven by its DMARC pass, or a DKIM pass aligned with the From domain.
    # Microsoft 365 and Outlook.com write the field without an id (against RFC 8601): their
    # mail cannot be proven. "" (the default): nobody's mail is proven, owners are refused and
    # allowed people talk without tools (docs/channels/email.md: who is speaking).
    authserv_id: str = Field(
        "",
        description=(
            "Your mail provider's authserv-id: the first word of the Authentication-Results "
            "header at the top of a mail you received (mx.google.com for Gmail; Enter: none, "
            "and owners cannot use e-mail)"
        ),
    )
    subject: str = "A message from Omega"  # the subject of mail that answers no mail
    timeout_secs: Annotated[float, Field(gt=0, le=600)] = 30.0  # of the IMAP and SMTP connections
    # A stranger's mail is not answered with a refusal: most are spam with forged senders,
    # and answering them is backscatter. Pairing (dm_policy = "pairing") still mails a code.
    tell_strangers: bool = False

    @field_validator("allowed_users")
    @classmethod
    def _addresses_lower_case(cls, users: list[str]) -> list[str]:
        # The channel id is the sender's address lower-cased: the list must match it.
        return [user.strip().lower() for user in users]

    @field_validator("aliases")
    @classmethod
    def _aliases_lower_case(cls, aliases: list[str]) -> list[str]:
        return [alias.strip().lower() for alias in aliases if alias.strip()]

    @field_validator("authserv_id")
    @classmethod
    def _authserv_lower_case(cls, value: str) -> str:
        return value.strip().lower()

    def imap_port_or_default(self) -> int:
        """The IMAP port, the usual one for its security when 0."""
        return self.imap_port or (993 if self.imap_security == "ssl" else 143)

    def smtp_port_or_default(self) -> int:
        """The SMTP port, the usual one for its security when 0."""
        if self.smtp_port:
            return self.smtp_port
        return {"ssl": 465, "starttls": 587, "plain": 25}[self.smtp_security]

    def sender(self) -> str:
        """The address Omega's mail comes from."""
        return self.from_address or self.imap_user

    def own_addresses(self) -> frozenset[str]:
        """Every address of Omega's, folded as a mail's To and Cc are: from_address, imap_user
        when it is an address, and `aliases`."""
        found: set[str] = set()
        for value in (self.from_address, self.imap_user, *self.aliases):
            found.update(addresses_in(value))
        return frozenset(found)
