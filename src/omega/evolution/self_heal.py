"""Self-healing (spec 000): the gateway, not the model, runs the lifecycle.

`SELF_HEAL: description | verification` starts or continues a healing session kept in
self-healing.json. The iteration counter lives in that file and is enforced here: up to 10
iterations, each notified to the owner and followed by a verification action task 2 minutes
later; past the cap, an escalation alert and no more tasks (the state is kept for the owner).
`SELF_HEAL_RESOLVED` deletes the state and tells the owner.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.markers.context import MarkerContext, audit_change, owner_message
from omega.schedule import timezone_name

log = logging.getLogger(__name__)
MAX_ITERATIONS = 10
VERIFY_AFTER = timedelta(minutes=2)


@dataclass
class SelfHealingState:
    """What self-healing.json holds."""

    anomaly: str
    verification: str
    iteration: int = 0
    max_iterations: int = MAX_ITERATIONS
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    attempts: list[str] = field(default_factory=list)


def read_state(path: Path) -> SelfHealingState | None:
    """The current state, or None (missing or unreadable file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return SelfHealingState(
            anomaly=str(data["anomaly"]),
            verification=str(data.get("verification", "")),
            iteration=int(data.get("iteration", 0)),
            max_iterations=MAX_ITERATIONS,  # the cap is code's, whatever the file says
            started_at=str(data.get("started_at", "")),
            attempts=[str(a) for a in data.get("attempts", [])],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _text(state: SelfHealingState | None) -> str:
    return json.dumps(asdict(state), indent=2) + "\n" if state else ""


def write_state(path: Path, state: SelfHealingState) -> None:
    """Write the state atomically, owner-only."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".self-healing-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_text(state))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def follow_up(anomaly: str, verification: str) -> str:
    """The verification task: check the fix, then resolve or keep healing."""
    return (
        f"Self-healing verification for: {anomaly}. Read self-healing.json in your data "
        f"directory for the history. Run this verification: {verification}. If it passes, "
        "reply with SELF_HEAL_RESOLVED on its own line. If it fails, diagnose and fix, then "
        "emit SELF_HEAL: <what you changed> | <the verification to run next>."
    )


def _diff(before: SelfHealingState | None, after: SelfHealingState | None) -> str:
    return "".join(
        difflib.unified_diff(
            _text(before).splitlines(keepends=True),
            _text(after).splitlines(keepends=True),
            fromfile="a/self-healing.json",
            tofile="b/self-healing.json",
        )
    )


async def self_heal(ctx: MarkerContext, description: str, verification: str) -> str:
    """One SELF_HEAL marker: count the iteration, notify, schedule or escalate."""
    path = ctx.paths.self_healing
    before = read_state(path)
    state = before or SelfHealingState(anomaly=description, verification=verification)
    state = SelfHealingState(**asdict(state))  # a copy: `before` stays as it was, for the diff
    state.iteration += 1
    state.verification = verification
    state.attempts.append(f"{state.iteration}: {description}")
    write_state(path, state)
    await audit_change(ctx, "self_heal", f"{description} | {verification}", _diff(before, state))
    if state.iteration > MAX_ITERATIONS:
        await ctx.notify(
            owner_message(
                ctx,
                f"🚨 SELF-HEALING ESCALATION: {state.anomaly} is still not fixed after "
                f"{MAX_ITERATIONS} iterations. I stopped trying; the history is in {path}.",
                kind="alert",
            )
        )
        log.error("self-healing escalated after %d iterations: %s", MAX_ITERATIONS, state.anomaly)
        return "escalated"
    await ctx.notify(
        owner_message(
            ctx,
            f"🔧 SELF-HEALING ({state.iteration}/{MAX_ITERATIONS}): {state.anomaly}\n"
            f"Tried: {description}",
            kind="alert",
        )
    )
    target = owner_message(ctx, "")
    await ctx.store.call(
        ctx.store.create_task,
        channel=target.channel,
        sender_id=target.target,
        reply_target=target.target,
        description=follow_up(state.anomaly, verification),
        due_at=datetime.now(UTC) + VERIFY_AFTER,
        task_type="action",
        timezone=timezone_name(ctx.timezone),
    )
    ctx.state.tasks_changed.set()
    return f"iteration {state.iteration}"


async def self_heal_resolved(ctx: MarkerContext) -> str:
    """SELF_HEAL_RESOLVED: delete the state and tell the owner."""
    path = ctx.paths.self_healing
    before = read_state(path)
    if before is None and not path.exists():
        return "no healing in progress"
    path.unlink(missing_ok=True)
    await audit_change(ctx, "self_heal_resolved", "SELF_HEAL_RESOLVED", _diff(before, None))
    anomaly = before.anomaly if before else "(unknown)"
    await ctx.notify(owner_message(ctx, f"✅ Self-healing complete: {anomaly}", kind="alert"))
    return "resolved"
