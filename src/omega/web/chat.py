"""The chat page: history on load, messages sent with POST, everything else live (SSE).

Reading the event stream delivers nothing kept: the alerts kept while no page was open go out
only when the page's own script asks for them (`POST /chat/alerts`, with the session's CSRF
token, once its stream is open), never because something fetched a URL (a foreign page's
<img>, a prefetch).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)

from omega.web.context import WebContext, ctx_of, render

log = logging.getLogger(__name__)

KEEPALIVE_SECS = 15.0
MAX_TEXT = 20_000


async def page(request: Request) -> Response:
    """The chat with its history (the latest 200 lines)."""
    ctx = ctx_of(request)
    history = await ctx.store.call(ctx.channel.history, 200)
    return render(request, "chat.html", history=[event.as_json() for event in history])


async def send(request: Request) -> Response:
    """The owner says something: JSON `{text, image?}` (image as base64) from the page's
    script, or a plain form post without JavaScript."""
    ctx = ctx_of(request)
    body = await request.body()
    image: bytes | None = None
    is_json = request.headers.get("content-type", "").startswith("application/json")
    try:
        if is_json:
            data: Any = json.loads(body or b"{}")
            if not isinstance(data, dict):
                raise ValueError("expected a JSON object")
            text = data.get("text", "")
            if data.get("image"):
                image = base64.b64decode(str(data["image"]), validate=True)
        else:
            text = parse_qs(body.decode("utf-8", "replace")).get("text", [""])[0]
        if not isinstance(text, str):
            raise ValueError("text must be a string")
    except (ValueError, binascii.Error, json.JSONDecodeError) as exc:
        return JSONResponse({"ok": False, "error": str(exc)}, status_code=400)
    text = text.strip()[:MAX_TEXT]
    if not text and image is None:
        return JSONResponse({"ok": False, "error": "nothing to send"}, status_code=400)
    try:
        event = await ctx.channel.say(text, image)
    except ValueError as exc:
        return JSONResponse({"ok": False, "error": str(exc)}, status_code=400)
    except RuntimeError as exc:
        return JSONResponse({"ok": False, "error": str(exc)}, status_code=503)
    if not is_json:
        return RedirectResponse("/chat", status_code=303)
    return JSONResponse({"ok": True, "event": event.as_json()})


async def events(request: Request) -> Response:
    """Server-Sent Events: every chat line from now on, and typing indicators, while the
    session lives. Side-effect free: the alerts kept meanwhile wait for the page's `POST
    /chat/alerts`."""
    ctx = ctx_of(request)
    session_id = request.scope["state"]["session"].id
    queue = ctx.channel.subscribe()

    async def stream() -> AsyncIterator[str]:
        try:
            yield "retry: 2000\n\n"
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), KEEPALIVE_SECS)
                except TimeoutError:
                    item = {}
                # A stream outlives no logout or expiry: nothing more reaches that page.
                if item is None or not await _alive(ctx, session_id):
                    return
                if not item:
                    yield ": keep-alive\n\n"
                    continue
                yield f"event: chat\ndata: {json.dumps(item, ensure_ascii=False)}\n\n"
        finally:
            ctx.channel.unsubscribe(queue)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"x-accel-buffering": "no"},
    )


async def _alive(ctx: WebContext, session_id: str) -> bool:
    try:
        return await ctx.sessions.alive(session_id)
    except Exception:  # the store is away or closing: the stream ends, the page reconnects
        log.debug("checking a web session failed", exc_info=True)
        return False


async def alerts(request: Request) -> Response:
    """The page's script, its event stream open: the owner is here, so the alerts kept while
    no channel reached them go out now (to the first route that reaches the owner: this page
    when it is the only one). JSON `{ok, sent}`."""
    ctx = ctx_of(request)
    try:
        sent = await ctx.gateway.flush_owner_alerts()
    except Exception:
        log.exception("delivering kept owner alerts failed")
        return JSONResponse({"ok": False, "error": "not delivered now"}, status_code=503)
    return JSONResponse({"ok": True, "sent": sent})


async def media(request: Request) -> Response:
    """An image sent on the chat (only names the channel made; never a path)."""
    found = ctx_of(request).channel.media_file(request.path_params["name"])
    if found is None:
        return Response("Not found.\n", status_code=404, media_type="text/plain")
    path, content_type = found
    return FileResponse(path, media_type=content_type)
