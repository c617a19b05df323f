"""AI providers behind one protocol, and the factory that picks and builds one."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING

from omega.config import Config
from omega.config.providers import ApiProviderConfig
from omega.paths import OmegaPaths
from omega.providers.base import Provider, ProviderError

if TYPE_CHECKING:
    from omega.memory.store import Store
    from omega.providers.limiter import LimiterFor

log = logging.getLogger(__name__)

__all__ = [
    "Provider",
    "ProviderError",
    "build_chain",
    "build_provider",
    "chain_names",
    "chain_timeout",
    "provider_timeout",
    "resolve_provider_name",
]

# Order of preference for an API key found in the environment (auto-selection).
_ENV_KEY_PROVIDERS = (
    ("ANTHROPIC_API_KEY", "anthropic"),
    ("OPENAI_API_KEY", "openai"),
    ("GEMINI_API_KEY", "gemini"),
    ("OPENROUTER_API_KEY", "openrouter"),
)


def resolve_provider_name(config: Config, environ: Mapping[str, str] | None = None) -> str:
    """The configured provider, or with `auto`: claude CLI on PATH, else an env API key,
    else the bundled local model."""
    if config.provider.default != "auto":
        return config.provider.default
    env = os.environ if environ is None else environ
    if shutil.which("claude", path=env.get("PATH")):
        return "claude-code"
    for var, name in _ENV_KEY_PROVIDERS:
        if env.get(var, "").strip():
            return name
    return "local"


def build_provider(
    name: str,
    config: Config,
    paths: OmegaPaths,
    store: Store | None = None,
    *,
    one_shot: bool = False,
) -> Provider:
    """Construct the named provider from its config section (imports only what it needs);
    API providers get the built-in tools (`store` adds memory search). `one_shot` (a single
    tool-less question, `omega ask`) takes the lean path for OpenAI-compatible servers."""
    p = config.provider
    if name == "local":
        from omega.providers.local import LocalProvider

        return LocalProvider(p.local)
    if one_shot and name in ("openai", "ollama", "openrouter"):
        from omega.providers.lean import LeanChatProvider
        from omega.providers.price_memo import PriceMemo

        lean = {"openai": p.openai, "ollama": p.ollama, "openrouter": p.openrouter}[name]
        return LeanChatProvider(
            name,
            lean.model,
            lean.api_key.get_secret_value(),
            lean.base_url,
            timeout_secs=p.timeout_secs,
            memo=PriceMemo(paths.price_memo),
        )
    from omega.sandbox import Sandbox  # not on the lean path (issue 40)

    # Every process started for the model (shell, `claude`, MCP servers) runs under it.
    sandbox = Sandbox(config.sandbox, paths)
    if name == "claude-code":
        from omega.providers.claude.code import ClaudeCodeProvider

        return ClaudeCodeProvider(p.claude_code, paths.workspace, sandbox=sandbox)
    from omega.providers.api import ApiProvider, ApiSettings
    from omega.providers.price_memo import PriceMemo
    from omega.tools import builtin_registry

    sections: dict[str, ApiProviderConfig] = {
        "openai": p.openai,
        "ollama": p.ollama,
        "openrouter": p.openrouter,
        "anthropic": p.anthropic,
        "gemini": p.gemini,
    }
    section = sections.get(name)
    if section is None:
        raise ProviderError(f"unknown provider {name!r}", kind="unavailable")
    tools = builtin_registry(
        paths.workspace, store, sandbox=sandbox, allow_private_urls=config.tools.allow_private_urls
    )
    if store is not None:
        from omega.tools.human import load_human_tools

        # Human-implemented tools in $OMEGA_HOME/tools/, only those pinned by content hash.
        for tool_name, function in load_human_tools(store, paths.home, paths.tools).items():
            try:
                tools.add(function, name=tool_name)
            except ValueError as exc:
                log.warning("human tool %s not registered: %s", tool_name, exc)
    return ApiProvider(
        ApiSettings(
            name=name,
            model=section.model,
            api_key=section.api_key.get_secret_value(),
            base_url=section.base_url,
            model_complex=section.model_complex,
            timeout_secs=p.timeout_secs,
            vision=section.vision,
            max_connections=config.limits.max_concurrent_provider_calls,
            max_tool_calls_per_round=config.limits.max_tool_calls_per_round,
        ),
        tools=tools,
        sandbox=sandbox,
        memo=PriceMemo(paths.price_memo) if name in ("openai", "ollama", "openrouter") else None,
    )


def chain_names(name: str, config: Config) -> list[str]:
    """The provider `name` followed by the configured fallbacks, each once, in order."""
    return list(dict.fromkeys([name, *config.provider.fallback]))


def build_chain(
    name: str,
    config: Config,
    paths: OmegaPaths,
    store: Store | None = None,
    *,
    one_shot: bool = False,
    limiter_for: LimiterFor | None = None,
) -> Provider:
    """The named provider, wrapped with `[provider] fallback` in a FallbackProvider when set;
    `limiter_for` gives each member of such a chain its own limiter (calls and probes)."""
    names = chain_names(name, config)
    if len(names) == 1:
        return build_provider(name, config, paths, store, one_shot=one_shot)
    from omega.providers.fallback import FallbackProvider

    return FallbackProvider(
        [build_provider(n, config, paths, store, one_shot=one_shot) for n in names],
        timeouts=[provider_timeout(n, config) for n in names],
        breaker_secs=config.provider.breaker_secs,
        limiter_for=limiter_for,
    )


def chain_timeout(name: str, config: Config) -> float:
    """How long one answer from the chain may take: each member may use its full timeout."""
    return sum(provider_timeout(n, config) for n in chain_names(name, config))


def provider_timeout(name: str, config: Config) -> float:
    """How long the gateway waits for one answer from this provider."""
    if name == "claude-code":
        return float(config.provider.claude_code.timeout_secs) + 5.0
    return config.provider.timeout_secs
