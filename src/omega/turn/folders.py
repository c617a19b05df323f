"""People's folders named the old way (a 40-bit digest) renamed to the new (128 bits), at start.

A folder's name is its person's id made readable and a digest of the whole id
(privileges.person_folder). With 10 hex digits someone who can choose their own id could search
for one whose folder is another person's; the digest is now 32. A folder named the old way is
renamed to its new name here, before any turn runs, and only when the store names exactly one
id it can belong to: the channel ids and person keys of the identities table, as the pipeline
keys a message (gateway.persons.as_person: the person a channel id is linked to, or for a sender
its channel cannot prove the channel-scoped key). A folder two ids could claim (the collision
the old digest allowed) is given to neither and reported; one no id claims is left where it is.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from omega.memory.people import PREFIX
from omega.memory.store import Store
from omega.turn.privileges import LEGACY_DIGEST_HEX, ROOMS, person_folder

log = logging.getLogger(__name__)

_LEGACY = re.compile(rf".+-[0-9a-f]{{{LEGACY_DIGEST_HEX}}}")


@dataclass
class FolderMigration:
    """What migrate_person_folders did: folders renamed (old name, new name), and the old
    names left as they were because two ids could claim them, or none."""

    renamed: list[tuple[str, str]] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)
    unclaimed: list[str] = field(default_factory=list)


def _keys(store: Store) -> set[tuple[str, str]]:
    """Every (channel, key) a person's folder may have been named after."""
    keys: set[tuple[str, str]] = set()
    for row in store.query("SELECT channel, sender_id, person FROM identities"):
        channel, sender, person = str(row[0]), str(row[1]), str(row[2])
        scoped = f"{channel}{PREFIX}{sender}"
        keys |= {(channel, person), (channel, sender), (channel, scoped)}
        keys.add((channel, f"{scoped}{PREFIX}unverified"))
    return keys


def migrate_person_folders(workspace: Path, store: Store) -> FolderMigration:
    """Rename `workspace/people/*` folders named with the old digest to their new names (see
    the module's docstring); call on the store's thread, before any turn. Cheap when there is
    nothing to do: the folder is listed, the store read only when an old name is found."""
    done = FolderMigration()
    people = workspace / "people"
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(people)
            if entry.name != ROOMS
            and _LEGACY.fullmatch(entry.name)
            and entry.is_dir(follow_symlinks=False)
        )
    except FileNotFoundError:
        return done
    if not names:
        return done
    claims: dict[str, set[str]] = {}
    for channel, key in _keys(store):
        old = person_folder(channel, key, LEGACY_DIGEST_HEX)
        claims.setdefault(old, set()).add(person_folder(channel, key))
    for name in names:
        claimed = claims.get(name, set())
        if len(claimed) > 1:
            log.error(
                "people/%s: %d ids could claim this folder; given to none", name, len(claimed)
            )
            done.contested.append(name)
            continue
        if not claimed:
            log.warning("people/%s: no known id names this folder; left as it is", name)
            done.unclaimed.append(name)
            continue
        (new,) = claimed
        try:  # renameat2(RENAME_NOREPLACE) is not in os: a new folder already there is kept
            if (people / new).exists():
                raise FileExistsError(new)
            os.rename(people / name, people / new)
        except OSError as exc:  # another replica on this host renamed it, or the new one exists
            log.warning("people/%s: not renamed to %s: %s", name, new, exc)
            continue
        done.renamed.append((name, new))
    if done.renamed:
        log.info("renamed %d people's folders to their longer names", len(done.renamed))
    return done
