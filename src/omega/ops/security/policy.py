"""Checks of what Omega may decide and spend on its own: the autonomy mode with manual approval
([evolution]) and the daily spending cap ([limits] daily_usd, 0 meaning none), including
whether the cap can see what each provider of the chain costs."""

from __future__ import annotations

from omega.config.providers import ApiProviderConfig
from omega.ops.security.model import AuditContext, Finding


def check_autonomy(ctx: AuditContext) -> list[Finding]:
    """Nothing Omega proposes loads without the owner unless the owner chose so."""
    evolution = ctx.config.evolution
    mode = evolution.autonomy_mode
    if mode == "autonomous" and not evolution.require_manual_approval:
        return [
            Finding(
                "autonomy",
                "high",
                "proposals load without you",
                '[evolution] autonomy_mode = "autonomous" with require_manual_approval = '
                f"false: the gate's rules alone approve low-risk proposals (max_risk_level = "
                f"{evolution.max_risk_level!r}), and they load pinned",
                'set [evolution] require_manual_approval = true, or autonomy_mode = "manual"',
            )
        ]
    approval = "on" if evolution.require_manual_approval else "off"
    return [
        Finding(
            "autonomy",
            "info",
            f"{mode} mode, manual approval {approval}",
            f"self_learn = {evolution.self_learn!r}, max_risk_level = {evolution.max_risk_level!r}",
        )
    ]


def check_spending(ctx: AuditContext) -> list[Finding]:
    """A daily cap bounds what all provider calls together may cost, and it sees each one's
    cost (see `unseen_costs`)."""
    cap = ctx.config.limits.daily_usd
    if cap <= 0:
        return [
            Finding(
                "spending-cap",
                "medium",
                "no daily spending cap",
                "[limits] daily_usd = 0: a loop, a stranger let in or a runaway task can spend "
                "without limit on a paid provider",
                "set [limits] daily_usd to what a day may cost you, e.g. 5",
            )
        ]
    return [
        Finding("spending-cap", "info", f"daily cap {cap:g} USD", "[limits] daily_usd"),
        *unseen_costs(ctx),
    ]


def unseen_costs(ctx: AuditContext) -> list[Finding]:
    """One finding per provider of the chain whose models are not in the price table (so the
    provider's cost is not known), and one for a voice transcriber whose model is not:
    costed at `[limits] unknown_model_usd_per_mtok` (info), or, with that rate at 0, invisible
    to the cap (medium; info for a server on this machine or network, which costs nothing per
    token). The bundled model and Ollama are free and Claude Code reports its own cost:
    nothing to say."""
    from omega.providers import chain_names, resolve_provider_name
    from omega.providers.prices import (
        FREE_PROVIDERS,
        SELF_REPORTING,
        is_listed,
        transcription_listed,
    )
    from omega.providers.transcription import transcriber_for

    rate = ctx.config.limits.unknown_model_usd_per_mtok
    found: list[Finding] = []
    for name in chain_names(resolve_provider_name(ctx.config, ctx.environ), ctx.config):
        section = getattr(ctx.config.provider, name, None)
        if name in FREE_PROVIDERS | SELF_REPORTING or not isinstance(section, ApiProviderConfig):
            continue
        models = dict.fromkeys(m for m in (section.model, section.model_complex) if m)
        unlisted = ", ".join(m for m in models if not is_listed(name, m, section.base_url))
        if unlisted:
            found.append(_unseen_cost(name, unlisted, section.base_url, rate))
    # A voice note's transcription is admitted and counted like a reply (omega.turn.voice).
    voice = transcriber_for(ctx.config)
    if voice is not None and not transcription_listed(voice.model, voice.base_url):
        found.append(_unseen_cost("voice", voice.model, voice.base_url, rate))
    return found


def _unseen_cost(name: str, unlisted: str, base_url: str, rate: float) -> Finding:
    """The finding for `name`'s models that no price table lists, by what the cap makes of
    them at `rate` USD per million tokens."""
    from omega.providers.prices import self_hosted

    if rate > 0:
        return Finding(
            "spending-cap",
            "info",
            f"{name}: unpriced models costed at {rate:g} USD per million tokens",
            f"{unlisted} not in the price table: each call counts its tokens at "
            "[limits] unknown_model_usd_per_mtok (0 counts them as free: a server of "
            "your own)",
            subject=name,
        )
    if self_hosted(base_url):
        return Finding(
            "spending-cap",
            "info",
            f"{name}: a server of your own, counted as free",
            f"{unlisted} at {base_url} is not in the price table and "
            "[limits] unknown_model_usd_per_mtok = 0",
            subject=name,
        )
    return Finding(
        "spending-cap",
        "medium",
        f"the daily cap cannot see what {name} costs",
        f"{unlisted} not in the price table and [limits] unknown_model_usd_per_mtok "
        "= 0: its calls count as free however much they are billed",
        "set [limits] unknown_model_usd_per_mtok to what a million tokens of this "
        "model cost, e.g. 15",
        subject=name,
    )
