"""Start-up: $OMEGA_HOME, bundled files, config, logging and the pipeline deps built from them.

It imports nothing of the running service: `omega ask` needs only `bootstrap`."""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import BaseModel, SecretBytes, SecretStr

from omega.config import Config, load_config
from omega.logs import register_secret, setup_logging
from omega.paths import OmegaPaths, default_home, touch_private
from omega.prompts import Prompts, deploy_bundled, load_prompts

if TYPE_CHECKING:
    from omega.memory import Store
    from omega.turn import PipelineDeps

log = logging.getLogger(__name__)

# Environment variables that hold a login Omega or a library it runs reads (the config's own
# fallbacks, the claude CLI's logins, the channel plug-ins' tokens, the cloud logins the CLI is
# handed); any other *_KEY, *_TOKEN, *_SECRET or *_PASSWORD variable is taken for a secret too
# (`_SECRET_ENV`): these stay named so that narrowing that pattern cannot drop them.
SECRET_ENV_VARS = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "TELEGRAM_BOT_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
        "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
        "ANTHROPIC_AUTH_TOKEN",
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "DISCORD_BOT_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
    }
)
_SECRET_ENV = re.compile(r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
# Keys whose text is a secret wherever it is found: a raw table (a plug-in channel's section
# before its plug-in validated it), a URL's query.
_SECRET_KEY = re.compile(
    r"pass(?:word|wd)|secret|token|credential|api_?key|(?:^|[_-])key$", re.IGNORECASE
)
# Schemes whose URLs carry a token as the user name alone (https://TOKEN@host); elsewhere
# (postgresql://postgres@host) the user name is a name.
_TOKEN_AS_USER_SCHEMES = frozenset({"http", "https", "ws", "wss"})
_MAX_DEPTH = 32


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
    from omega.providers.fallback import FallbackProvider
    from omega.skills import ProjectCatalog
    from omega.skills.guarded import GuardedSkills, bundled_dir
    from omega.turn import PipelineDeps, RuntimeState, ask_probe

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
    deps = PipelineDeps(
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
    if isinstance(provider, FallbackProvider):  # its probes are paid calls: within the cap
        provider.probe_via = functools.partial(ask_probe, deps)
    return deps


def _secret_values(config: Config, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret the configuration and the environment hold, for the log redactor: each
    `SecretStr` of the whole config (nested sections, lists, tables, plug-in channels' sections,
    raw or validated), text under a secret-looking key, credentials written into any URL (a
    provider's or [voice] base_url, the store's), and the secret-looking environment variables
    Omega and the libraries it runs read (CLAUDE_CODE_OAUTH_TOKEN, SLACK_BOT_TOKEN, ...)."""
    env = os.environ if environ is None else environ
    values: list[str] = []
    _walk(config, "", values, 0)
    for name, value in env.items():
        if name in SECRET_ENV_VARS or _SECRET_ENV.search(name):
            values.append(value)
        values += _url_credentials(value)
    for url in (env.get("OMEGA_STORE_URL", ""), config.store.url):
        if url.strip():
            from omega.memory.db import location_passwords

            values += location_passwords(url)
    found: list[str] = []
    for value in values:
        found += [value, value.strip()]
    return [v for v in dict.fromkeys(found) if v]


def _walk(node: object, key: str, out: list[str], depth: int) -> None:
    """Collect the secrets under `node` (reached by `key`) into `out`."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, SecretStr | SecretBytes):
        secret = node.get_secret_value()
        out.append(secret.decode(errors="replace") if isinstance(secret, bytes) else secret)
    elif isinstance(node, BaseModel):
        for name in type(node).model_fields:
            _walk(getattr(node, name, None), name, out, depth + 1)
        for name, value in (node.model_extra or {}).items():
            _walk(value, str(name), out, depth + 1)
    elif isinstance(node, Mapping):
        for name, value in node.items():
            _walk(value, str(name), out, depth + 1)
    elif isinstance(node, list | tuple | set | frozenset):
        for item in node:
            _walk(item, key, out, depth + 1)
    elif isinstance(node, str):
        if _SECRET_KEY.search(key):
            out.append(node)
        out += _url_credentials(node)


def _url_credentials(text: str) -> list[str]:
    """The credentials a URL carries: its password (`user:pw@`), its user name when that is
    the whole credential (`https://token@host`), and secret-looking query parameters."""
    if "://" not in text:
        return []
    try:
        parts = urlsplit(text.strip())
        query = parse_qsl(parts.query, keep_blank_values=True)
        password, username = parts.password or "", parts.username or ""
    except ValueError:
        return []
    found = [password, unquote(password)]
    if username and not password and parts.scheme.lower() in _TOKEN_AS_USER_SCHEMES:
        found += [username, unquote(username)]
    found += [value for name, value in query if _SECRET_KEY.search(name)]
    return found
