"""The dashboard's pages (GET only: reading never changes anything)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from omega.evolution.proposals import ProposalStore, fragment_history, review_files
from omega.evolution.reflection import evolution_report, since_days
from omega.gateway import strangers
from omega.hours import QUIET_FACT
from omega.memory import dashboard
from omega.memory.db import from_db_time
from omega.schedule import resolve_timezone, timezone_name
from omega.turn import BACKGROUND_SHARE
from omega.web.charts import rate_bars, spending_chart, usage_charts
from omega.web.context import ctx_of, render


def _page(request: Request) -> int:
    value = request.query_params.get("page", "1")
    return int(value) if value.isdecimal() and 0 < int(value) < 100_000 else 1


def _arg(request: Request, name: str, choices: tuple[str, ...] | None = None) -> str:
    value = request.query_params.get(name, "").strip()[:200]
    if choices is not None and value not in choices:
        return ""
    return value


def _local(text: str | None, zone_name: str) -> str:
    """A database time shown in the owner's zone."""
    if not text:
        return ""
    moment = from_db_time(text).astimezone(resolve_timezone(zone_name))
    return moment.strftime("%Y-%m-%d %H:%M %Z")


async def overview(request: Request) -> Response:
    """The dashboard's front page: health at a glance, usage charts, what awaits the owner."""
    ctx = ctx_of(request)
    store = ctx.store

    def read() -> dict[str, Any]:
        return {
            "counts": store.counts(),
            "open_limitations": dashboard.limitations(store, "open").total,
            "pending_proposals": dashboard.proposals(store, "pending").total,
            "pending_tasks": dashboard.tasks(store, "pending").total,
            "usage": dashboard.usage_by_day(store, 30),
            "spending": dashboard.spending_by_kind(store, 30),
            "spent_today": dashboard.spent_today(store),
            "tools": dashboard.tool_success(store),
            "heartbeat": dashboard.last_event(store, "heartbeat"),
        }

    data = await store.call(read)
    tokens, cost = usage_charts(data["usage"])
    return render(
        request,
        "overview.html",
        data=data,
        tokens_chart=tokens,
        cost_chart=cost,
        spending_chart=spending_chart(data["spending"]),
        spending=_spending_table(data["spending"]),
        daily_cap=ctx.deps.config.limits.daily_usd,
        background_stop=ctx.deps.config.limits.daily_usd * BACKGROUND_SHARE,
        tools_chart=_tools_chart(data["tools"]),
        zone=ctx.deps.config.omega.timezone,
        local=_local,
    )


def _spending_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per kind of call: today's and the 30 days' calls, tokens and cost (kinds in order)."""
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        found = table.setdefault(
            row["kind"],
            {
                "kind": row["kind"],
                "background": row["background"],
                "today_calls": 0,
                "today_usd": 0.0,
                "calls": 0,
                "tokens": 0,
                "usd": 0.0,
                "unpriced": 0,
            },
        )
        found["calls"] += row["calls"]
        found["tokens"] += row["tokens"] or 0
        found["usd"] += row["cost_usd"]
        found["unpriced"] += row["unpriced"]
        if row["day"] == today:
            found["today_calls"] += row["calls"]
            found["today_usd"] += row["cost_usd"]
    return list(table.values())


def _tools_chart(rows: list[dict[str, Any]]) -> Any:
    return rate_bars(
        "Tool success rate",
        [
            (str(r["tool"]), float(r["rate"]), f"of {r['calls']}, {float(r['avg_ms'] or 0):.0f} ms")
            for r in rows
        ],
    )


async def limitations(request: Request) -> Response:
    """Limitations, open or resolved, with a resolve form for open ones."""
    store = ctx_of(request).store
    status = _arg(request, "status", ("", "open", "resolved"))
    q = _arg(request, "q")
    found = await store.call(dashboard.limitations, store, status, q, _page(request))
    return render(request, "limitations.html", page=found, status=status, q=q)


def _risk(spec: dict[str, Any], validation: dict[str, Any]) -> str:
    """The gate's judged risk, else the risk the proposal claimed."""
    return str(validation.get("risk") or spec.get("risk_level") or "")


