"""Configuration: TOML at $OMEGA_HOME/config.toml, overridden by OMEGA_<SECTION>__<KEY> env vars.

A broken config never produces a traceback: `load_config` raises `ConfigError`, whose message
names the file (or env var), the key and the problem.

The section models live beside this module, one module per area (providers, channels, service,
safety, evolution, quant); where the raw values come from (TOML, env, the original's keys) is
`sources`. `Config`, `load_config` and `ConfigError` are defined here.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from omega.config.base import Section
from omega.config.channels import ChannelSection, VoiceSection, WebSection
from omega.config.evolution import EvolutionSection, LoggingSection
from omega.config.providers import ProviderSection
from omega.config.quant import QuantSection
from omega.config.safety import AuthSection, LimitsSection, SandboxSection, ToolsSection
from omega.config.service import (
    HeartbeatSection,
    MemorySection,
    OmegaSection,
    SchedulerSection,
    ServiceSection,
    StoreSection,
)
from omega.config.sources import (
    apply_env_overrides,
    fill_secrets_from_env,
    norm_key,
    take_original_keys,
)
from omega.errors import OmegaError

__all__ = ["Config", "ConfigError", "load_config"]


class ConfigError(OmegaError):
    """A configuration problem, with a message fit to show the user as is."""


class Config(Section):
    """The whole configuration; every section has working defaults."""

    omega: OmegaSection = Field(default_factory=OmegaSection)
    service: ServiceSection = Field(default_factory=ServiceSection)
    voice: VoiceSection = Field(default_factory=VoiceSection)
    auth: AuthSection = Field(default_factory=AuthSection)
    provider: ProviderSection = Field(default_factory=ProviderSection)
    channel: ChannelSection = Field(default_factory=ChannelSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    store: StoreSection = Field(default_factory=StoreSection)
    scheduler: SchedulerSection = Field(default_factory=SchedulerSection)
    heartbeat: HeartbeatSection = Field(default_factory=HeartbeatSection)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    tools: ToolsSection = Field(default_factory=ToolsSection)
    limits: LimitsSection = Field(default_factory=LimitsSection)
    evolution: EvolutionSection = Field(default_factory=EvolutionSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)
    quant: QuantSection = Field(default_factory=QuantSection)
    web: WebSection = Field(default_factory=WebSection)


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
    import difflib  # only for a config with a mistake: not imported on every start

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
        source = origins.get(tuple(norm_key(p) for p in loc))
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
    found = take_original_keys(raw, config_path)
    if warnings is not None:
        warnings.extend(found)
    origins = apply_env_overrides(raw, env)
    fill_secrets_from_env(raw, env)
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, config_path, origins)) from None
