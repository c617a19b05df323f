"""`omega evolution report` and `omega fragments`: the owner's picture of self-evolution, and
the prompt fragments promoted from reviews (list, show, deactivate, reactivate).

Everything shown that a model or a person wrote (learnings, gap titles, goals) is printed as
plain text: rich never reads it as markup."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from omega.cli.support import fail, load_runtime, open_store
from omega.text import MAX_ROW_ID

if TYPE_CHECKING:
    from rich.console import Console

    from omega.evolution.reflection import EvolutionReport
    from omega.types import OutgoingMessage

evolution_app = typer.Typer(help="Self-evolution at a glance.", no_args_is_help=True)
fragments_app = typer.Typer(
    help="Prompt fragments promoted from review notes: list, show, switch off or on.",
    no_args_is_help=True,
)
BY = "owner (cli)"


def register(app: typer.Typer) -> None:
    """Add `omega evolution` and `omega fragments` to the main `omega` app."""
    app.add_typer(evolution_app, name="evolution")
    app.add_typer(fragments_app, name="fragments")


@evolution_app.command("report")
def report(
    days: Annotated[int, typer.Option(min=1, max=3650, help="The period: the last N days.")] = 7,
    as_json: Annotated[bool, typer.Option("--json", help="JSON with stable keys.")] = False,
) -> None:
    """What Omega learned, gaps opened and closed, proposals by state, the cost of
    self-evolution and the gate's decisions over the last N days."""
    from omega.evolution.reflection import evolution_report, since_days

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        found = evolution_report(store, since_days(days))
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(found.as_json(), indent=2, ensure_ascii=False))
        return
    from rich.console import Console

    render_report(Console(highlight=False, soft_wrap=False), found, days)


def render_report(console: Console, found: EvolutionReport, days: int) -> None:
    """The report as rich tables, one section after another."""
    from rich.table import Table
    from rich.text import Text

    def table(title: str, *columns: str) -> Table:
        return Table(*columns, title=Text(title, style="bold"), title_justify="left")

    def cells(*values: object) -> list[Text]:
        return [Text(str(v)) for v in values]

    console.print(
        Text(f"Self-evolution over the last {days} days ({found.since[:16]} to {found.until[:16]})")
    )
    learned = table("What Omega learned", "kind", "text", "for", "from", "when")
    for item in found.learned:
        kind = item.kind if item.active else f"{item.kind} (inactive)"
        scope = "everyone" if item.scope == "*" else item.scope
        learned.add_row(*cells(kind, item.text, scope, item.source, item.at[:16]))
    console.print(learned if found.learned else Text("Nothing learned in this period."))

    gaps = table(
        f"Gaps (open now: {found.gaps_open_now})", "#", "title", "source", "opened", "closed"
    )
    for gap in found.gaps:
        closed = f"{(gap.resolved_at or '')[:16]} by {gap.resolved_by}" if gap.resolved_at else ""
        gaps.add_row(
            *cells(gap.id, gap.title, gap.reported_by or gap.source, gap.created_at[:16], closed)
        )
    console.print(
        gaps
        if found.gaps
        else Text(f"No gap opened or closed in this period (open now: {found.gaps_open_now}).")
    )

    states = table("Proposals", "", "pending", "approved", "rejected")
    for label, counts in (
        ("filed in the period", found.proposals_filed),
        ("decided in the period", found.decided),
        ("all", found.proposals_now),
    ):
        states.add_row(*cells(label, counts["pending"], counts["approved"], counts["rejected"]))
    console.print(states)

    cost = table("Cost", "event", "group", "calls", "errors", "tokens in/out", "USD")
    for line in found.cost:
        cost.add_row(
            *cells(
                line.event,
                line.group,
                line.calls,
                line.errors,
                f"{line.input_tokens}/{line.output_tokens}",
                f"{line.cost_usd:.4f}" + (f" (+{line.unpriced} unpriced)" if line.unpriced else ""),
            )
        )
    for group in ("self_evolution", "background"):
        t = found.totals(group)
        cost.add_row(
            *cells(
                "total",
                group,
                t["calls"],
                "",
                f"{t['input_tokens']}/{t['output_tokens']}",
                f"{t['cost_usd']:.4f}",
            )
        )
    console.print(cost)

    gate = table("The gate's decisions", "#", "proposal", "gate", "reasons", "now")
    for v in found.gate:
        reasons = "; ".join(v.errors + v.warnings) or "-"
        now = v.status + (f" by {v.reviewed_by}: {v.reviewer_notes}" if v.reviewed_by else "")
        gate.add_row(*cells(v.proposal_id, f"{v.kind} {v.name}", v.action, reasons, now))
    console.print(gate if found.gate else Text("No proposals filed in this period."))
    decisions = table("Decisions (audit)", "when", "event", "by", "what", "detail")
    for d in found.decisions:
        decisions.add_row(*cells(d.at[:16], d.event, d.by, d.subject, d.detail))
    if found.decisions:
        console.print(decisions)

    # The critic's section (evolution.recommend): tools, issues, recommendations with ids.
    critic = table("Tools (the critic)", "tool", "calls", "success", "typical errors")
    for tool in found.critic.tools:
        errors = "; ".join(f"{e} ({n}x)" for e, n in tool.typical_errors) or "-"
        critic.add_row(*cells(tool.tool, tool.calls, f"{tool.success_rate:.0%}", errors))
    console.print(critic if found.critic.tools else Text("No tool calls recorded."))
    if found.critic.satisfaction is not None:
        console.print(Text(f"Self-rated satisfaction: {found.critic.satisfaction:.2f}"))
    console.print(Text("The critic's issues:" if found.critic.issues else "The critic: no issues."))
    for issue in found.critic.issues:
        console.print(Text(f"- {issue}"))
    if found.critic.recommendations:
        advice = table("The critic's recommendations", "id", "recommendation", "answers")
        for rec in found.critic.recommendations:
            advice.add_row(*cells(rec.id, rec.text, rec.issue or "-"))
        console.print(advice)
        console.print(Text("Make one a proposal: omega evolution propose <id>"))


