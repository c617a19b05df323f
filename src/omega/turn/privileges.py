"""Who may do what: the owner, an allowed person, a group member, a stranger.

Every marker, command and tool is checked here, in code, against the role of the person the
turn answers. Global state (the heartbeat, its interval, resolving limitations, self-healing,
skills, WhatsApp pairing) belongs to the owner; anyone else's attempt is ignored and audited. A task
runs with the role of the person who created it, never the owner's.

A group room's turn runs as the room's, whoever speaks, the owner too (role_of): its answer is
read by every member and its prompt may carry their words, so it gets `[auth] group_tools` and
the room's own folder (turn_workspace), never a person's folder or the owner's workspace. Only
what the sender typed themself, a command, runs with the sender's own rights (sender_role).

Rights never travel: a role is always worked out from the sender's own channel id, never from
the person an identity is linked to (a link joins memory, never authority). A task keeps the
role its creator had; editing or cancelling it needs at least that role, and an action never
runs with more.

Memory does not travel to a sender nobody proved either: a guest is never the person a link
joins their channel id to (gateway.persons.as_person keys them by their own channel id), and a
guest's commands only read (GUEST_READS) or change what is theirs alone (GUEST_OWN), and these
only while no other channel id shares their person.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

from omega.config import Config
from omega.memory.access import GrantRole
from omega.memory.tasks import Task
from omega.owner import OWNER
from omega.turn.auth import check_auth, is_owner
from omega.types import GROUP_WITHOUT_ROOM, IncomingMessage

# "guest": an allowed person whose channel cannot prove who they are (e-mail without a trusted
# authserv-id): they may talk, with no tool and no marker beyond SILENT; their reply goes to
# the address they named, so a forger does not read it.
Role = Literal["owner", "person", "group", "guest", "stranger"]
_RANK: dict[Role, int] = {"stranger": 0, "guest": 1, "group": 2, "person": 3, "owner": 4}

# The least role that may use each marker; a marker not named here is the owner's.
MARKER_ROLES: dict[str, Role] = {
    "SCHEDULE": "group",
    "CANCEL_TASK": "group",
    "UPDATE_TASK": "group",
    "LANG_SWITCH": "group",
    "SILENT": "guest",
    "SCHEDULE_ACTION": "person",
    "PROJECT_ACTIVATE": "person",
    "PROJECT_DEACTIVATE": "person",
    "HEARTBEAT_ADD": "owner",
    "HEARTBEAT_REMOVE": "owner",
    "HEARTBEAT_INTERVAL": "owner",
    "HEARTBEAT_OK": "owner",
    "WHATSAPP_QR": "owner",
    # From anyone but the owner it becomes a lesson proposal the owner approves or rejects.
    "SKILL_IMPROVE": "person",
    # Anyone's gap is recorded (spec 000): a person's is rate-limited, quoted, kept off the
    # owner's checklist and told in the daily digest (evolution.limitations).
    "LIMITATION": "group",
    "LIMITATION_RESOLVED": "owner",
    "SELF_HEAL": "owner",
    "SELF_HEAL_RESOLVED": "owner",
}

# Commands only the owner may run; every other command is open to anyone allowed.
OWNER_COMMANDS = frozenset(
    {
        "status",
        "limitations",
        "resolve",
        "merge",
        "proposals",
        "approve",
        "reject",
        "fragments",
        "selfheal",
        "whatsapp",
        "quant",
        "pending",
        "approve_person",
        "deny_person",
        "confirm",
    }
)

# What a guest (a sender their channel cannot prove: anyone may write as them) may run: commands
# that only read (the answer goes to the address they named, never to a forger), and those that
# change only the asker's own settings and conversation. Not /cancel or /rerun (tasks, actions
# that act), not /project (a guest may not activate projects: PROJECT_ACTIVATE is a person's),
# not /merge or any owner's command.
GUEST_READS = frozenset(
    {"help", "uptime", "memory", "history", "facts", "tasks", "skills", "projects"}
)
GUEST_OWN = frozenset({"forget", "language", "personality", "quiet", "purge"})


def role_of(config: Config, message: IncomingMessage, granted: GrantRole | None = None) -> Role:
    """The role the turn answering `message` runs with; `granted` is what memory.db gives the
    sender's channel id (turn.auth.granted_role), read for this message.

    In a group room everyone allowed, the owner too, runs as "group": the room's answer is read
    by all its members, and the owner's message there may carry their words (a quoted reply, a
    forward) and its tools may read what they left in the workspace, so a room's turn never gets
    the owner's tools, folder or markers. The owner's own commands keep the owner's rights
    there (sender_role): a command is the sender's words, never the model's."""
    role = sender_role(config, message, granted)
    return "group" if role == "owner" and message.is_group else role


def sender_role(config: Config, message: IncomingMessage, granted: GrantRole | None = None) -> Role:
    """The rights of `message`'s sender themself, wherever they write: the owner is the owner in
    a group room too. Only what the sender typed (a chat command) runs with it; a turn the model
    answers runs with role_of."""
    if message.channel == OWNER:  # work addressed to the owner (self-heal verification)
        return "owner"
    if check_auth(config, message, granted):
        return "stranger"
    if is_owner(config, message, granted):
        return "owner"
    if not message.verified:
        return "guest"
    return "group" if message.is_group else "person"


def at_least(role: Role, needed: Role) -> bool:
    """Whether `role` carries the rights of `needed`."""
    return _RANK[role] >= _RANK[needed]


def lowest(first: Role, second: Role) -> Role:
    """The lesser of two roles."""
    return first if _RANK[first] <= _RANK[second] else second


def as_role(value: str) -> Role | None:
    """`value` as a role, None when it names none (a task made before roles were kept)."""
    for role in _RANK:
        if value == role:
            return role
    return None


def creator_role(config: Config, task: Task) -> Role:
    """The role a task's creator had when they made it; for a task made before roles were
    kept, the role of the channel id that made it (never the linked person's)."""
    kept = as_role(task.creator_role)
    if kept is not None:
        return kept
    creator = IncomingMessage(
        task.channel, task.sender_id, "", origin_id=task.origin_id, assurance="stored"
    )
    return role_of(config, creator)


def may_edit_task(config: Config, role: Role, task: Task) -> bool:
    """Whether someone of `role` may change or cancel `task`: at least its creator's role."""
    return at_least(role, creator_role(config, task))


def may_use_marker(role: Role, name: str) -> bool:
    """Whether a reply to someone of this role may act on marker `name`."""
    return at_least(role, MARKER_ROLES.get(name, "owner"))


def may_run_command(role: Role, name: str, *, shared: bool = False) -> bool:
    """Whether someone of this role may run chat command /`name`; `shared`: the person the
    command acts on is shared with another channel id (a link), which a guest never changes."""
    if role == "owner":
        return True
    if role == "stranger" or name in OWNER_COMMANDS:
        return False
    if role == "guest":
        return name in GUEST_READS or (name in GUEST_OWN and not shared)
    return True


def allowed_tools(config: Config, role: Role) -> frozenset[str] | None:
    """The tool names a turn of this role may call (None: every tool)."""
    if role == "owner":
        return None
    if role == "person":
        return frozenset(config.auth.people_tools)
    if role == "group":
        return frozenset(config.auth.group_tools)
    return frozenset()  # a guest and a stranger call no tool


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


# Hex digits of the SHA-256 in a folder's name: 128 bits, so that no one can make up an id
# (their own Matrix server, their own mail domain) whose folder is another person's. Folders
# named before (legacy_person_folder: after the channel and id, with 40 bits, found in minutes
# on a GPU) are renamed at start (turn.folders.migrate_person_folders).
DIGEST_HEX = 32
LEGACY_DIGEST_HEX = 10


def _folder_name(readable: str, hashed: str) -> str:
    """`readable` made safe on every file system (40 characters at most), then DIGEST_HEX hex
    digits of the SHA-256 of `hashed`."""
    digest = hashlib.sha256(hashed.encode()).hexdigest()[:DIGEST_HEX]
    return f"{_UNSAFE.sub('_', readable).strip('._')[:40] or 'person'}-{digest}"


def person_folder(person: str) -> str:
    """The folder name of one person (their key: `gateway.persons.as_person`), the same for
    every channel id linked to them, never another person's."""
    return _folder_name(person, f"person\0{person}")


def legacy_person_folder(channel: str, sender_id: str) -> str:
    """The name a person's folder had before: after the channel and id, a 40-bit digest."""
    digest = hashlib.sha256(f"{channel}\0{sender_id}".encode()).hexdigest()[:LEGACY_DIGEST_HEX]
    readable = _UNSAFE.sub("_", f"{channel}-{sender_id}").strip("._")[:40]
    return f"{readable}-{digest}"


def workspace_for(root: Path, role: Role, person: str) -> Path:
    """Where this person's files live: the owner's is the root; everyone else has a folder
    of their own under `root/people/` that no other person's tools reach, shared by the
    channel ids linked to them (`person`: their key)."""
    if role == "owner":
        return root
    return root / "people" / person_folder(person)


# Rooms' folders live apart from people's: a person's folder name always ends in "-<digest>",
# so no person's folder is ever this one, nor inside it.
ROOMS = "rooms"


def room_workspace(root: Path, channel: str, room: str) -> Path:
    """The folder of one group room (`room`: the channel's id of it), shared by whoever speaks
    there and no one's own: `root/people/rooms/<channel>-<room>-<digest>`."""
    return root / "people" / ROOMS / _folder_name(f"{channel}-{room}", f"room\0{channel}\0{room}")


def turn_workspace(root: Path, role: Role, message: IncomingMessage) -> Path:
    """The folder the turn answering `message` works in: a group room's own folder, whoever
    speaks (the owner too: a room reads its answers, so never a person's private files nor the
    owner's workspace); else the sender's (workspace_for)."""
    if message.is_group:
        return room_workspace(root, message.channel, message.reply_target or GROUP_WITHOUT_ROOM)
    return workspace_for(root, role, message.sender_id)
