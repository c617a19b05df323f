"""System prompt composition: the static prompt plus what this message's situation adds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from omega.prompts import Prompts

PLATFORM_HINTS = {
    "telegram": "Platform: Telegram. Markdown is supported (bold, italic, code blocks).",
    "whatsapp": "Platform: WhatsApp. Avoid Markdown tables and headers; use *bold* and bullets.",
    "terminal": "Platform: terminal. Plain text; no Markdown tables.",
    "web": "Platform: Omega's local web page. Markdown is supported.",
}

GROUP_RULES = (
    "This is a group chat. Reply only when you are addressed by name, asked a question, or can "
    "add real value. Never reveal facts from private conversations. If no reply is warranted, "
    "answer with exactly SILENT."
)

# What the OS sandbox enforces on every command you run (shell, MCP servers), stated plainly.
SANDBOX_RULES = {
    "sandbox": (
        "Sandbox (enforced by the operating system): your commands can read and run the "
        "system's programs, and read and write files only inside your workspace {workspace} "
        "(temporary files go to $TMPDIR inside it). The rest of the home folder, Omega's "
        "configuration, memory, skills and tools are out of reach, and network connections "
        "are limited to a few ports (web, ssh, dns)."
    ),
    "rx": (
        "Sandbox rx (enforced by the operating system): your commands can read almost "
        "anywhere, except Omega's own files and credential files, and write only inside "
        "your workspace {workspace} (temporary files go to $TMPDIR inside it)."
    ),
    "rwx": (
        "No sandbox: your commands run with the owner's full permissions. Work inside "
        "{workspace} unless asked otherwise, and never touch Omega's own files."
    ),
}

MARKER_GUIDE = """\
System markers (exact English prefix, each on its own line; the system acts on them and removes
them before the user sees your reply):
SCHEDULE: <what> | <YYYY-MM-DDTHH:MM> | <once|daily|weekly|monthly|weekdays>  (a reminder)
SCHEDULE_ACTION: <what to do> | <YYYY-MM-DDTHH:MM> | <repeat>  (you will run it yourself then)
CANCEL_TASK: <task id>
UPDATE_TASK: <task id> | <new what or empty> | <new time or empty> | <new repeat or empty>
PROJECT_ACTIVATE: <name>   PROJECT_DEACTIVATE
LANG_SWITCH: <language>  (when the person asks you to speak another language)
HEARTBEAT_ADD: <item>   HEARTBEAT_REMOVE: <item>   HEARTBEAT_INTERVAL: <minutes 1-1440>
SKILL_IMPROVE: <skill name> | <one-line lesson learned>
LIMITATION: <title> | <what you cannot do> | <proposed plan>  (when asked for something you
  cannot do yet; may follow your sentence on the same line)
SELF_HEAL: <anomaly or what you changed> | <how to verify>  (genuine bugs of your own
  infrastructure only)   SELF_HEAL_RESOLVED  (when the verification passes)
Times without a zone are in the person's timezone."""


@dataclass(frozen=True)
class PromptSituation:
    """What varies per message and shapes the system prompt."""

    channel: str
    is_group: bool = False
    project_name: str = ""
    project_instructions: str = ""
    personality: str = ""
    checklist: str | None = None
    sandbox_mode: str = "sandbox"
    workspace: str = ""
    skill_instructions: tuple[tuple[str, str], ...] = ()
    timezone: tzinfo | None = None
    extra: tuple[str, ...] = field(default=())


def compose_system_prompt(
    prompts: Prompts, situation: PromptSituation, now: datetime | None = None
) -> str:
    """Project role, identity + soul + system, then each situational section that applies."""
    parts: list[str] = []
    if situation.project_instructions:
        parts.append(
            f"Active project: {situation.project_name}\n{situation.project_instructions}\n---"
        )
    parts.append(prompts.base_system_prompt)
    if situation.personality:
        parts.append(f"The person asked you to be like this: {situation.personality}")
    hint = PLATFORM_HINTS.get(situation.channel)
    if hint:
        parts.append(hint)
    if situation.is_group:
        parts.append(GROUP_RULES)
    parts.append(MARKER_GUIDE)
    if situation.checklist:
        parts.append(f"Current heartbeat checklist (already monitored):\n{situation.checklist}")
    for name, body in situation.skill_instructions:
        parts.append(f"Skill '{name}' applies to this request:\n{body}")
    sandbox = SANDBOX_RULES.get(situation.sandbox_mode, "")
    if sandbox:
        parts.append(sandbox.format(workspace=situation.workspace))
    parts.extend(situation.extra)
    moment = now or datetime.now(situation.timezone).astimezone(situation.timezone)
    parts.append(f"Current time: {moment.strftime('%A %Y-%m-%d %H:%M %Z')}.")
    return "\n\n".join(part for part in parts if part)
