"""Self-evolution: [evolution] (spec 004's autonomy and budgets) and [logging]."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from omega.config.base import Section


class EvolutionSection(Section):
    # Spec 004: manual | assisted | sandboxed | autonomous. `sandboxed` (auto-test proposals in
    # a sandbox) is refused until it exists, rather than silently meaning something else.
    autonomy_mode: Literal["manual", "assisted", "sandboxed", "autonomous"] = "manual"
    # A proposal judged riskier than this gets a warning in its gate record, so it waits for the
    # owner.
    max_risk_level: Literal["low", "medium", "high"] = "medium"
    # Categories no proposal may have, judged from its content in every mode: one signal saying
    # a proposal is in one rejects it.
    forbidden_categories: list[str] = Field(
        default_factory=lambda: [
            "system_destruction",
            "network_exploit",
            "credential_access",
            "data_exfiltration",
            "financial_transactions",
            "third_party_messaging",
            "self_modification",
        ]
    )
    # Spec 004: while true, nothing is approved without the owner, whatever the mode.
    require_manual_approval: bool = True
    # Spec 004: write a scaffold for every approved tool (assisted mode always does).
    auto_generate_scaffolds: bool = False
    # Introspection reviews a provider's tool calls after every this many recorded ones.
    introspect_interval: Annotated[int, Field(ge=1)] = 10
    # off: no introspection; passive: learnings are kept for the person; active: a repeated
    # pattern also becomes a skill proposal, judged by the gate like any other.
    self_learn: Literal["off", "passive", "active"] = "passive"
    # The spend cap of one introspection or analysis cycle, in USD.
    budget_usd: Annotated[float, Field(ge=0)] = 0.08
    # The same cap in tokens, when the provider reports no cost.
    budget_tokens: Annotated[int, Field(ge=100)] = 20000
    # An invalid answer of the model is asked again at most this many times per cycle.
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3

    @field_validator("autonomy_mode")
    @classmethod
    def _no_sandboxed_yet(cls, value: str) -> str:
        if value == "sandboxed":
            raise ValueError(
                "'sandboxed' (testing proposals automatically in a sandbox, spec 004) is not "
                "available yet; use 'manual', 'assisted' or 'autonomous'"
            )
        return value


class LoggingSection(Section):
    """Spec 004's [logging]: which self-evolution steps are written to omega.log (the audit
    log records every one of them regardless)."""

    log_proposals: bool = True  # proposals filed
    log_validations: bool = True  # the gate's verdicts
    log_registrations: bool = True  # approvals and registrations
