"""`omega people pending|approve|deny|allow|revoke|allowed`: who may talk to Omega, changed
while it runs (memory.db; the config's allow-lists stay the seed and the override); and
`omega people quiet`: a person's quiet hours."""

from __future__ import annotations

from typing import Annotated

import typer

from omega.cli.support import fail as _fail
from omega.cli.support import load_runtime as _runtime
from omega.cli.support import open_store as _open_store


def _address(value: str) -> tuple[str, str]:
    """`channel:id` of a channel Omega has, the id as that channel writes it."""
    from omega.config.base import phone_digits

    channel, _, ident = (part.strip() for part in value.partition(":"))
    if not channel or not ident:
        _fail(f"{value!r}: give an address as channel:id, e.g. telegram:123456789")
    known = ("terminal", "web", "telegram", "whatsapp")
    if channel not in known:
        _fail(f"{channel!r} is not a channel; one of {', '.join(known)}")
    if ident == "*" or len(ident) > 200:
        _fail(f"{ident!r} is not an id (a wildcard belongs in config.toml, with dm_policy)")
    if channel == "telegram" and not ident.lstrip("-").isdecimal():
        _fail(f"{ident!r}: a Telegram id is a number")
    return channel, phone_digits(ident) if channel == "whatsapp" else ident


def register(people_app: typer.Typer) -> None:
    """Add the access commands to `omega people`."""
    people_app.command("pending")(people_pending)
    people_app.command("approve")(people_approve)
    people_app.command("deny")(people_deny)
    people_app.command("allow")(people_allow)
    people_app.command("revoke")(people_revoke)
    people_app.command("allowed")(people_allowed)
    people_app.command("quiet")(people_quiet)


def people_pending() -> None:
    """Strangers waiting for your approval: channel, id, name, first words, expiry."""
    from omega.gateway import strangers

    store = _open_store(_runtime())
    try:
        lines = strangers.pending_lines(store.pairing_pending(strangers.utc_clock()))
    finally:
        store.close()
    typer.echo("\n".join(lines) if lines else "Nobody is waiting to be approved.")


def _enter(code: str, approve: bool) -> None:
    from omega.gateway.strangers import enter_code

    store = _open_store(_runtime())
    try:
        done, text = enter_code(store, code, approve, "cli")
    finally:
        store.close()
    if not done:
        _fail(text, code=1)
    typer.echo(text)


def people_approve(
    code: Annotated[str, typer.Argument(help="The code the person was given.")],
) -> None:
    """Let in the stranger who was given CODE (role person, no restart); they are told."""
    _enter(code, True)


def people_deny(
    code: Annotated[str, typer.Argument(help="The code the person was given.")],
) -> None:
    """Turn away the stranger who was given CODE (they get no new code for a day)."""
    _enter(code, False)


def people_allow(
    address: Annotated[str, typer.Argument(help="Who, as channel:id.")],
    owner: Annotated[bool, typer.Option("--owner", help="With the owner's rights.")] = False,
) -> None:
    """Let CHANNEL:ID talk to Omega from its next message on (audited)."""
    channel, ident = _address(address)
    store = _open_store(_runtime())
    try:
        changed = store.grant_access(channel, ident, "owner" if owner else "person", "cli")
    finally:
        store.close()
    role = "owner" if owner else "person"
    typer.echo(f"{channel}:{ident} is allowed as {role}." if changed else "Already so.")


def people_revoke(
    address: Annotated[str, typer.Argument(help="Who, as channel:id.")],
) -> None:
    """Take back what `allow` or pairing gave CHANNEL:ID: denied from its next message on,
    its pending tasks cancelled (audited). An id config.toml lists stays allowed there."""
    from omega.turn import allowed_users

    channel, ident = _address(address)
    runtime = _runtime()
    listed = allowed_users(runtime.config, channel) or []
    if ident in listed or f"{channel}:{ident}" in runtime.config.auth.owners:
        _fail(
            f"{channel}:{ident} is allowed by config.toml (the override): remove it from "
            f"[channel.{channel}] allowed_users or [auth] owners there",
            code=1,
        )
    store = _open_store(runtime)
    try:
        had, cancelled = store.revoke_access(channel, ident, "cli")
    finally:
        store.close()
    typer.echo(
        f"{channel}:{ident} revoked ({'a grant removed' if had else 'it had no grant'}; "
        f"{cancelled} pending task(s) cancelled)."
    )
    if "*" in listed:
        typer.echo(f'Note: [channel.{channel}] allowed_users has "*": anyone still gets in.')


def people_allowed() -> None:
    """Everyone allowed, per channel: from config.toml and from memory.db."""
    from omega.text import literal
    from omega.turn import dm_policies

    runtime = _runtime()
    store = _open_store(runtime)
    try:
        policies = dm_policies(runtime.config, store)
    finally:
        store.close()
    for policy in policies:
        config_ids = ", ".join(policy.config_allowed) or "-"
        # Ids let in at run time came from outside (pairing): quoted as data.
        granted = ", ".join(literal(ident) for ident in policy.granted) or "-"
        owners = ", ".join(policy.owners) or "-"
        typer.echo(
            f"{policy.channel}: dm_policy {policy.dm_policy}; config: {config_ids}; "
            f"granted: {granted}; owners: {owners}"
        )


def people_quiet(
    person: Annotated[str, typer.Argument(help="The person (`omega people list`) or channel:id.")],
    hours: Annotated[
        str, typer.Argument(help="HH:MM-HH:MM (22:00-07:30), or off; none: show them.")
    ] = "",
) -> None:
    """Show, set or end PERSON's quiet hours (in their time zone): meanwhile only urgent alerts
    and the reminders they set for that time reach them; the rest waits for one digest when the
    quiet hours end. A running Omega takes them at once."""
    from omega.gateway.notify import quiet_setting
    from omega.hours import QuietHours

    if hours.strip() and hours.strip().lower() not in ("off", "none", "no"):
        try:
            QuietHours.parse(hours)
        except ValueError as exc:
            _fail(str(exc))
    runtime = _runtime()
    store = _open_store(runtime)
    try:
        channel, _, ident = person.partition(":")
        known = {key for _, _, key in store.identities()}
        key = person if person in known else store.known_person(channel, ident)
        if key is None:
            _fail(f"{person!r} is not a person Omega knows (see `omega people list`)", code=1)
        text = quiet_setting(store, key, hours, runtime.config.omega.timezone)
    finally:
        store.close()
    typer.echo(f"{key}: {text}")
