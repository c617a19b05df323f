"""Checks of what Omega may decide and spend on its own: the autonomy mode with manual approval
([evolution]) and the daily spending cap ([limits] daily_usd, 0 meaning none)."""

from __future__ import annotations

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
    """A daily cap bounds what all provider calls together may cost."""
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
    return [Finding("spending-cap", "info", f"daily cap {cap:g} USD", "[limits] daily_usd")]
