"""What every route of the web page shares: its context, and how a page is rendered.

The routes (pages, actions, chat) import this module, never `omega.web.app`, which imports
them to build the app: no circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from omega.logs import redact
from omega.text import literal

if TYPE_CHECKING:
    from omega.channels.web import WebChannel
    from omega.gateway.gateway import Gateway
    from omega.memory.store import Store
    from omega.turn import PipelineDeps
    from omega.web.security import Sessions

HERE = Path(__file__).parent


@dataclass
class WebContext:
    """What every route needs."""

    deps: PipelineDeps
    gateway: Gateway
    channel: WebChannel
    sessions: Sessions
    templates: jinja2.Environment

    @property
    def store(self) -> Store:
        """The memory.db store."""
        return self.deps.store


def ctx_of(request: Request) -> WebContext:
    """The web context of the app serving `request`."""
    ctx: WebContext = request.app.state.ctx
    return ctx


def render(request: Request, template: str, **values: Any) -> HTMLResponse:
    """A page from `templates/`, with the session's CSRF token and the current path."""
    ctx = ctx_of(request)
    session = request.scope["state"]["session"]
    html = ctx.templates.get_template(template).render(
        csrf=session.csrf,
        path=request.url.path,
        query=request.query_params,
        msg=request.query_params.get("msg", ""),
        name=ctx.deps.config.omega.name,
        **values,
    )
    return HTMLResponse(html)


def templates() -> jinja2.Environment:
    """The page templates (`templates/`), autoescaped; an unknown value is an error."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals["with_page"] = _with_page
    env.filters["literal"] = literal  # an id or name from outside, quoted as data
    env.filters["redact"] = redact  # what Omega says of itself: as `omega status` shows it
    return env


def _with_page(query: Any, page: int) -> str:
    """The current filters as a query string, on another page."""
    values = {key: value for key, value in query.items() if key not in ("page", "msg")}
    return urlencode({**values, "page": page})
