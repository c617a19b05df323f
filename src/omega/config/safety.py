"""Who may do what and how much: [auth], [sandbox], [tools] and [limits]."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from omega.config.base import Section, phone_digits


class AuthSection(Section):
    enabled: bool = True  # false: the allow-lists are not checked (anyone may talk)
    # What a sender who is not allowed is told (at most once per [limits] denial_every_secs).
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
    # Tools of a group room's turn, whoever speaks there (the owner too), in the room's own
    # folder (workspace/people/rooms/...).
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


class SandboxSection(Section):
    # sandbox: the system read-only, the workspace read-write; rx: read anywhere but Omega's
    # own files and credentials, write the workspace; rwx: unrestricted (warned).
    mode: Literal["sandbox", "rx", "rwx"] = "sandbox"
    # TCP ports commands may connect to in sandbox and rx (Landlock ABI 4+); [] allows none.
    # The port of a configured HTTP(S)_PROXY is added.
    tcp_ports: list[Annotated[int, Field(ge=1, le=65535)]] = Field(
        default_factory=lambda: [22, 53, 80, 443]
    )
    # Resource limits of every command the model runs (setrlimit; 0: no limit).
    max_cpu_secs: Annotated[int, Field(ge=0)] = 600  # CPU seconds per command
    max_memory_mb: Annotated[int, Field(ge=0)] = 8192  # address space per command, in MB
    max_processes: Annotated[int, Field(ge=0)] = 256  # processes, on top of the user's running ones
    max_file_size_mb: Annotated[int, Field(ge=0)] = 1024  # the largest file a command may write


class ToolsSection(Section):
    # fetch_url may reach loopback, private, link-local and cloud metadata addresses.
    allow_private_urls: bool = False


class LimitsSection(Section):
    """What one person, one message or one reply may cost (0: no limit where noted)."""

    # Input: longer messages are cut (the sender is told); bigger attachments are refused.
    max_message_chars: Annotated[int, Field(ge=100)] = 20_000
    # Bigger attachments are refused at arrival; the sender is told which file and its size.
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
    # Tool calls one model response may ask for at once; the rest are refused unrun (the model
    # is told). A round of 360 shell commands took 45 s and 30 s of CPU (bench/tool_round.py).
    max_tool_calls_per_round: Annotated[int, Field(ge=1)] = 16
    # Pending tasks one person may have; repeating action tasks run at most this often.
    max_tasks_per_person: Annotated[int, Field(ge=1)] = 50
    # An action task may schedule another only this far ahead.
    min_action_interval_secs: Annotated[int, Field(ge=60)] = 3600
    # The ceiling of provider calls in flight at once, all people together, per provider: the
    # limit starts here, halves when the provider answers 429/503/529 (waiting out its
    # retry-after) and grows back by one per window of answers up to this.
    # It is also the size of each API provider's connection pool (sockets open at most).
    max_concurrent_provider_calls: Annotated[int, Field(ge=1)] = 64
    # New limitations and owner alerts per hour; the rest are collapsed into one digest.
    max_limitations_per_hour: Annotated[int, Field(ge=1)] = 5
    # Limitations accepted from one person (not the owner) per day: new gaps and first
    # sightings of known ones together; the owner hears of them in the daily digest.
    max_limitations_per_person_per_day: Annotated[int, Field(ge=0)] = 3
    # Lesson proposals (SKILL_IMPROVE) accepted from one person (not the owner) per day, each
    # judged by the gate's model; the rest are refused unjudged (audited, the person told).
    max_lessons_per_person_per_day: Annotated[int, Field(ge=0)] = 5
    # Owner alerts per hour; the rest arrive as one digest when the hour allows (kept when the
    # owner cannot be reached).
    max_owner_alerts_per_hour: Annotated[int, Field(ge=1)] = 10
    # Messages Omega sends one person unasked per day of theirs (owner alerts, proposals,
    # heartbeat findings; never urgent ones or their own reminders); the rest wait for their
    # next morning's digest (gateway/notify.py). 0: no cap.
    max_unasked_per_day: Annotated[int, Field(ge=0)] = 30
    # A stranger's denial is answered and audited at most once per this many seconds.
    denial_every_secs: Annotated[int, Field(ge=60)] = 86_400
    # Pairing codes one channel gives strangers in a day (dm_policy = "pairing"), all strangers
    # together, on top of 3 per stranger and 3 waiting at a time; then requests are refused.
    max_pairing_codes_per_channel_per_day: Annotated[int, Field(ge=1)] = 10
    # What all provider calls together may cost per UTC day, in USD (0: no cap). Background work
    # (introspection, analysis, critic) stops first; replies to people stop last.
    daily_usd: Annotated[float, Field(ge=0)] = 0.0
    # What a call costs, in USD per million tokens (input and output alike), when the model is
    # not in the price table and the provider reports no cost: so the cap counts it. The default
    # is a frontier model's output price; 0 counts such calls as free (a server of your own).
    # The bundled local model and Ollama are always free.
    unknown_model_usd_per_mtok: Annotated[float, Field(ge=0)] = 15.0
