"""The lean path for a one-shot, tool-less question to an OpenAI-compatible server.

`omega ask` answers one question with no tools and no memory; importing pydantic-ai and the
OpenAI SDK for that costs more than half of its cold start. This provider speaks the
chat-completions wire format with the standard library (http.client in a worker thread):
the same request shape (system prompt first, then the turns), the SDK's retry policy on 429,
5xx and connection errors, the same error kinds. Its cost is the one the server reports in
its usage (OpenRouter's `usage.cost`); a price list (genai-prices, ~0.2 s and MiBs to load) is
not looked up here, so an unreported cost stays unknown and counts as 0 (README, "Audit and
spending"). Tools, MCP servers and priced answers stay with `ApiProvider`.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import time
from typing import Any
from urllib.parse import urlsplit

from omega.logs import redact_url
from omega.providers.base import ErrorKind, ProviderError
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
        max_retries: int = 2,
    ) -> None:
        self._name = name
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
        data = await asyncio.to_thread(self._post, json.dumps(body).encode())
        try:
            choice = data["choices"][0]["message"]
            usage = data.get("usage") or {}
            text = str(choice.get("content") or "")
            input_tokens = int(usage.get("prompt_tokens") or 0)
            output_tokens = int(usage.get("completion_tokens") or 0)
            details = usage.get("prompt_tokens_details") or {}
            cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise ProviderError(f"{self._name}: unexpected response {data!r:.200}") from exc
        return Reply(
            text=text.strip(),
            provider=self._name,
            model=str(data.get("model") or model),
            usage=Usage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=_reported_cost(usage),
                cached_tokens=cached,
            ),
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
            except TimeoutError as exc:
                raise ProviderError(f"{self._name}: request timed out", kind="timeout") from exc
            except OSError as exc:
                status, raw = 0, str(exc).encode()
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
            kind: ErrorKind = "rate_limit" if status == 429 else "error"
            if status in (503, 529):
                kind = "overloaded"  # the same kinds as ApiProvider's (api.http_error_kind)
            if status == 0:
                kind = "unavailable"
                raise ProviderError(f"{self._name}: cannot connect: {raw.decode()}", kind=kind)
            raise ProviderError(f"{self._name} HTTP {status}: {raw[:300]!r}", kind=kind)


def _reported_cost(usage: dict[str, Any]) -> float | None:
    """The cost in USD the server put in its usage (OpenRouter's `usage.cost`), if any."""
    cost = usage.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        return float(cost)
    return None
