"""API providers through pydantic-ai v2: OpenAI-compatible (openai, ollama, openrouter),
Anthropic and Gemini. pydantic-ai is imported lazily so CLI start-up stays fast."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omega.providers.base import ErrorKind, ProviderError
from omega.types import Context, Reply, Usage

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model

log = logging.getLogger(__name__)

OPENAI_COMPATIBLE = ("openai", "ollama", "openrouter")


@dataclass(frozen=True)
class ApiSettings:
    """What an API provider needs; secrets are plain strings here and never logged."""

    name: str
    model: str
    api_key: str = ""
    base_url: str = ""
    model_complex: str = ""
    timeout_secs: float = 120.0
    max_retries: int = 2


class ApiProvider:
    """A hosted or local HTTP model reached through pydantic-ai."""

    def __init__(self, settings: ApiSettings) -> None:
        self.settings = settings
        self._models: dict[str, Model] = {}

    @property
    def name(self) -> str:
        return self.settings.name

    def availability(self) -> tuple[bool, str]:
        s = self.settings
        needs_key = s.name in ("anthropic", "gemini", "openrouter") or (
            s.name == "openai" and "api.openai.com" in s.base_url
        )
        if needs_key and not s.api_key:
            return False, f"no API key for {s.name} (set it in config.toml or the environment)"
        where = f" at {s.base_url}" if s.base_url and s.name in OPENAI_COMPATIBLE else ""
        return True, f"model {s.model}{where}"

    def _model(self, model_name: str) -> Model:
        cached = self._models.get(model_name)
        if cached is not None:
            return cached
        s = self.settings
        model: Model
        if s.name in OPENAI_COMPATIBLE:
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            provider = OpenAIProvider(base_url=s.base_url or None, api_key=s.api_key or "none")
            model = OpenAIChatModel(model_name, provider=provider)
        elif s.name == "anthropic":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            model = AnthropicModel(
                model_name,
                provider=AnthropicProvider(api_key=s.api_key, base_url=s.base_url or None),
            )
        elif s.name == "gemini":
            from pydantic_ai.models.google import GoogleModel
            from pydantic_ai.providers.google import GoogleProvider

            model = GoogleModel(
                model_name,
                provider=GoogleProvider(api_key=s.api_key, base_url=s.base_url or None),
            )
        else:
            raise ProviderError(f"unknown API provider {s.name!r}", kind="unavailable")
        self._models[model_name] = model
        return model

    async def prepare(self) -> None:
        def load() -> None:
            import pydantic_ai.direct  # noqa: F401  (the first import costs about a second)

            self._model(self.settings.model)

        await asyncio.to_thread(load)

    async def complete(self, context: Context) -> Reply:
        from pydantic_ai import exceptions
        from pydantic_ai.direct import model_request
        from pydantic_ai.settings import ModelSettings

        model_name = context.model or self.settings.model
        settings: ModelSettings = {
            "timeout": self.settings.timeout_secs,
            "max_retries": self.settings.max_retries,
        }
        if context.max_tokens:
            settings["max_tokens"] = context.max_tokens
        started = time.perf_counter()
        try:
            response = await model_request(
                self._model(model_name), to_model_messages(context), model_settings=settings
            )
        except exceptions.ModelHTTPError as exc:
            kind: ErrorKind = "rate_limit" if exc.status_code == 429 else "error"
            raise ProviderError(
                f"{self.name} HTTP {exc.status_code}: {exc.body!r:.300}", kind=kind
            ) from exc
        except (
            exceptions.ModelAPIError,
            exceptions.UnexpectedModelBehavior,
            exceptions.UserError,
        ) as exc:
            api_kind: ErrorKind = "timeout" if "timed out" in str(exc).lower() else "error"
            raise ProviderError(f"{self.name}: {exc}", kind=api_kind) from exc
        except TimeoutError as exc:
            raise ProviderError(f"{self.name}: request timed out", kind="timeout") from exc
        text = "".join(
            str(getattr(part, "content", ""))
            for part in response.parts
            if getattr(part, "part_kind", "") == "text"
        ).strip()
        return Reply(
            text=text,
            provider=self.name,
            model=response.model_name or model_name,
            usage=Usage(
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                cost_usd=_cost(response),
            ),
            elapsed_ms=int((time.perf_counter() - started) * 1000),
        )


def to_model_messages(context: Context) -> list[ModelMessage]:
    """Turn Omega's context into pydantic-ai messages: system prompt first, then the turns."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        UserPromptPart,
    )

    messages: list[ModelMessage] = []
    pending: list[Any] = [SystemPromptPart(context.system_prompt)] if context.system_prompt else []
    for turn in context.messages:
        if turn.role == "assistant":
            if pending:
                messages.append(ModelRequest(parts=pending))
                pending = []
            messages.append(ModelResponse(parts=[TextPart(turn.content)]))
        elif turn.role == "system":
            pending.append(SystemPromptPart(turn.content))
        else:
            pending.append(UserPromptPart(turn.content))
    if pending:
        messages.append(ModelRequest(parts=pending))
    return messages


def _cost(response: Any) -> float | None:
    """The response's price in USD from genai-prices, or None when the model is not priced."""
    try:
        return float(response.cost().total_price)
    except Exception:  # unknown model or missing usage: cost stays unknown
        return None
