"""Start-up: $OMEGA_HOME, bundled files, config, logging and the pipeline deps built from them.

It imports nothing of the running service: `omega ask` needs only `bootstrap`."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from omega.config import Config, load_config
from omega.logs import register_secret, setup_logging
from omega.paths import OmegaPaths, default_home, touch_private
from omega.prompts import Prompts, deploy_bundled, load_prompts

if TYPE_CHECKING:
    from omega.memory import Store
    from omega.turn import PipelineDeps

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """What every command needs: paths, validated config and prompts."""

    paths: OmegaPaths
    config: Config
    prompts: Prompts
    deployed: list[Path] = field(default_factory=list)


def bootstrap(home: Path | None = None, stderr_level: str = "warning") -> Runtime:
    """Prepare $OMEGA_HOME and load everything; raises ConfigError on a broken config."""
    paths = OmegaPaths(home or default_home())
    paths.ensure()
    touch_private(paths.log)
    warnings: list[str] = []
    config = load_config(paths.config, warnings=warnings)
    for secret in _secret_values(config):
        register_secret(secret)
    setup_logging(paths.log, config.omega.log_level, stderr_level)
    for warning in warnings:
        log.warning("%s", warning)
    deployed = deploy_bundled(paths)
    if paths.config.exists():
        paths.config.chmod(0o600)
    for path in deployed:
        log.info("deployed bundled %s", path.name)
    return Runtime(paths=paths, config=config, prompts=load_prompts(paths), deployed=deployed)


def pipeline_deps(runtime: Runtime, store: Store, *, one_shot: bool = False) -> PipelineDeps:
    """Build the provider, catalogs and state the gateway's pipeline runs on (`one_shot`: a
    provider for one tool-less question, `omega ask`'s lean path)."""
    from omega.memory.artefacts import ArtefactStore
    from omega.providers import build_chain, chain_timeout, resolve_provider_name
    from omega.skills import ProjectCatalog
    from omega.skills.guarded import GuardedSkills, bundled_dir
    from omega.turn import PipelineDeps, RuntimeState

    name = resolve_provider_name(runtime.config)
    state = RuntimeState(heartbeat_interval=runtime.config.heartbeat.interval_minutes)
    ceiling = runtime.config.limits.max_concurrent_provider_calls
    provider = build_chain(
        name,
        runtime.config,
        runtime.paths,
        store,
        one_shot=one_shot,
        # A chain's members each go through their own limiter (probes too), by name.
        limiter_for=lambda member: state.provider_limiter(member, ceiling),
    )
    return PipelineDeps(
        config=runtime.config,
        prompts=runtime.prompts,
        store=store,
        provider=provider,
        provider_timeout=chain_timeout(name, runtime.config),
        paths=runtime.paths,
        # Bundled skills from the package, others only when pinned (no copies, no edits).
        skills=GuardedSkills(
            runtime.paths.skills, ArtefactStore(store, runtime.paths.home), bundled_dir()
        ),
        projects=ProjectCatalog(runtime.paths.projects),
        state=state,
    )


def _secret_values(config: Config) -> list[str]:
    p = config.provider
    keys = [
        p.anthropic.api_key,
        p.openai.api_key,
        p.openrouter.api_key,
        p.gemini.api_key,
        config.channel.telegram.bot_token,
        config.channel.telegram.whisper_api_key,
        config.channel.whatsapp.whisper_api_key,
        config.voice.api_key,
    ]
    values = [k.get_secret_value() for k in keys]
    # Credentials written into a provider's base_url (https://user:pass@host/v1).
    for section in (p.anthropic, p.openai, p.ollama, p.openrouter, p.gemini):
        try:
            parts = urlsplit(getattr(section, "base_url", "") or "")
        except ValueError:
            continue
        values += [parts.password or "", parts.username or ""]
    values += [
        os.environ.get(v, "")
        for v in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "OPENROUTER_API_KEY",
            "TELEGRAM_BOT_TOKEN",
        )
    ]
    return [v for v in values if v]
