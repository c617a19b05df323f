"""What a prompt carried that nobody here wrote (ARCHITECTURE §12a), decided by code that fails
closed: the tools a conversation's earlier turns called (turn.reads_in), and whose words a gap
may carry and still be acted on without the owner (evolution.gaps.own_words)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from omega.evolution.gaps import own_words
from omega.memory import Store, provenance
from omega.turn import effects, external_reads, reads_in
from omega.types import ToolCall


def call(name: str) -> ToolCall:
    return ToolCall(name=name, arguments={}, ok=True)


def record(store: Store, conversation: str, *names: str) -> None:
    store.record_tool_calls(
        [call(n) for n in names], agent="a", channel="terminal", conversation_id=conversation
    )


def test_a_conversation_counts_every_tool_that_may_have_read_external_text(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "m.db")
    own = store.active_conversation("terminal", "owner")
    record(store, own, "list_files", "search_memory", "write_file")
    assert reads_in(store, own) == ""  # only what the person or Omega wrote
    record(store, own, "run_shell", "fetch_url", "run_shell")
    other = store.active_conversation("terminal", "bob")
    record(store, other, "mcp_lookup")
    assert reads_in(store, own) == "fetch_url, run_shell"
    assert reads_in(store, other) == "mcp_lookup"
    # A file attached in an earlier turn: its text may be in the replies the history carries.
    store.store_exchange("telegram", "ann", "[Attached file: /in/a.pdf]\nread it", "It says...")
    attached = store.active_conversation("telegram", "ann")
    assert reads_in(store, attached) == "attached file"
    store.close()


def test_a_conversation_older_than_the_calls_read_counts_as_external(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(provenance, "RECENT_CALLS", 2)
    store = Store(tmp_path / "m.db")
    old = store.active_conversation("terminal", "owner")
    record(store, old, "list_files")
    time.sleep(0.01)
    fresh = store.active_conversation("terminal", "bob")
    record(store, fresh, "list_files", "list_files")
    # The owner's calls are out of the window: what they read cannot be told, so it counts.
    assert reads_in(store, old) == effects.UNCHECKED
    # Bob's conversation began after the last call out of the window: all of its are in it.
    assert reads_in(store, fresh) == ""
    store.close()


def test_what_earlier_turns_read_joins_this_turns() -> None:
    assert external_reads([call("list_files")], earlier="") == ""
    assert external_reads([call("run_shell")], earlier="fetch_url") == "fetch_url, run_shell"
    assert external_reads([], earlier="fetch_url, attached file") == "fetch_url, attached file"


@pytest.mark.parametrize(
    ("reported_by", "alone"),
    [
        ("owner", True),
        ("tool critic", True),
        ("voice stage", True),
        ("person:telegram:77", False),
        ("external content", False),
        ("heartbeat", False),
        ("introspection", False),
        ("integrity check", False),
        ("", False),
        ("something new", False),
    ],
)
def test_only_the_owners_words_and_omegas_templates_act_without_the_owner(
    reported_by: str, alone: bool
) -> None:
    assert own_words(reported_by) is alone
