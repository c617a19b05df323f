"""The $OMEGA_HOME layout: the one place that knows file and folder names."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
OWNER_BITS = 0o700


def private_mode(st_mode: int) -> int:
    """The owner-only mode for what `st_mode` describes: 0700 for a folder, else 0600."""
    return PRIVATE_DIR_MODE if stat.S_ISDIR(st_mode) else PRIVATE_FILE_MODE


def default_home() -> Path:
    """Return $OMEGA_HOME, or ~/.omega when it is not set."""
    env = os.environ.get("OMEGA_HOME", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".omega"


@dataclass(frozen=True)
class OmegaPaths:
    """Every durable location under one home directory."""

    home: Path

    @property
    def config(self) -> Path:
        return self.home / "config.toml"

    @property
    def db(self) -> Path:
        return self.home / "memory.db"

    @property
    def log(self) -> Path:
        return self.home / "omega.log"

    @property
    def system_prompt(self) -> Path:
        return self.home / "SYSTEM_PROMPT.md"

    @property
    def welcome(self) -> Path:
        return self.home / "WELCOME.toml"

    @property
    def heartbeat(self) -> Path:
        return self.home / "HEARTBEAT.md"

    @property
    def self_healing(self) -> Path:
        return self.home / "self-healing.json"

    @property
    def workspace(self) -> Path:
        return self.home / "workspace"

    @property
    def inbox(self) -> Path:
        return self.workspace / "inbox"

    @property
    def skills(self) -> Path:
        return self.home / "skills"

    @property
    def projects(self) -> Path:
        return self.home / "projects"

    @property
    def tools(self) -> Path:
        return self.home / "tools"

    @property
    def scaffolds(self) -> Path:
        return self.home / "scaffolds"

    @property
    def downloads(self) -> Path:
        """Where the terminal keeps images Omega sent, for the person to open."""
        return self.home / "downloads"

    @property
    def sandbox_alerted(self) -> Path:
        """The degraded-sandbox status the owner was last alerted about."""
        return self.home / "sandbox-alerted"

    @property
    def backup_places(self) -> Path:
        """The folders `omega backup` wrote into, one per line (the sandbox closes them)."""
        return self.home / "backup-places"

    def channel_health(self, name: str) -> Path:
        """What a running channel last reported about itself (account, polling), for status."""
        return self.home / f"{name}.health.json"

    @property
    def price_memo(self) -> Path:
        """List prices `omega ask` looked up before (omega.providers.price_memo), a cache."""
        return self.home / "prices-memo.json"

    @property
    def web_url(self) -> Path:
        """The local page's address with a one-time login token (0600)."""
        return self.home / "web.url"

    @property
    def web_media(self) -> Path:
        """Images Omega sent to the web page, served back to it."""
        return self.home / "web-media"

    @property
    def whatsapp(self) -> Path:
        """The WhatsApp session (whatsmeow's device store) and the pairing QR; 0700."""
        return self.home / "whatsapp_session"

    def ensure(self) -> None:
        """Create the home and its folders (owner-only), idempotently."""
        for folder in (
            self.home,
            self.workspace,
            self.inbox,
            self.skills,
            self.projects,
            self.tools,
            self.scaffolds,
        ):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.home, PRIVATE_DIR_MODE)


def write_private(path: Path, text: str) -> None:
    """Write text to a file readable only by its owner (0600), creating it if needed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, PRIVATE_FILE_MODE)


def touch_private(path: Path) -> None:
    """Make sure a file exists with owner-only permissions."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE_MODE)
    os.close(fd)
    os.chmod(path, PRIVATE_FILE_MODE)
