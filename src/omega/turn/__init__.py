"""The turn machinery: one message through the provider (who is asking and with which rights,
the prompt, the one way to ask the provider, what markers act against), shared by the gateway,
the loops and evolution. It imports none of them.

This module is the package's public face: callers outside `omega.turn` import from here.
- deps: PipelineDeps, Outbox, Responder, Turn (what the stages share)
- records: db_call, record_audit, audit_message, usage_fields, elapsed_ms (store calls that
  never stop a reply, and the audit's one vocabulary)
- ask: ask_provider, models_for (the one way to ask the provider), ask_probe (a fallback
  member's probe, within the cap)
- spend: the daily spending cap (BACKGROUND_SHARE: where background work stops; admit_usd:
  a call priced in dollars, a voice note's transcription)
- load: load_turn, load_granted_turn, make_turn, person_workspace (who is answered, their
  folder)
- auth, privileges: who may talk, and with which rights
- folders: people's folders named the old way renamed at start
- prompt: the system prompt of a turn
- effects: what marker effects act against (MarkerContext, marker_context)
- state: run-time state shared by the gateway and the loops

Names are loaded on first use, so a command that needs one (`omega ask` needs the prompt)
does not import the whole turn machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.turn.ask import ask_probe, ask_provider, models_for
    from omega.turn.auth import (
        ChannelPolicy,
        allowed_users,
        check_auth,
        dm_policies,
        dm_policy,
        granted_role,
        is_owner,
        local_owner_id,
        stored_owner,
        tells_strangers,
    )
    from omega.turn.deps import Outbox, PipelineDeps, Responder, Turn
    from omega.turn.effects import (
        ATTACHMENT_NOTE,
        OWN_TEXT_TOOLS,
        ROOM_WORDS,
        MarkerContext,
        MarkerOutcome,
        Notify,
        audit_change,
        conversation_reads,
        earlier_reads,
        external_reads,
        marker_context,
        owner_message,
        reads_in,
        rooms_in,
    )
    from omega.turn.folders import FolderMigration, migrate_person_folders
    from omega.turn.load import load_granted_turn, load_turn, make_turn, person_workspace
    from omega.turn.privileges import (
        OWNER_COMMANDS,
        Role,
        allowed_tools,
        as_role,
        at_least,
        creator_role,
        lowest,
        may_edit_task,
        may_run_command,
        may_use_marker,
        person_folder,
        role_of,
        sender_role,
        workspace_for,
    )
    from omega.turn.prompt import (
        GROUP_RULES,
        PromptParts,
        PromptSituation,
        compose_prompt_parts,
        compose_system_prompt,
        origin_label,
    )
    from omega.turn.records import (
        UsageFields,
        audit_message,
        db_call,
        elapsed_ms,
        message_entry,
        record_audit,
        usage_fields,
    )
    from omega.turn.spend import BACKGROUND_SHARE, admit_usd
    from omega.turn.state import RuntimeState

__all__ = [
    "ATTACHMENT_NOTE",
    "BACKGROUND_SHARE",
    "GROUP_RULES",
    "OWNER_COMMANDS",
    "OWN_TEXT_TOOLS",
    "ROOM_WORDS",
    "ChannelPolicy",
    "FolderMigration",
    "MarkerContext",
    "MarkerOutcome",
    "Notify",
    "Outbox",
    "PipelineDeps",
    "PromptParts",
    "PromptSituation",
    "Responder",
    "Role",
    "RuntimeState",
    "Turn",
    "UsageFields",
    "admit_usd",
    "allowed_tools",
    "allowed_users",
    "as_role",
    "ask_probe",
    "ask_provider",
    "at_least",
    "audit_change",
    "audit_message",
    "check_auth",
    "compose_prompt_parts",
    "compose_system_prompt",
    "conversation_reads",
    "creator_role",
    "db_call",
    "dm_policies",
    "dm_policy",
    "earlier_reads",
    "elapsed_ms",
    "external_reads",
    "granted_role",
    "is_owner",
    "load_granted_turn",
    "load_turn",
    "local_owner_id",
    "lowest",
    "make_turn",
    "marker_context",
    "may_edit_task",
    "may_run_command",
    "may_use_marker",
    "message_entry",
    "migrate_person_folders",
    "models_for",
    "origin_label",
    "owner_message",
    "person_folder",
    "person_workspace",
    "reads_in",
    "record_audit",
    "role_of",
    "rooms_in",
    "sender_role",
    "stored_owner",
    "tells_strangers",
    "usage_fields",
    "workspace_for",
]

__getattr__ = loader(
    __name__,
    {
        "ATTACHMENT_NOTE": "effects",
        "BACKGROUND_SHARE": "spend",
        "FolderMigration": "folders",
        "migrate_person_folders": "folders",
        "admit_usd": "spend",
        "ask_probe": "ask",
        "GROUP_RULES": "prompt",
        "MarkerContext": "effects",
        "MarkerOutcome": "effects",
        "Notify": "effects",
        "OWNER_COMMANDS": "privileges",
        "OWN_TEXT_TOOLS": "effects",
        "ROOM_WORDS": "effects",
        "Outbox": "deps",
        "PipelineDeps": "deps",
        "PromptParts": "prompt",
        "PromptSituation": "prompt",
        "Responder": "deps",
        "Role": "privileges",
        "RuntimeState": "state",
        "Turn": "deps",
        "UsageFields": "records",
        "allowed_tools": "privileges",
        "allowed_users": "auth",
        "as_role": "privileges",
        "ask_provider": "ask",
        "at_least": "privileges",
        "audit_change": "effects",
        "audit_message": "records",
        "message_entry": "records",
        "check_auth": "auth",
        "ChannelPolicy": "auth",
        "dm_policies": "auth",
        "dm_policy": "auth",
        "granted_role": "auth",
        "tells_strangers": "auth",
        "compose_prompt_parts": "prompt",
        "compose_system_prompt": "prompt",
        "creator_role": "privileges",
        "db_call": "records",
        "elapsed_ms": "records",
        "conversation_reads": "effects",
        "earlier_reads": "effects",
        "external_reads": "effects",
        "reads_in": "effects",
        "rooms_in": "effects",
        "origin_label": "prompt",
        "is_owner": "auth",
        "stored_owner": "auth",
        "load_granted_turn": "load",
        "load_turn": "load",
        "local_owner_id": "auth",
        "lowest": "privileges",
        "make_turn": "load",
        "marker_context": "effects",
        "may_edit_task": "privileges",
        "may_run_command": "privileges",
        "may_use_marker": "privileges",
        "models_for": "ask",
        "owner_message": "effects",
        "person_folder": "privileges",
        "person_workspace": "load",
        "record_audit": "records",
        "role_of": "privileges",
        "sender_role": "privileges",
        "usage_fields": "records",
        "workspace_for": "privileges",
    },
)