async def proposals(request: Request) -> Response:
    """Proposals with their gate decision; each opens to its review."""
    store = ctx_of(request).store
    status = _arg(request, "status", ("", "pending", "approved", "rejected"))
    kind = _arg(request, "kind", ("", "skill", "tool", "lesson"))
    found = await store.call(dashboard.proposals, store, status, kind, _page(request))
    for row in found.rows:
        row["risk"] = _risk(json.loads(row["spec"]), json.loads(row["validation"]))
    return render(request, "proposals.html", page=found, status=status, kind=kind)


async def proposal(request: Request) -> Response:
    """One proposal: everything an approval would load (full content, sha256, diff), risk,
    category, the gate's reasons, and the approve / reject / promote forms."""
    ctx = ctx_of(request)
    proposal_id = int(request.path_params["proposal_id"])
    found = await ctx.store.call(ProposalStore(ctx.store).get, proposal_id)
    if found is None:
        return Response("No such proposal.\n", status_code=404, media_type="text/plain")
    files = review_files(ctx.deps.paths, found)
    return render(
        request,
        "proposal.html",
        p=found,
        risk=_risk(found.spec, found.validation),
        files=files,
        diffs={str(f.path): _diff(f.content, f.exists) for f in files},
        spec=json.dumps(found.spec, indent=2, ensure_ascii=False),
    )


def _diff(content: str, exists: bool) -> list[str]:
    """The change an approval makes to a file, as unified-diff lines (new file: all `+`)."""
    if exists:
        return []
    return ["--- /dev/null", "+++ b/(new file)", *(f"+{line}" for line in content.splitlines())]


async def fragments(request: Request) -> Response:
    """Prompt fragments with their provenance and history, with deactivate / reactivate."""
    store = ctx_of(request).store
    state = _arg(request, "state", ("", "active", "inactive"))

    def read() -> list[dict[str, Any]]:
        items = ProposalStore(store).list_fragments(include_inactive=True)
        return [
            {"f": f, "history": fragment_history(store, f.id)}
            for f in items
            if not state or f.active == (state == "active")
        ]

    return render(
        request,
        "fragments.html",
        items=await store.call(read),
        state=state,
        zone=ctx_of(request).deps.config.omega.timezone,
        local=_local,
    )


REPORT_DAYS = (1, 7, 30, 90, 365)


async def evolution(request: Request) -> Response:
    """The self-evolution report over the last N days (the same as `omega evolution report`)."""
    store = ctx_of(request).store
    value = _arg(request, "days")
    days = int(value) if value.isdecimal() and int(value) in REPORT_DAYS else 7
    found = await store.call(evolution_report, store, since_days(days))
    return render(
        request,
        "evolution.html",
        r=found,
        days=days,
        choices=REPORT_DAYS,
        self_evolution=found.totals("self_evolution"),
        background=found.totals("background"),
    )


async def tasks(request: Request) -> Response:
    """Scheduled tasks, next due shown in the owner's zone, with cancel for pending ones."""
    ctx = ctx_of(request)
    status = _arg(
        request, "status", ("", "pending", "delivering", "delivered", "cancelled", "failed")
    )
    q = _arg(request, "q")
    if "status" not in request.query_params:
        status = "pending"
    found = await ctx.store.call(dashboard.tasks, ctx.store, status, q, _page(request))
    zone = resolve_timezone(ctx.deps.config.omega.timezone)
    return render(
        request,
        "tasks.html",
        page=found,
        status=status,
        q=q,
        zone=timezone_name(zone),
        local=_local,
    )


async def people(request: Request) -> Response:
    """Everyone Omega keeps memory about, strangers waiting to be approved (each approved or
    denied with the code they were given) and the people let in at run time."""
    store = ctx_of(request).store
    q = _arg(request, "q")
    found = await store.call(dashboard.people, store, q, _page(request))
    pending = await store.call(store.pairing_pending, strangers.utc_clock())
    grants = await store.call(store.grants)
    return render(request, "people.html", page=found, q=q, pending=pending, grants=grants)


async def person(request: Request) -> Response:
    """One person's facts, with delete per fact and purge; their quiet hours, with the messages
    held for their digest."""
    store = ctx_of(request).store
    who = _arg(request, "id")
    facts = await store.call(dashboard.facts, store, who)
    quiet = next((f["value"] for f in facts if f["key"] == QUIET_FACT), "")
    held = await store.call(store.held_waiting, who)
    return render(request, "person.html", person=who, facts=facts, quiet=quiet, held=held)


