"""Where the raw configuration comes from before it is validated: the original Omega's keys
that are dropped with a warning, OMEGA_<SECTION>__<KEY> env overrides, and the well-known env
vars that fill an empty api_key / token."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Well-known env vars that fill an empty api_key / token (section path -> env var).
SECRET_ENV_VARS: dict[tuple[str, ...], str] = {
    ("provider", "anthropic", "api_key"): "ANTHROPIC_API_KEY",
    ("provider", "openai", "api_key"): "OPENAI_API_KEY",
    ("provider", "gemini", "api_key"): "GEMINI_API_KEY",
    ("provider", "openrouter", "api_key"): "OPENROUTER_API_KEY",
    ("channel", "telegram", "bot_token"): "TELEGRAM_BOT_TOKEN",
}


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


def take_original_keys(raw: dict[str, Any], config_path: Path) -> list[str]:
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
                    p in ("*", norm_key(h)) for p, h in zip(pattern, here, strict=True)
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


def norm_key(key: str) -> str:
    """A key as compared: trimmed, lower case, `-` as `_`."""
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
        origins[tuple(norm_key(p) for p in path)] = var
    return origins


def _existing_key(node: dict[str, Any], part: str) -> str:
    """Match an env path segment to a key already in the TOML (`claude-code` ~ `CLAUDE_CODE`)."""
    wanted = norm_key(part)
    for key in node:
        if norm_key(key) == wanted:
            return key
    return wanted


def fill_secrets_from_env(raw: dict[str, Any], environ: Mapping[str, str]) -> None:
    """Fill an empty api_key / token from its well-known env var (ANTHROPIC_API_KEY, ...)."""
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
