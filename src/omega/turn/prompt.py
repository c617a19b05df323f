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
    # The platform line of a channel plug-in (ChannelPlugin.platform_hint); "" for the
    # built-in channels, whose lines are PLATFORM_HINTS.
    platform_hint: str = ""


@dataclass(frozen=True)
class PromptParts:
    """The system prompt in two pieces: `stable`, byte-identical on every turn of a person while
    their project, personality, platform and sandbox stay the same (a prefix providers can
    cache), then `per_turn`: what this message adds (checklist, skills, signals, the time)."""

    stable: str
    per_turn: str

    @property
    def text(self) -> str:
        """The whole system prompt, the stable prefix first."""
        return "\n\n".join(part for part in (self.stable, self.per_turn) if part)


def compose_prompt_parts(
    prompts: Prompts, situation: PromptSituation, now: datetime | None = None
) -> PromptParts:
    """Project role, identity + soul + system, the person's standing sections, then what this
    turn adds, in a fixed order with everything that changes per turn last."""
    stable: list[str] = []
    if situation.project_instructions:
        stable.append(
            f"Active project: {situation.project_name}\n{situation.project_instructions}\n---"
        )
    stable.append(prompts.base_system_prompt)
    if situation.personality:
        stable.append(f"The person asked you to be like this: {situation.personality}")
    hint = situation.platform_hint or PLATFORM_HINTS.get(situation.channel)
    if hint:
        stable.append(hint)
    if situation.is_group:
        stable.append(GROUP_RULES)
    stable.append(MARKER_GUIDE)
    sandbox = SANDBOX_RULES.get(situation.sandbox_mode, "")
    if sandbox:
        stable.append(sandbox.format(workspace=situation.workspace))
    turn: list[str] = []
    if situation.checklist:
        turn.append(f"Current heartbeat checklist (already monitored):\n{situation.checklist}")
    for name, body in situation.skill_instructions:
        turn.append(f"Skill '{name}' applies to this request:\n{body}")
    turn.extend(situation.extra)
    moment = now or datetime.now(situation.timezone).astimezone(situation.timezone)
    turn.append(f"Current time: {moment.strftime('%A %Y-%m-%d %H:%M %Z')}.")
    return PromptParts(
        "\n\n".join(part for part in stable if part), "\n\n".join(part for part in turn if part)
    )


def compose_system_prompt(
    prompts: Prompts, situation: PromptSituation, now: datetime | None = None
) -> str:
    """The whole system prompt: the stable prefix, then what this turn adds."""
    return compose_prompt_parts(prompts, situation, now).text
