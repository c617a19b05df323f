"""What the owner decides on the page (POST only; the Guard has checked session and CSRF).

Every decision goes through the same functions as the CLI and the chat commands
(`evolution.registration.approve/reject`, `evolution.fragments.change_fragment`,
`evolution.limitations.resolve_by_owner`, `evolution.recommend.propose_recommendation`,
the Store's task and fact methods): the page adds no rules of its own, and each change is
audited as the owner's, from the web.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from omega.evolution.gaps import resolve_by_owner
from omega.evolution.proposals import FragmentError, ReviewError, change_fragment
from omega.evolution.proposals import approve as approve_proposal
from omega.evolution.proposals import reject as reject_proposal
from omega.evolution.reflection import propose_recommendation as propose_from_critic
from omega.gateway.notify import quiet_setting
from omega.gateway.strangers import enter_code
from omega.memory import dashboard
from omega.memory.audit import AuditEntry
from omega.memory.store import Store
from omega.memory.tasks import TaskLookupError
from omega.text import literal
from omega.web.context import ctx_of
from omega.web.security import COOKIE

BY = "owner (web)"


async def _form(request: Request) -> dict[str, str]:
    """The posted form's fields (first value of each)."""
    body = (await request.body()).decode("utf-8", "replace")
    return {key: values[0] for key, values in parse_qs(body, keep_blank_values=True).items()}


def _back(where: str, message: str) -> RedirectResponse:
    sep = "&" if "?" in where else "?"
    return RedirectResponse(f"{where}{sep}msg={quote(message[:300])}", status_code=303)


def _audit(store: Store, event: str, what: str, detail: str) -> None:
    store.audit(
        AuditEntry(
            channel="web",
            sender_id="owner",
            status="ok",
            event=event,
            input_text=what[:2000],
            detail=f"cause: {BY}\n{detail}"[:8000],
        )
    )


async def resolve(request: Request) -> Response:
    """Resolve a limitation with a note."""
    ctx = ctx_of(request)
    form = await _form(request)
    key = str(request.path_params["limitation_id"])
    note = form.get("note", "").strip()
    done = await ctx.store.call(
        resolve_by_owner,
        ctx.store,
        ctx.deps.paths.heartbeat,
        key,
        note,
        by=BY,
        channel="web",
        sender_id="owner",
        request=f"resolve {key} {note}",
    )
    text = f"Resolved [{done.id}] {done.quoted}." if done else f"No open limitation {key}."
    return _back("/limitations", text)


async def approve(request: Request) -> Response:
    """Approve a proposal (with notes; `promote` also makes the notes a prompt fragment). The
    form carries the sha256 of the tool file the page showed (`sha256`): a file swapped since
    the page was rendered is refused, as on every surface."""
    ctx = ctx_of(request)
    form = await _form(request)
    proposal_id = int(request.path_params["proposal_id"])
    try:
        text = await ctx.store.call(
            approve_proposal,
            ctx.store,
            ctx.deps.paths,
            ctx.deps.config,
            proposal_id,
            form.get("note", ""),
            BY,
            promote_notes=form.get("promote", "") == "1",
            sha256=form.get("sha256", ""),
        )
    except ReviewError as exc:
        text = f"Not done: {exc}."
    return _back(f"/proposals/{proposal_id}", text)


async def reject(request: Request) -> Response:
    """Reject a proposal with its reason (remembered so it is not proposed again)."""
    ctx = ctx_of(request)
    form = await _form(request)
    proposal_id = int(request.path_params["proposal_id"])
    try:
        text = await ctx.store.call(
            reject_proposal, ctx.store, proposal_id, form.get("reason", ""), BY
        )
    except ReviewError as exc:
        text = f"Not done: {exc}."
    return _back(f"/proposals/{proposal_id}", text)


async def propose_recommendation(request: Request) -> Response:
    """Turn one of the critic's recommendations into a proposal (the analysis and the gate, as
    `omega evolution propose`); the owner's alert goes out as for any new proposal."""
    ctx = ctx_of(request)
    key = str(request.path_params["recommendation_id"])
    text = await propose_from_critic(ctx.deps, ctx.gateway, key, BY)
    return _back("/evolution", text)


