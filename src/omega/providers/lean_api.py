"""ApiProvider's lean first request to an OpenAI-compatible server (issues 40 and 41).

Importing pydantic-ai and the OpenAI SDK costs every process that answers about 1.3 s of CPU and
60-90 MB. Most answers are one request that calls no tool: this module sends that request
itself, the body pydantic-ai would send (omega.providers.openai_wire, the built-in tools'
entries from omega.tools.schemas), on the provider's one connection pool (httpx2, as
pydantic-ai's), with the same timeout, retries, error kinds and costing. An answer that is text
is the reply; any other answer (a tool call, no text, thinking) is handed to pydantic-ai
(`adopt`), which reads it as its model would have, and the reply goes on as before.

It applies to openai, ollama and openrouter, for the model families openai_wire mirrors, with
no images and no MCP servers, when every tool offered is a built-in in the snapshot; any other
call takes pydantic-ai's path from the start.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from omega.providers import openai_wire, prices
from omega.providers.api_models import OPENAI_COMPATIBLE
from omega.providers.base import ProviderError, http_error_kind, salvage_usage
from omega.providers.lean import RETRY_STATUSES, chat_usage, list_price, retry_after_secs
from omega.tools.schemas import openai_tools
from omega.types import Context, Reply, Usage

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models import Model

    from omega.providers.price_memo import PriceMemo
    from omega.tools import ToolRegistry

OPENAI_URL = "https://api.openai.com/v1"
# pydantic-ai's client: 600 s in all, 5 s to connect (create_async_httpx2_client).
CONNECT_SECS = 5.0
CLIENT_SECS = 600.0


class LeanHost(Protocol):
    """What this module uses of providers.api.ApiProvider (which imports this module)."""

    settings: Any  # its ApiSettings
    tools: ToolRegistry | None
    memo: PriceMemo | None  # list prices looked up before

    def http_client(self) -> Any:
        """The provider's one pool."""

    def bind_to_running_loop(self) -> None:
        """The pool of the running event loop."""

    def offers_tools(self, context: Context) -> bool:
        """Whether the call may use a tool."""


@dataclass(frozen=True)
class Unread:
    """A lean request's answer that pydantic-ai reads (a tool call, no text, thinking...)."""

    data: dict[str, Any]
    started: float


def http_client(max_connections: int) -> Any:
    """The provider's pool as pydantic-ai would make it, made without it."""
    import httpx2

    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(CLIENT_SECS, connect=CONNECT_SECS),
        limits=httpx2.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
    )


def serves(provider: LeanHost, model: str = "") -> bool:
    """Whether the provider's calls to `model` (its own by default) can go out lean when they
    bring no images or MCP servers."""
    s = provider.settings
    tools = provider.tools
    return (
        s.name in OPENAI_COMPATIBLE
        and openai_wire.knows_model(model or s.model)
        and (tools is None or openai_tools(tools) is not None)
    )


def body_for(provider: LeanHost, context: Context) -> dict[str, Any] | None:
    """The request body pydantic-ai would send for the call; None when it is not mirrored."""
    s = provider.settings
    model = context.model or s.model
    if context.images or context.mcp_servers or not serves(provider, model):
        return None
    tools: list[dict[str, Any]] | None = None
    if provider.offers_tools(context) and provider.tools is not None:
        tools = openai_tools(provider.tools, context.allowed_tools)
        if tools is None:
            return None
    return openai_wire.request_body(model, context, tools)


