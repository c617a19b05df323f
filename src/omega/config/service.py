"""Running the service: [omega], [service], [memory], [store], [scheduler] and [heartbeat]."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from omega.config.base import Section


class OmegaSection(Section):
    name: str = "Omega"  # the name Omega goes by
    # An IANA zone such as "Europe/Lisbon" for people with no timezone fact; empty: the system's.
    timezone: str = ""
    log_level: Literal["debug", "info", "warning", "error"] = "info"  # what omega.log records
    # The typing indicator is refreshed this often while a reply is prepared.
    typing_interval_secs: Annotated[float, Field(gt=0)] = 5.0
    # "Taking a moment..." when no answer came by then (at most a third of the provider's
    # timeout, so it comes before the timeout does).
    status_first_secs: Annotated[float, Field(gt=0)] = 15.0
    # "Still working..." every this long after that (at most a third of the provider's timeout).
    status_repeat_secs: Annotated[float, Field(gt=0)] = 120.0
    shutdown_grace_secs: Annotated[float, Field(gt=0)] = 30.0  # on SIGTERM, for in-flight replies
    # `omega chat --jsonl` at the end of its input waits for the answers still owed while they
    # come: once none was finished for this long, the rest stays in the inbox and it exits 3.
    # 0: three provider calls at their timeout and retry waits, plus a minute (13 min at 120 s).
    chat_stall_secs: Annotated[float, Field(ge=0)] = 0.0
    # Replicas sharing one database (issue 30): a claimed message is this replica's for this
    # long, renewed while its turn runs; a replica that dies leaves it to another after that.
    inbox_lease_secs: Annotated[float, Field(ge=1)] = 30.0
    # How often a replica looks for messages other replicas received (its own: at once).
    inbox_poll_secs: Annotated[float, Field(gt=0, le=60)] = 0.3


class ServiceSection(Section):
    """`omega start` as a service (issue 38)."""

    # A stop (SIGTERM, SIGINT) ends within this long whatever the provider does: the turns in
    # flight first, then the open conversations' summaries; what does not fit stays queued in
    # the store (an unanswered message in the inbox, an unsummarized conversation open for the
    # summarizer). The service manager's own stop timeout must be longer (TimeoutStopSec).
    stop_timeout_secs: Annotated[float, Field(ge=1, le=3600)] = 10.0


class MemorySection(Section):
    # Recent messages of the conversation a prompt carries (within [limits] max_history_chars).
    max_context_messages: Annotated[int, Field(ge=0, le=1000)] = 30
    # A conversation idle this long is summarized (its facts drawn out) and closed.
    idle_minutes: Annotated[float, Field(gt=0)] = 30
    # How often the summarizer looks for idle conversations.
    summarize_check_secs: Annotated[float, Field(gt=0)] = 60.0


class StoreSection(Section):
    """Where memory lives: '' is the SQLite file $OMEGA_HOME/memory.db; a
    `postgresql://user:password@host/db` URL puts it on PostgreSQL, shared by N replicas
    (OMEGA_STORE_URL, when set, beats this)."""

    # "": the SQLite file $OMEGA_HOME/memory.db; "postgresql://user:password@host/db": PostgreSQL
    # (the `postgresql` extra), which several replicas can share.
    url: str = ""

    @field_validator("url")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be empty (SQLite) or a postgresql:// URL")
        return value

    # Replicas sharing one database hold the once-across-the-fleet jobs and unshared channels
    # with leases this long: renewed every third of it, taken over when one is not renewed.
    lease_seconds: Annotated[float, Field(ge=1, le=3600)] = 15.0


class SchedulerSection(Section):
    enabled: bool = True  # reminders and scheduled actions fire
    # The scheduler sleeps until the next due task and wakes when one is added; this is only
    # the longest it sleeps without looking (a safety net for clock changes).
    poll_interval_secs: Annotated[int, Field(ge=1)] = 3600
    retry_base_secs: Annotated[float, Field(gt=0)] = 30.0  # failed sends back off from here
    # Retries of a failed send; then the task is marked failed (never "delivered").
    max_retries: Annotated[int, Field(ge=0)] = 8


class HeartbeatSection(Section):
    enabled: bool = False  # review HEARTBEAT.md's checklist every interval_minutes
    # Changed at run time by the HEARTBEAT_INTERVAL marker (kept in the store).
    interval_minutes: Annotated[int, Field(ge=1, le=1440)] = 30
    # "HH:MM": the heartbeat runs only inside this window (one past midnight wraps); empty:
    # always.
    active_start: str = ""
    active_end: str = ""  # the window's end, "HH:MM"
    # An owner address (with reply_target); alerts go wherever the owner can be reached.
    channel: str = ""
    reply_target: str = ""  # the owner's chat on that channel, e.g. your Telegram chat id
