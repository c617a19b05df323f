"""`omega init`: the answers of the set-up wizard, written into config.toml.

The file is edited, not replaced: it is parsed with tomlkit, only the keys the wizard asks
about are set, and comments, ordering and every other key survive. The result is validated
as Omega would load it before it replaces the old file (atomically, 0600).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from omega.config import Config, load_config
from omega.config.providers import PROVIDER_NAMES
from omega.errors import OmegaError
from omega.paths import PRIVATE_FILE_MODE, OmegaPaths

# Where each provider's key comes from when it is not typed in.
KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}
NEEDS_KEY = frozenset({"anthropic", "gemini", "openrouter"})  # openai: only at api.openai.com
CHECK_TIMEOUT = 60.0


class SetupError(OmegaError):
    """An answer cannot be used; the message says why and what to do."""


@dataclass
class Answers:
    """What the wizard asks; None means "not asked: keep what the config has"."""

    provider: str | None = None
    api_key: str | None = None
    model: str | None = None
    base_url: str | None = None
    telegram_token: str | None = None
    telegram_owner: str | None = None
    telegram: bool | None = None
    whatsapp: bool | None = None
    voice_base_url: str | None = None
    voice_api_key: str | None = None
    voice_model: str | None = None
    sandbox: str | None = None
    heartbeat: bool | None = None
    heartbeat_minutes: int | None = None
    web: bool | None = None
    # Channel plug-ins' sections, as asked by omega.cli.setup_channels or given as flags:
    # name -> {key: value}; and the "channel:id" addresses made owners on the way.
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    owners: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Detected:
    """What is already on this machine: the claude CLI and API keys in the environment."""

    claude: str | None
    keys: dict[str, str] = field(default_factory=dict)  # provider -> env var holding a key

    def suggested_provider(self) -> str:
        """The provider Omega would pick with no config: claude, then a key, then local."""
        if self.claude:
            return "claude-code"
        for name in ("anthropic", "openai", "gemini", "openrouter"):
            if name in self.keys:
                return name
        return "local"


# How each package manager installs bubblewrap (the sandbox's namespace wall on Linux).
_BWRAP_INSTALL = (
    ("apt-get", ["apt-get", "install", "-y", "bubblewrap"]),
    ("dnf", ["dnf", "install", "-y", "bubblewrap"]),
    ("yum", ["yum", "install", "-y", "bubblewrap"]),
    ("zypper", ["zypper", "--non-interactive", "install", "bubblewrap"]),
    ("pacman", ["pacman", "-S", "--noconfirm", "bubblewrap"]),
    ("apk", ["apk", "add", "bubblewrap"]),
)


def bubblewrap_install(
    which: Callable[[str], str | None] = shutil.which, platform: str = sys.platform
) -> list[str] | None:
    """The command installing bubblewrap with this system's package manager; None when it is
    installed, not Linux, or no known package manager is found."""
    if not platform.startswith("linux") or which("bwrap"):
        return None
    for manager, command in _BWRAP_INSTALL:
        if which(manager):
            return list(command)
    return None


def detect(environ: Mapping[str, str] | None = None) -> Detected:
    """Look for `claude` on PATH and provider keys in the environment."""
    env = os.environ if environ is None else environ
    keys = {name: var for name, var in KEY_ENV.items() if env.get(var, "").strip()}
    return Detected(claude=shutil.which("claude"), keys=keys)


def read_document(path: Path) -> TOMLDocument:
    """The existing config as an editable document (empty when there is none)."""
    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:  # tomlkit raises its own ParseError family
        raise SetupError(
            f"{path}: not valid TOML ({exc}); fix or move it, then run again"
        ) from None


def _table(doc: TOMLDocument | Table, *keys: str) -> Table:
    node: Any = doc
    for key in keys:
        if key not in node:
            node.add(key, tomlkit.table())
        node = node[key]
        if not isinstance(node, Table):
            raise SetupError(f"config.toml: '{'.'.join(keys)}' is not a table")
    return node  # type: ignore[no-any-return]


def _set(doc: TOMLDocument, keys: tuple[str, ...], value: Any) -> None:
    if value is None:
        return
    _table(doc, *keys[:-1])[keys[-1]] = value


def current(doc: TOMLDocument, *keys: str) -> Any:
    """A value of the document (None when absent)."""
    node: Any = doc
    for key in keys:
        if not hasattr(node, "get") or key not in node:
            return None
        node = node[key]
    return node.unwrap() if hasattr(node, "unwrap") else node


def apply(doc: TOMLDocument, answers: Answers) -> None:
    """Write the answers into the document; keys not answered are left as they are."""
    if answers.provider is not None:
        if answers.provider not in PROVIDER_NAMES:
            raise SetupError(
                f"unknown provider {answers.provider!r}; one of: {', '.join(PROVIDER_NAMES)}"
            )
        _set(doc, ("provider", "default"), answers.provider)
        section = ("provider", answers.provider)
        if answers.provider != "local":
            _set(doc, (*section, "model"), answers.model or None)
        if answers.provider not in ("claude-code", "local"):
            _set(doc, (*section, "api_key"), answers.api_key or None)
            _set(doc, (*section, "base_url"), answers.base_url or None)
    telegram = ("channel", "telegram")
    if answers.telegram_token:
        _set(doc, (*telegram, "bot_token"), answers.telegram_token)
        if answers.telegram is None:
            answers.telegram = True
    _set(doc, (*telegram, "enabled"), answers.telegram)
    if answers.telegram_owner:
        owner = answers.telegram_owner.strip()
        if not owner.lstrip("-").isdecimal():
            raise SetupError(f"the Telegram owner id must be a number, not {owner!r}")
        allowed = list(current(doc, *telegram, "allowed_users") or [])
        if int(owner) not in allowed:
            _set(doc, (*telegram, "allowed_users"), [*allowed, int(owner)])
        owners = list(current(doc, "auth", "owners") or [])
        if f"telegram:{owner}" not in owners:
            _set(doc, ("auth", "owners"), [*owners, f"telegram:{owner}"])
        if answers.heartbeat and not current(doc, "heartbeat", "channel"):
            _set(doc, ("heartbeat", "channel"), "telegram")
            _set(doc, ("heartbeat", "reply_target"), owner)
    _set(doc, ("channel", "whatsapp", "enabled"), answers.whatsapp)
    for name, values in answers.channels.items():
        for key, value in values.items():
            _set(doc, ("channel", name, key), value)
    for address in answers.owners:
        owners = list(current(doc, "auth", "owners") or [])
        if address not in owners:
            _set(doc, ("auth", "owners"), [*owners, address])
    if answers.voice_base_url or answers.voice_api_key or answers.voice_model:
        # An empty base_url turns transcription off; a key alone means OpenAI's endpoint.
        base_url = answers.voice_base_url or current(doc, "voice", "base_url")
        _set(doc, ("voice", "base_url"), base_url or "https://api.openai.com/v1")
        _set(doc, ("voice", "api_key"), answers.voice_api_key or None)
        _set(doc, ("voice", "model"), answers.voice_model or None)
    _set(doc, ("sandbox", "mode"), answers.sandbox)
    _set(doc, ("heartbeat", "enabled"), answers.heartbeat)
    _set(doc, ("heartbeat", "interval_minutes"), answers.heartbeat_minutes)
    _set(doc, ("web", "enabled"), answers.web)


def validate(doc: TOMLDocument, folder: Path) -> Config:
    """Load the document exactly as Omega will (env overrides included); ConfigError if bad."""
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        path = Path(scratch) / "config.toml"
        path.write_text(tomlkit.dumps(doc), encoding="utf-8")
        return load_config(path)


def write_config(path: Path, doc: TOMLDocument) -> None:
    """Replace config.toml atomically with an owner-only file."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(tomlkit.dumps(doc))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def try_provider(config: Config, paths: OmegaPaths) -> tuple[bool, str]:
    """Ask the configured provider one tiny question: (worked, its answer or the error)."""
    from omega.providers import ProviderError, build_provider, resolve_provider_name
    from omega.types import ChatMessage, Context

    name = resolve_provider_name(config)
    provider = build_provider(name, config, paths)
    ok, reason = provider.availability()
    if not ok:
        return False, reason
    context = Context(
        system_prompt="You are being tested during set-up. Reply with the single word OK.",
        messages=[ChatMessage(role="user", content="Say OK.")],
        max_tokens=16,
        use_tools=False,
    )

    async def one() -> str:
        await provider.prepare()
        reply = await asyncio.wait_for(provider.complete(context), CHECK_TIMEOUT)
        return reply.text

    try:
        text = asyncio.run(one())
    except TimeoutError:
        return False, f"{name} gave no answer within {CHECK_TIMEOUT:g}s"
    except ProviderError as exc:
        return False, exc.hint or str(exc)
    except Exception as exc:
        return False, f"{name} failed: {exc}"
    return True, text.strip()[:80]


def check_telegram_token(api_url: str, token: str) -> tuple[bool, str]:
    """Validate a bot token with getMe at `api_url`: (valid, the bot's @name or the error)."""
    import httpx

    base = api_url.rstrip("/")
    try:
        response = httpx.get(f"{base}/bot{token}/getMe", timeout=10.0)
        data = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        return False, f"Telegram did not answer ({type(exc).__name__})"
    if not data.get("ok"):
        return (
            False,
            f"Telegram refused the token ({data.get('description', response.status_code)})",
        )
    return True, "@" + str(data.get("result", {}).get("username", "?"))


__all__ = [
    "Answers",
    "Detected",
    "SetupError",
    "apply",
    "check_telegram_token",
    "current",
    "detect",
    "read_document",
    "try_provider",
    "validate",
    "write_config",
]