async def answer(provider: LeanHost, context: Context) -> Reply | Unread | None:
    """The reply when the call went out lean and was answered with text; the answer for
    pydantic-ai to read when it was answered otherwise; None when the call is not lean."""
    body = body_for(provider, context)
    if body is None:
        return None
    provider.bind_to_running_loop()
    s = provider.settings
    started = time.perf_counter()
    asked, url = str(body["model"]), base(s)
    # The price table loads while the request is in flight (as LeanChatProvider's does), unless
    # the home's price memo knows the model.
    memo = provider.memo
    loading: asyncio.Future[None] | None = None
    if not (memo and memo.knows("openai", asked, url)):
        loading = asyncio.ensure_future(asyncio.to_thread(prices.load))
    try:
        data = await post(provider, json.dumps(body).encode())
    finally:
        if loading is not None and not loading.done():
            await asyncio.wait([loading])  # never left running past the call
    answered = str(data.get("model") or asked) if isinstance(data, dict) else asked
    try:
        usage = chat_usage(data.get("usage") or {})
    except (TypeError, AttributeError, ValueError):
        usage = Usage()
    if not isinstance(data, dict) or openai_wire.message_of(data) is None:
        salvage_usage(s.name, answered, usage)  # a 200 is billed even when it is odd
        raise ProviderError(f"{s.name}: unexpected response {data!r:.200}")
    text = openai_wire.plain_text(data)
    if text is None:
        return Unread(data, started)
    # Priced as pydantic-ai prices its responses: by the endpoint's URL, then as OpenAI's.
    cost = await list_price(memo, "openai", url, (asked, answered), usage, loading)
    return Reply(
        text=text.strip(),
        provider=s.name,
        model=answered,
        usage=Usage(usage.input_tokens, usage.output_tokens, cost, usage.cached_tokens),
        elapsed_ms=int((time.perf_counter() - started) * 1000),
    )


def base(settings: Any) -> str:
    """The endpoint's base URL."""
    return str(settings.base_url or OPENAI_URL)


async def post(provider: LeanHost, payload: bytes) -> Any:
    """POST a chat completion on the pool, retried like the SDK (`max_retries`); its JSON."""
    import httpx2

    s = provider.settings
    client = provider.http_client()
    url = base(s).rstrip("/") + "/chat/completions"
    headers = {
        "Authorization": f"Bearer {s.api_key or 'none'}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    deadline = time.monotonic() + s.timeout_secs
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProviderError(f"{s.name}: request timed out", kind="timeout")
        timeout = httpx2.Timeout(remaining, connect=min(CONNECT_SECS, remaining))
        retry_after: str | None = None
        try:
            response = await client.post(url, content=payload, headers=headers, timeout=timeout)
            status, raw = response.status_code, response.content
            retry_after = response.headers.get("retry-after")
        except httpx2.TimeoutException as exc:
            raise ProviderError(f"{s.name}: request timed out", kind="timeout") from exc
        except httpx2.TransportError as exc:  # refused, reset, DNS, TLS
            status, raw = 0, str(exc).encode()
        if status == 200:
            try:
                return json.loads(raw)
            except ValueError as exc:
                raise ProviderError(f"{s.name}: response is not JSON") from exc
        if (status in RETRY_STATUSES or status == 0) and attempt < s.max_retries:
            await asyncio.sleep(min(0.5 * 2**attempt, max(0.0, deadline - time.monotonic())))
            attempt += 1
            continue
        if status == 0:  # the provider is down
            raise ProviderError(f"{s.name}: cannot connect: {raw.decode()}", kind="unavailable")
        raise ProviderError(
            f"{s.name} HTTP {status}: {_error_body(raw)!r:.300}",
            kind=http_error_kind(status),
            retry_after=retry_after_secs(retry_after),
        )


def _error_body(raw: bytes) -> Any:
    """What the SDK reports of an error answer: its `error` object, else the body."""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")
    return data.get("error", data) if isinstance(data, dict) else data


def adopt(name: str, model: Model, unread: Unread) -> ModelResponse:
    """The answer as pydantic-ai's model reads its own (parts, usage, model and provider names),
    priced as the agent prices it; ProviderError where the model would fail on it."""
    from openai.types.chat import ChatCompletion

    from omega.providers.direct import price, provider_errors

    with provider_errors(name):
        read = model._process_response  # type: ignore[attr-defined]
        response: ModelResponse = read(ChatCompletion.construct(**unread.data))
    if response.usage.cost is None:
        price(response)
    return response
