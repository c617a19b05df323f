"""The pydantic-ai model object of each API provider (providers.api): OpenAI-compatible servers
(openai, ollama, openrouter), Anthropic and Gemini, each on the provider's one connection pool
and with the SDK's own retries off (Omega's limiter and fallback decide, issue 38). pydantic-ai
and the SDKs are imported only here and only when a model is first built. The base install has
OpenAI's SDK only; Anthropic's and Google's are extras (issue 41), named when missing."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omega.providers.base import ProviderError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

OPENAI_COMPATIBLE = ("openai", "ollama", "openrouter")
# The providers whose SDK is an extra of the omega-agent package: (its module, the extra).
SDK_EXTRAS = {"anthropic": ("anthropic", "anthropic"), "gemini": ("google.genai", "gemini")}


def missing_sdk(name: str) -> str:
    """What to install when provider `name`'s SDK is not installed; empty when it is (or the
    provider needs none beyond the base install)."""
    if name not in SDK_EXTRAS:
        return ""
    module, extra = SDK_EXTRAS[name]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # its parent package is missing, or a stub
        found = False
    return "" if found else f"the {name} provider needs its SDK: pip install 'omega-agent[{extra}]'"


@dataclass(frozen=True)
class Endpoint:
    """Where a provider's models are reached (the fields of providers.api.ApiSettings)."""

    name: str
    api_key: str
    base_url: str
    max_retries: int


def build_model(endpoint: Endpoint, model_name: str, http_client: Callable[[], Any]) -> Model:
    """The pydantic-ai model `model_name` of the provider `endpoint` names, its requests going
    through `http_client()` (the provider's shared pool); ProviderError for an unknown one."""
    s = endpoint
    if hint := missing_sdk(s.name):
        raise ProviderError(hint, kind="unavailable", hint=hint)
    if s.name in OPENAI_COMPATIBLE:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        from omega.providers import openai_fast

        openai_fast.install()  # requests of plain JSON skip the SDK's per-message walk
        provider = OpenAIProvider(
            base_url=s.base_url or None,
            api_key=s.api_key or "none",
            http_client=http_client(),
        )
        provider.client.max_retries = s.max_retries  # the SDK's own retries (none)
        return OpenAIChatModel(model_name, provider=provider)
    if s.name == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        anthropic = AnthropicProvider(
            api_key=s.api_key, base_url=s.base_url or None, http_client=http_client()
        )
        anthropic.client.max_retries = s.max_retries  # the SDK's own retries (none)
        return AnthropicModel(model_name, provider=anthropic)
    if s.name == "gemini":
        from google.genai.types import HttpRetryOptions
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(
            model_name,
            provider=GoogleProvider(
                api_key=s.api_key,
                base_url=s.base_url or None,
                http_client=http_client(),
                # attempts counts the first one: the SDK's own retries (none)
                retry_options=HttpRetryOptions(attempts=1 + s.max_retries),
            ),
        )
    raise ProviderError(f"unknown API provider {s.name!r}", kind="unavailable")