async def _switch_fragment(request: Request, active: bool) -> Response:
    ctx = ctx_of(request)
    fragment_id = int(request.path_params["fragment_id"])
    try:
        changed = await ctx.store.call(change_fragment, ctx.store, fragment_id, active, BY)
        verb = "Reactivated" if changed.active else "Deactivated"
        text = f"{verb} prompt fragment #{changed.id}."
    except FragmentError as exc:
        text = f"Not done: {exc}."
    return _back("/fragments", text)


async def deactivate_fragment(request: Request) -> Response:
    """Stop injecting a prompt fragment (audited as the owner's, from the web)."""
    return await _switch_fragment(request, False)


async def reactivate_fragment(request: Request) -> Response:
    """Inject a deactivated prompt fragment again (audited)."""
    return await _switch_fragment(request, True)


async def cancel_task(request: Request) -> Response:
    """Cancel one pending task (whoever it belongs to: the owner may)."""
    ctx = ctx_of(request)
    task_id = str(request.path_params["task_id"])
    store = ctx.store

    def cancel() -> str:
        task = store.task(task_id)
        if task is None or task.status != "pending":
            return f"No pending task {task_id}."
        try:
            store.cancel_task(task.sender_id, task.id)
        except TaskLookupError as exc:
            return f"Not done: {exc}."
        _audit(store, "task:cancelled", f"{task.id} {task.description}", f"for {task.sender_id}")
        return f"Cancelled: {task.description}"

    text = await store.call(cancel)
    ctx.deps.state.tasks_changed.set()  # the scheduler re-plans its sleep
    return _back("/tasks", text)


async def delete_fact(request: Request) -> Response:
    """Forget one fact about a person."""
    ctx = ctx_of(request)
    form = await _form(request)
    person, key = form.get("person", ""), form.get("key", "")
    store = ctx.store

    def delete() -> str:
        if not store.delete_fact(person, key):
            return f"No fact {key!r}."
        _audit(store, "fact:deleted", f"{person} {key}", "")
        return f"Forgot {key} of {person}."

    text = await store.call(delete)
    return _back(f"/person?id={quote(person)}", text)


async def quiet(request: Request) -> Response:
    """Set or end a person's quiet hours (the same rules as /quiet)."""
    ctx = ctx_of(request)
    form = await _form(request)
    person, hours = form.get("person", ""), form.get("hours", "").strip() or "off"
    store = ctx.store

    def change() -> str:
        text = quiet_setting(store, person, hours, ctx.deps.config.omega.timezone)
        _audit(store, "person:quiet", f"{person} {hours}", text)
        return text

    text = await store.call(change)
    return _back(f"/person?id={quote(person)}", text)


async def purge(request: Request) -> Response:
    """Forget a person: facts, conversations, summaries, pending tasks."""
    ctx = ctx_of(request)
    form = await _form(request)
    person = form.get("person", "")
    store = ctx.store

    def forget() -> str:
        if not person:
            return "No person given."
        gone = dashboard.purge_person(store, person)
        listing = ", ".join(f"{n} {what}" for what, n in gone.items())
        _audit(store, "person:purged", person, listing)
        return f"Forgot {person}: {listing}."

    text = await store.call(forget)
    return _back("/people", text)


async def _pairing_code(request: Request, approve: bool) -> Response:
    ctx = ctx_of(request)
    form = await _form(request)
    _, text = await ctx.store.call(enter_code, ctx.store, form.get("code", ""), approve, "web")
    return _back("/people", text)


async def approve_code(request: Request) -> Response:
    """Let in the stranger who was given the code typed in (wrong codes count against the
    page, as on every surface)."""
    return await _pairing_code(request, True)


async def deny_code(request: Request) -> Response:
    """Turn away the stranger who was given the code typed in."""
    return await _pairing_code(request, False)


async def revoke_person(request: Request) -> Response:
    """Take back a run-time grant (pairing, `omega people allow`); their tasks are cancelled."""
    ctx = ctx_of(request)
    form = await _form(request)
    channel, sender_id = form.get("channel", ""), form.get("sender_id", "")
    had, cancelled = await ctx.store.call(ctx.store.revoke_access, channel, sender_id, BY)
    ctx.deps.state.tasks_changed.set()  # the scheduler re-plans its sleep
    what = "revoked" if had else "had no run-time grant"
    done = f"{channel}:{literal(sender_id)} {what}; {cancelled} pending task(s) cancelled."
    return _back("/people", done)


async def logout(request: Request) -> Response:
    """End this page's session."""
    session = request.scope["state"]["session"]
    await ctx_of(request).sessions.logout(session.id)
    response = RedirectResponse("/chat", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response
