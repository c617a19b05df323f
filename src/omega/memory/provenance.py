"""Whose words a stored conversation carries (ARCHITECTURE §12a): what its tool calls may have
read that nobody here wrote, whether it was a group room's, and the provenance line a memory
search's result opens with when what it found is not only the person's own private words.

Below the tools (search_memory writes that line) and the turn (turn.effects counts a reply's
reads with these); the store's queries only."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omega.memory.store import Store

# Tools whose results are only what the person or Omega wrote themselves: any other call
# (fetch_url, run_shell, read_file, an MCP server's or a provider's own tool) may have read
# text nobody here wrote, and its turn counts as one that read external content. A
# search_memory call whose result opens with FOUND_PREFIX is not one of them (`read_name`).
OWN_TEXT_TOOLS = frozenset({"list_files", "write_file", "search_memory"})
SEARCH_TOOL = "search_memory"
# How search_memory's result opens, in a line code writes, when it found messages of a group
# room or of a conversation that read external content. Message lines open with their date, so
# no message makes a result open so; a forged one inside a message could only count more.
FOUND_PREFIX = "[from: "
# What such a call counts as, in this turn and in the later ones its history carries it to.
FOUND_ELSEWHERE = f"{SEARCH_TOOL} (other people's words or external content)"
FOUND_READ = "(read in a conversation it found)"
ATTACHED = "attached file"
# How a message names a file attached to it, in the text kept in its conversation.
ATTACHMENT_NOTE = "[Attached file: "
# How many of the latest tool calls are read to find a conversation's: a conversation older
# than all of them may have older ones, and counts as having read external content (fails
# closed), so the check costs the same however long the table grows.
RECENT_CALLS = 2000
UNCHECKED = "tool results too old to check"
# A group room's words are other members' too, whoever spoke there (a quote, a forward).
ROOM_WORDS = "conversations in group rooms"


def read_name(tool: str, result: str) -> str:
    """What a tool call that may have read text nobody here wrote counts as ("" when it
    returned only the person's or Omega's own text): its name, FOUND_ELSEWHERE for a
    search_memory call whose `result` opens with FOUND_PREFIX. Fails closed on unknown tools."""
    if tool == SEARCH_TOOL and result.startswith(FOUND_PREFIX):
        return FOUND_ELSEWHERE
    return "" if tool in OWN_TEXT_TOOLS else tool


def reads_in(store: Store, *conversation_ids: str) -> str:
    """What external content these conversations read ("" when none): what the tool calls
    recorded in them count as (`read_name`), and an attached file. A conversation started
    before the latest RECENT_CALLS tool calls counts as having read some (UNCHECKED), as does
    one that is not there. The same four queries however many conversations. Call on the
    store's thread."""
    if not conversation_ids:
        return ""
    among = f"conversation_id IN ({', '.join('?' * len(conversation_ids))})"
    top = store.query("SELECT MAX(id) AS top FROM tool_calls")
    floor = int(top[0]["top"] or 0) - RECENT_CALLS if top else 0
    rows = store.query(
        "SELECT DISTINCT tool, CASE WHEN tool = ? AND result_preview LIKE ? THEN 1 ELSE 0 END "
        f"AS found FROM tool_calls WHERE id > ? AND {among} ORDER BY tool",
        (SEARCH_TOOL, f"{FOUND_PREFIX}%", floor, *conversation_ids),
    )
    names = [read_name(str(row["tool"]), FOUND_PREFIX if row["found"] else "") for row in rows]
    if floor > 0:  # calls older than the window: were any of them these conversations'?
        older = store.query(
            "SELECT created_at FROM tool_calls WHERE id <= ? ORDER BY id DESC LIMIT 1", (floor,)
        )
        started = store.query(
            f"SELECT COUNT(*) AS n, MIN(started_at) AS first FROM conversations WHERE "
            f"{among.replace('conversation_id', 'id')}",
            conversation_ids,
        )
        known = bool(started) and int(started[0]["n"]) == len(set(conversation_ids))
        if not known or (older and str(older[0]["created_at"]) >= str(started[0]["first"])):
            names.append(UNCHECKED)
    attached = store.query(
        f"SELECT 1 FROM messages WHERE {among} AND role = 'user' AND content LIKE ? LIMIT 1",
        (*conversation_ids, f"{ATTACHMENT_NOTE}%"),
    )
    if attached:
        names.append(ATTACHED)
    return ", ".join(dict.fromkeys(name for name in names if name))


def rooms_in(store: Store, *conversation_ids: str) -> bool:
    """Whether any of these conversations was in a group room (its words are other members'
    too, migration 026). Fails closed: one that is not there counts. Call on the store's
    thread."""
    ids = tuple(dict.fromkeys(conversation_ids))
    if not ids:
        return False
    rows = store.query(
        f"SELECT COUNT(*) AS n FROM conversations WHERE is_group = 0 AND id IN "
        f"({', '.join('?' * len(ids))})",
        ids,
    )
    return not rows or int(rows[0]["n"]) < len(ids)


def found_origin(store: Store, conversation_ids: list[str], room: bool = False) -> str:
    """The provenance line a memory search's result opens with, "" when the conversations its
    messages are from are the person's own private ones that read nothing: else FOUND_PREFIX,
    group rooms (unless the search is a `room`'s own) and what they read. Call on the store's
    thread."""
    ids = tuple(dict.fromkeys(conversation_ids))
    named = [f"{name} {FOUND_READ}" for name in reads_in(store, *ids).split(", ") if name]
    if not room and rooms_in(store, *ids):
        named.insert(0, ROOM_WORDS)
    return f"{FOUND_PREFIX}{', '.join(named)}]\n" if named else ""