@evolution_app.command("propose")
def propose(
    recommendation: Annotated[str, typer.Argument(help="The recommendation's id (r...).")],
) -> None:
    """Turn one of the critic's current recommendations into a proposal: the analysis writes
    it, the gate judges it, it is filed for review like any other (audited as yours)."""
    import asyncio

    from omega.app.runtime import pipeline_deps
    from omega.evolution.reflection import find_recommendation, propose_recommendation

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        if find_recommendation(store, recommendation) is None:
            fail(f"no current recommendation {recommendation!r} (see omega evolution report)", 1)
        deps = pipeline_deps(runtime, store)
        out = _Printed()
        line = asyncio.run(propose_recommendation(deps, out, recommendation, BY))
    finally:
        store.close()
    for text in out.texts:
        typer.echo(text)
    typer.echo(line)


class _Printed:
    """An outbox for one command: what would go to the owner is printed after it."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def send(self, message: OutgoingMessage) -> None:
        self.texts.append(message.text)

    async def typing(self, channel: str, target: str) -> None:
        return None


@fragments_app.command("list")
def fragments_list(
    show_all: Annotated[bool, typer.Option("--all", help="Inactive ones too.")] = False,
) -> None:
    """Prompt fragments, with where each came from and the runs it feeds."""
    from omega.evolution.proposals import ProposalStore, fragment_line

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        items = ProposalStore(store).list_fragments(include_inactive=show_all)
    finally:
        store.close()
    if not items:
        typer.echo("No prompt fragments." if show_all else "No active prompt fragments.")
    for item in items:
        typer.echo(fragment_line(item))


@fragments_app.command("show")
def fragments_show(
    fragment_id: Annotated[int, typer.Argument(min=1, max=MAX_ROW_ID, help="The fragment's id.")],
) -> None:
    """One fragment: its text, provenance, the runs it feeds and its audited changes."""
    from omega.evolution.proposals import ProposalStore, describe_fragment, fragment_history

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        found = ProposalStore(store).fragment(fragment_id)
        history = fragment_history(store, fragment_id)
    finally:
        store.close()
    if found is None:
        fail(f"no prompt fragment #{fragment_id}", code=1)
    typer.echo(describe_fragment(found, history))


def _change(fragment_id: int, active: bool) -> None:
    from omega.evolution.proposals import FragmentError, change_fragment

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        changed = change_fragment(store, fragment_id, active, BY)
    except FragmentError as exc:
        fail(str(exc), code=1)
    finally:
        store.close()
    verb = "Reactivated" if changed.active else "Deactivated"
    typer.echo(f"{verb} prompt fragment #{changed.id}: {changed.text[:200]}")


@fragments_app.command("deactivate")
def fragments_deactivate(
    fragment_id: Annotated[int, typer.Argument(min=1, max=MAX_ROW_ID, help="The fragment's id.")],
) -> None:
    """Stop injecting a fragment into prompts (audited; reactivate brings it back)."""
    _change(fragment_id, False)


@fragments_app.command("reactivate")
def fragments_reactivate(
    fragment_id: Annotated[int, typer.Argument(min=1, max=MAX_ROW_ID, help="The fragment's id.")],
) -> None:
    """Inject a deactivated fragment again (audited)."""
    _change(fragment_id, True)
