"""The chat commands' table: each command's usage and help line, and the names parsed.

A leaf: the gateway answers these commands (gateway/commands.py) and a channel may show them
(Telegram's command menu) without either importing the other."""

from __future__ import annotations

# usage -> what it does, in the order /help lists them
HELP: dict[str, str] = {
    "help": "this list",
    "status": "uptime, provider, sandbox, database (owner only)",
    "uptime": "how long I have been running",
    "memory": "what I remember about you",
    "history": "summaries of our last conversations",
    "facts": "the facts I know about you",
    "forget": "close this conversation and start fresh",
    "tasks": "your pending reminders and actions",
    "cancel <id>": "cancel a task by its id (or the start of it)",
    "rerun <id>": "run one of your scheduled actions again now (one that may not have run)",
    "language [name]": "show or set my language (/lang too)",
    "personality [text|reset]": "show, set or reset how I talk to you",
    "quiet [HH:MM-HH:MM|off]": (
        "show, set or end your quiet hours: only urgent alerts and your own reminders then; "
        "the rest comes in one digest when they end"
    ),
    "purge": "forget every fact about you",
    "skills": "installed skills",
    "projects": "projects, the active one marked",
    "project [name|off]": "show, activate or deactivate a project",
    "limitations": "what I know I cannot do yet (owner only)",
    "resolve <id>": "mark a limitation resolved (owner only)",
    "merge <id> <into>": "merge a limitation into the one it repeats (owner only)",
    "proposals [id]": "proposals; with an id, everything approving it would load (owner only)",
    "approve <id> [sha256] [notes]": (
        "approve a proposal; one that pins a tool file needs the sha256 /proposals <id> "
        "showed (owner only)"
    ),
    "reject <id> <reason>": "reject a proposal (owner only)",
    "fragments [id|deactivate <id>|reactivate <id>]": (
        "prompt fragments promoted from reviews: list, show, switch off or on (owner only)"
    ),
    "confirm <code>": (
        "do what I refused after reading others' text, exactly as my alert quoted it (owner only)"
    ),
    "selfheal [clear]": "self-healing state; clear an escalation (owner only)",
    "whatsapp [phone]": "pair WhatsApp by QR code, or by a code for that phone (owner only)",
    "pending": "strangers waiting to be approved (owner only)",
    "approve_person <code>": "let in the stranger who was given this code (owner only)",
    "deny_person <code>": "turn away the stranger who was given this code (owner only)",
    "quant [enable|disable|symbol S|portfolio N|paper|live|status]": (
        "advisory trading signals and the guarded executor (owner only)"
    ),
}
# the names a message may start with (/lang is /language)
NAMES: frozenset[str] = frozenset(key.split()[0] for key in HELP) | {"lang"}