async def conversations(request: Request) -> Response:
    """Conversations with their summaries."""
    store = ctx_of(request).store
    channels = await store.call(dashboard.distinct, store, "conversations", "channel")
    channel = _arg(request, "channel", ("", *channels))
    status = _arg(request, "status", ("", "active", "closed"))
    q = _arg(request, "q")
    found = await store.call(dashboard.conversations, store, channel, status, q, _page(request))
    return render(
        request,
        "conversations.html",
        page=found,
        channels=channels,
        channel=channel,
        status=status,
        q=q,
    )


async def conversation(request: Request) -> Response:
    """One conversation's messages."""
    store = ctx_of(request).store
    found = await store.call(dashboard.conversation, store, request.path_params["conversation_id"])
    if found is None:
        return Response("No such conversation.\n", status_code=404, media_type="text/plain")
    return render(request, "conversation.html", c=found)


async def audit(request: Request) -> Response:
    """The audit log: exchanges, denials, every self-modification with its diff."""
    store = ctx_of(request).store
    channels = await store.call(dashboard.distinct, store, "audit_log", "channel")
    events = await store.call(dashboard.distinct, store, "audit_log", "event")
    event = _arg(request, "event")
    status = _arg(request, "status", ("", "ok", "denied", "error"))
    channel = _arg(request, "channel", ("", *channels))
    q = _arg(request, "q")
    found = await store.call(dashboard.audit, store, event, status, channel, q, _page(request))
    return render(
        request,
        "audit.html",
        page=found,
        events=events,
        channels=channels,
        event=event,
        status=status,
        channel=channel,
        q=q,
    )


async def tools(request: Request) -> Response:
    """Tool calls (ok or error, duration) and the success rate per tool."""
    store = ctx_of(request).store
    names = await store.call(dashboard.distinct, store, "tool_calls", "tool")
    tool = _arg(request, "tool", ("", *names))
    ok = _arg(request, "ok", ("", "0", "1"))
    found = await store.call(dashboard.tool_calls, store, tool, ok, _page(request))
    rates = await store.call(dashboard.tool_success, store)
    return render(
        request,
        "tools.html",
        page=found,
        names=names,
        tool=tool,
        ok=ok,
        chart=_tools_chart(rates),
    )


async def health(request: Request) -> Response:
    """Provider, channels, loops, last heartbeat, sandbox, skills' MCP servers, the replicas
    and their leases, self-check results and the security audit's findings (the checks of
    `omega security audit`)."""
    import asyncio

    from omega.ops.fleet import fleet_rows
    from omega.ops.security import AuditContext, audit
    from omega.sandbox import probe
    from omega.tools.mcp_status import server_states

    ctx = ctx_of(request)
    deps = ctx.deps
    store = ctx.store
    available, reason = deps.provider.availability()

    def read() -> dict[str, Any]:
        return {
            "heartbeat": dashboard.last_event(store, "heartbeat"),
            "self_heal": dashboard.self_heal_sessions(store),
            "kept_alerts": store.pending_owner_alerts(20),
            "next_due": store.next_due_at(),
            "counts": store.counts(),
            "fleet": fleet_rows(store, deps.config.store.lease_seconds),
        }

    data = await store.call(read)
    config = deps.config
    report = await asyncio.to_thread(audit, AuditContext(config, deps.paths))
    uptime = int(time.monotonic() - deps.state.started_at)
    size = sum(p.stat().st_size for p in deps.paths.home.glob("memory.db*") if p.is_file())
    next_due: datetime | None = data["next_due"]
    return render(
        request,
        "health.html",
        provider=deps.provider.name,
        available=available,
        reason=reason,
        channels=sorted(ctx.gateway.channels),
        loops=[
            ("scheduler", config.scheduler.enabled),
            ("heartbeat", config.heartbeat.enabled),
            ("summarizer", True),
        ],
        heartbeat_interval=deps.state.heartbeat_interval,
        uptime=f"{uptime // 3600}h {uptime % 3600 // 60}m {uptime % 60}s",
        sandbox=probe(config.sandbox.mode).describe(),
        mcp=server_states(deps.paths.home),
        findings=report.findings,
        counts=report.counts(),
        db_kib=size / 1024,
        next_due=next_due.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if next_due else "",
        data=data,
        zone=config.omega.timezone,
        local=_local,
    )
