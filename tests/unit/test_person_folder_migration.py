"""migrate_person_folders: old folder names (channel and id, a 40-bit digest) become one folder a
person (their key, 128 bits); a person linked across channels had one old folder a channel, and
only one can take the new name: the other is kept beside it, its files untouched, and reported."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from omega.memory import Store
from omega.turn import migrate_person_folders, person_folder
from omega.turn.privileges import legacy_person_folder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "memory.db")
    yield s
    s.close()


def old_folder(workspace: Path, channel: str, sender: str, file: str) -> Path:
    folder = workspace / "people" / legacy_person_folder(channel, sender)
    folder.mkdir(parents=True)
    (folder / file).write_text(f"{channel} {file}")
    return folder


def test_a_linked_persons_old_folders_become_one_and_the_other_is_kept_beside(
    store: Store, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    assert store.person_of("terminal", "bea") == "bea"
    store.link_identity("telegram", "bea", "terminal", "bea")
    first = old_folder(workspace, "terminal", "bea", "notes.txt")
    second = old_folder(workspace, "telegram", "bea", "photo.txt")
    stray = old_folder(workspace, "matrix", "@nobody:example.org", "x.txt")

    done = migrate_person_folders(workspace, store)

    new = person_folder("bea")
    [(renamed, to)] = done.renamed
    assert to == new and renamed in {first.name, second.name}
    [(kept, beside)] = done.beside
    assert beside == new and {renamed, kept} == {first.name, second.name}
    # Nothing lost: the renamed folder's file is in the person's folder, the other's in place.
    files = {p.name for p in (workspace / "people").rglob("*.txt")}
    assert files == {"notes.txt", "photo.txt", "x.txt"}
    assert (workspace / "people" / kept).is_dir()
    assert done.unclaimed == [stray.name] and done.contested == []
    # A second start renames nothing more, and still names the folder left beside.
    again = migrate_person_folders(workspace, store)
    assert again.renamed == [] and again.beside == [(kept, new)]


def test_nothing_to_do_reads_no_store(tmp_path: Path) -> None:
    class NoStore:
        def query(self, *_: object) -> list[object]:
            raise AssertionError("the store was read with no old folder there")

    workspace = tmp_path / "workspace"
    (workspace / "people" / person_folder("bea")).mkdir(parents=True)
    (workspace / "people" / "rooms").mkdir()
    done = migrate_person_folders(workspace, NoStore())  # type: ignore[arg-type]
    assert (done.renamed, done.contested, done.unclaimed, done.beside) == ([], [], [], [])
