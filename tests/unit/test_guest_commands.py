"""A guest (an allowed sender their channel cannot prove: e-mail without a trusted authserv-id)
runs only commands that read or that change their own settings and conversation, and those
only while no other channel id shares their person; an unproven sender never becomes the
person an identity link joins their channel id to, whichever way the link was made."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.commands_table import NAMES
from omega.gateway.persons import shared_person, unlinked_person
from omega.memory import Store
from omega.turn import OWNER_COMMANDS, may_run_command

READS = {"help", "uptime", "memory", "history", "facts", "tasks", "skills", "projects"}
OWN = {"forget", "language", "personality", "quiet", "purge"}


@pytest.mark.no_store
def test_a_guest_reads_and_changes_only_what_is_theirs_alone() -> None:
    names = {"language" if name == "lang" else name for name in NAMES}
    for name in sorted(names):
        allowed = may_run_command("guest", name)
        assert allowed == (name in READS | OWN), name
        # Reads stay open on a shared person; nothing that changes it does.
        assert may_run_command("guest", name, shared=True) == (name in READS), name
        assert may_run_command("person", name) == (name not in OWNER_COMMANDS), name
        assert may_run_command("owner", name), name
        assert not may_run_command("stranger", name), name
    for name in ("cancel", "rerun", "project", "merge", "pending", "approve"):
        assert not may_run_command("guest", name), name


def test_an_unproven_sender_is_never_the_person_a_link_joins_them_to(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        # Unlinked: their own key, as before.
        assert unlinked_person(store, "email", "bob@example.org") == "bob@example.org"
        assert not shared_person(store, "bob@example.org", "email", "bob@example.org")
        # Linked to the owner: their own channel-scoped person, never the owner's.
        owner = store.person_of("telegram", "111")
        assert store.link_identity("email", "ana@example.org", "telegram", "111") == owner
        assert shared_person(store, owner, "email", "ana@example.org")
        assert unlinked_person(store, "email", "ana@example.org") == "email:ana@example.org"
        # The owner's id linked to theirs (the other way round): the same.
        store.person_of("email", "cy@example.org")
        store.link_identity("telegram", "222", "email", "cy@example.org")
        assert store.person_of("telegram", "222") == "cy@example.org"
        assert unlinked_person(store, "email", "cy@example.org") == "email:cy@example.org"
        # Their own key was channel-scoped already and someone was linked to it: a key of
        # their own still, which no link gave anyone.
        store.person_of("web", "dee@example.org")  # takes the raw key
        assert store.person_of("email", "dee@example.org") == "email:dee@example.org"
        store.link_identity("telegram", "333", "email", "dee@example.org")
        mine = unlinked_person(store, "email", "dee@example.org")
        assert mine == "email:dee@example.org:unverified"
        assert not shared_person(store, mine, "email", "dee@example.org")
        keys = {person for _, _, person in store.identities()}
        assert "email:ana@example.org" not in keys and mine not in keys
    finally:
        store.close()
