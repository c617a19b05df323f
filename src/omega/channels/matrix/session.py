"""Logging in to the homeserver with matrix-nio: a configured access token, else the device a
earlier password login made (kept in the state file), else a password login that makes one.

Reusing the device matters beyond tidiness: the homeserver recognises a re-sent message by
its transaction id per device, so a reply sent again after a crash is not shown twice."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import SecretStr

from omega.channels.matrix.config import MatrixConfig
from omega.channels.matrix.state import SyncState
from omega.errors import OmegaError
from omega.logs import register_secret

if TYPE_CHECKING:
    from nio import AsyncClient

log = logging.getLogger(__name__)


class LoginRefusedError(OmegaError):
    """The homeserver refused the credentials: retrying cannot help."""


class HomeserverError(OmegaError):
    """The homeserver could not be reached or answered with an error: worth retrying."""


def new_client(config: MatrixConfig, state: SyncState) -> AsyncClient:
    """A nio client for the configured account, without end-to-end encryption (no libolm)."""
    from nio import AsyncClient, AsyncClientConfig

    client_config = AsyncClientConfig(
        encryption_enabled=False,
        store_sync_tokens=False,
        request_timeout=60,
        max_timeouts=2,  # then the error reaches the channel, which reports it and retries
    )
    device = state.device_id if state.user_id == config.user_id else ""
    return AsyncClient(
        config.homeserver, config.user_id, device_id=device or None, config=client_config
    )


async def log_in(client: AsyncClient, config: MatrixConfig, state: SyncState) -> None:
    """Make `client` logged in; raises LoginRefusedError or HomeserverError."""
    try:
        await _log_in(client, config, state)
    finally:
        for secret in (client.access_token, state.access_token, config.password):
            value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
            if value:
                register_secret(value)  # never in a log line, whatever logs it


async def _log_in(client: AsyncClient, config: MatrixConfig, state: SyncState) -> None:
    token = config.access_token.get_secret_value().strip()
    if token:
        await _adopt(client, token)
        return
    if state.access_token and state.user_id == config.user_id:
        try:
            await _adopt(client, state.access_token)
            return
        except LoginRefusedError:
            log.info("matrix: the saved device's token was refused; logging in again")
    await _password_login(client, config, state)


async def _adopt(client: AsyncClient, token: str) -> None:
    """Use an access token: whoami says whose it is and which device."""
    from nio import WhoamiError

    client.access_token = token
    answer = await client.whoami()
    if isinstance(answer, WhoamiError):
        client.access_token = ""
        if answer.status_code in ("M_UNKNOWN_TOKEN", "M_MISSING_TOKEN", "M_FORBIDDEN"):
            raise LoginRefusedError(f"the access token was refused ({answer.status_code})")
        raise HomeserverError(f"whoami failed: {answer.message}")
    if client.user and answer.user_id != client.user:
        client.access_token = ""
        raise LoginRefusedError(
            f"the access token belongs to {answer.user_id}, not to user_id {client.user}"
        )
    client.user_id = answer.user_id
    if answer.device_id:
        client.device_id = answer.device_id


async def _password_login(client: AsyncClient, config: MatrixConfig, state: SyncState) -> None:
    from nio import LoginError

    password = config.password.get_secret_value()
    if not password:
        raise LoginRefusedError("no password and no working access token")
    answer = await client.login(password=password, device_name=config.device_name)
    if isinstance(answer, LoginError):
        if answer.status_code in ("M_FORBIDDEN", "M_USER_DEACTIVATED", "M_INVALID_USERNAME"):
            raise LoginRefusedError(f"the homeserver refused the login ({answer.status_code})")
        raise HomeserverError(f"login failed: {answer.message}")
    state.user_id = answer.user_id
    state.device_id = answer.device_id
    state.access_token = answer.access_token
    state.save()
