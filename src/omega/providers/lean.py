"""The lean path for a one-shot, tool-less question to an OpenAI-compatible server.

`omega ask` answers one question with no tools and no memory; importing pydantic-ai and the
OpenAI SDK for that costs more than half of its cold start. This provider speaks the
chat-completions wire format with the standard library (http.client in a worker thread):
the same request shape (system prompt first, then the turns) and the same error kinds. Like the
SDK clients Omega builds, it makes one attempt by default (`max_retries` retries 408, 409, 429,
5xx and connection errors): a 429 is seen at once by the limiter and its `retry-after`. Its
cost is the one the server reports in its usage (OpenRouter's `usage.cost`), else the model's
list price (genai-prices, the table `ApiProvider` prices with), loaded on a worker thread while
the request is in flight, unless the home's price memo (omega.providers.price_memo) already
knows the model; a model not listed is costed by the turn (`[limits] unknown_model_usd_per_mtok`).
Tools and MCP servers stay with `ApiProvider`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import http.client
import json
import time
from typing import Any
from urllib.parse import urlsplit

from omega.logs import redact_url
from omega.providers import prices
from omega.providers.base import ProviderError, http_error_kind, salvage_usage
from omega.providers.price_memo import PriceMemo
from omega.types import Context, Reply, Usage

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class LeanChatProvider:
    """A tool-less OpenAI-compatible provider with no third-party imports."""

    def __init__(
        self,
        name: str,
        model: str,
        api_key: str,
        base_url: str,
        timeout_secs: float = 120.0,
        max_retries: int = 0,
        memo: PriceMemo | None = None,
    ) -> None:
        self._name = name
        self.memo = memo
        self.model = model
        self._api_key = api_key
        self.base_url = base_url or "https://api.openai.com/v1"
        self.timeout_secs = timeout_secs
        self.max_retries = max_retries

    @property
    def name(self) -> str:
        """The provider's configured name (openai, ollama, openrouter)."""
        return self._name

    def availability(self) -> tuple[bool, str]:
        """A key where the public endpoints need one."""
        needs_key = self._name == "openrouter" or "api.openai.com" in self.base_url
        if needs_key and not self._api_key:
            return False, f"no API key for {self._name} (set it in config.toml or the environment)"
        return True, f"model {self.model} at {redact_url(self.base_url)}"

    async def prepare(self) -> None:
        """Nothing to load."""
        return None

    async def complete(self, context: Context) -> Reply:
        """One chat completion (retried like the SDK would); ProviderError on failure."""
        if context.use_tools or context.mcp_servers:
            raise ProviderError(f"{self._name}: the lean path has no tools", kind="unavailable")
        model = context.model or self.model
        messages: list[dict[str, str]] = []
        if context.system_prompt:
            messages.append({"role": "system", "content": context.system_prompt})
        messages += [{"role": m.role, "content": m.content} for m in context.messages]
        body: dict[str, Any] = {"model": model, "messages": messages}
        if context.max_tokens:
            body["max_tokens"] = context.max_tokens
        started = time.perf_counter()
        # The price table loads while the request is in flight (a free server needs none, nor
        # a model the memo knows).
        loading: asyncio.Future[None] | None = None
        if self._name not in prices.FREE_PROVIDERS and not (
            self.memo and self.memo.knows(self._name, model, self.base_url)
        ):
            loading = asyncio.ensure_future(asyncio.to_thread(prices.load))
        try:
            data = await asyncio.to_thread(self._post, json.dumps(body).encode())
        finally:
            if loading is not None and not loading.done():
                await asyncio.wait([loading])  # never left running past the call
        answered = str(data.get("model") or model) if isinstance(data, dict) else model
        try:
            usage = chat_usage(data.get("usage") or {})
        except (TypeError, AttributeError, ValueError):
            usage = Usage()
        try:
            text = str(data["choices"][0]["message"].get("content") or "")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            salvage_usage(self._name, answered, usage)  # a 200 is billed even when it is odd
            raise ProviderError(f"{self._name}: unexpected response {data!r:.200}") from exc
        if usage.cost_usd is None and self._name not in prices.FREE_PROVIDERS:
            cost = await list_price(
                self.memo, self._name, self.base_url, (model, answered), usage, loading
            )
            usage = dataclasses.replace(usage, cost_usd=cost)
        return Reply(
            text=text.strip(),
            provider=self._name,
            model=answered,
            usage=usage,
            elapsed_ms=int((time.perf_counter() - started) * 1000),
        )

    def _post(self, payload: bytes) -> Any:
        url = urlsplit(self.base_url.rstrip("/") + "/chat/completions")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        path = url.path + (f"?{url.query}" if url.query else "")
        deadline = time.monotonic() + self.timeout_secs
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProviderError(f"{self._name}: request timed out", kind="timeout")
            connection_type = (
                http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
            )
            conn = connection_type(url.hostname or "", url.port, timeout=remaining)
            try:
                conn.request("POST", path, body=payload, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                status = response.status
                retry_after = response.getheader("retry-after")
            except TimeoutError as exc:
                raise ProviderError(f"{self._name}: request timed out", kind="timeout") from exc
            except OSError as exc:
                status, raw, retry_after = 0, str(exc).encode(), None
            finally:
                conn.close()
            if status == 200:
                try:
                    return json.loads(raw)
                except ValueError as exc:
                    raise ProviderError(f"{self._name}: response is not JSON") from exc
            if (status in RETRY_STATUSES or status == 0) and attempt < self.max_retries:
                time.sleep(min(0.5 * 2**attempt, max(0.0, deadline - time.monotonic())))
                attempt += 1
                continue
            if status == 0:  # refused, reset, DNS, TLS: the provider is down
                raise ProviderError(
                    f"{self._name}: cannot connect: {raw.decode()}", kind="unavailable"
                )
            raise ProviderError(
                f"{self._name} HTTP {status}: {raw[:300]!r}",
                kind=http_error_kind(status),  # the same kinds as ApiProvider's
                retry_after=retry_after_secs(retry_after),
            )


async def list_price(
    memo: PriceMemo | None,
    provider: str,
    base_url: str,
    names: tuple[str, str],
    usage: Usage,
    loading: asyncio.Future[None] | None,
) -> float | None:
    """The list price of `usage` of the model that answered (`names`: the one asked for, the
    one that answered), for `provider`'s prices at `base_url`: remembered, else from
    genai-prices (`loading` it, or loaded now); then both names are remembered (OpenAI answers
    `gpt-4o-mini` with a dated snapshot's name, and the next call decides on the name it asks
    for)."""
    asked, answered = names
    if memo is not None:
        known, cost = memo.cost(provider, answered, usage, base_url)
        if known:
            return cost
    if loading is None:  # the memo knew the model asked for, not the one that answered
        loading = asyncio.ensure_future(asyncio.to_thread(prices.load))
        await asyncio.wait([loading])
    if loading.exception() is not None:
        return None
    cost = prices.list_price(provider, answered, usage, base_url)
    if memo is not None:
        for model in dict.fromkeys((answered, asked)):
            if not memo.knows(provider, model, base_url):
                memo.learn(provider, model, base_url)
    return cost


def retry_after_secs(header: str | None) -> float | None:
    """A `retry-after` header in seconds (its HTTP-date form is not used by these servers)."""
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:
        return None


def chat_usage(usage: dict[str, Any]) -> Usage:
    """The tokens (and cost, when reported) of a chat-completions `usage` object."""
    details = usage.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cost_usd=_reported_cost(usage),
        cached_tokens=int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
    )


def _reported_cost(usage: dict[str, Any]) -> float | None:
    """The cost in USD the server put in its usage (OpenRouter's `usage.cost`), if any."""
    cost = usage.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        return float(cost)
    return None
