"""People's folders named the old way renamed to the new, at start.

A person's folder was named after the channel and the person's key with a 10-hex digest
(privileges.legacy_person_folder): someone who can choose their own id could search for one
whose folder is another person's, and a person linked across channels had one folder per
channel. It is now named after the person's key alone with a 32-hex digest
(privileges.person_folder). A folder named the old way is renamed here, before any turn runs,
and only when the store names exactly one person it can belong to: the channel ids and person
keys of the identities table, as the pipeline keys a message (gateway.persons.as_person: the
person a channel id is linked to, or for a sender its channel cannot prove the channel-scoped
key). A folder two persons could claim (the collision the old digest allowed) is given to
neither and reported; one no one claims is left where it is; a second old folder of one person
(one per channel linked) is left beside the first, whose name it would take, and reported.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from omega.memory.people import PREFIX
from omega.memory.store import Store
from omega.turn.privileges import LEGACY_DIGEST_HEX, ROOMS, legacy_person_folder, person_folder

log = logging.getLogger(__name__)

_LEGACY = re.compile(rf".+-[0-9a-f]{{{LEGACY_DIGEST_HEX}}}")


@dataclass
class FolderMigration:
    """What migrate_person_folders did: folders renamed (old name, new name), and the old
    names left as they were: two persons could claim them, or none, or their person's folder
    has its new name already (old name, new name: their files to move by hand)."""

    renamed: list[tuple[str, str]] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)
    unclaimed: list[str] = field(default_factory=list)
    beside: list[tuple[str, str]] = field(default_factory=list)


def _claims(store: Store) -> dict[str, set[str]]:
    """Each old folder name a known channel id may have had, and the new names of the persons
    it would belong to."""
    claims: dict[str, set[str]] = {}
    for row in store.query("SELECT channel, sender_id, person FROM identities"):
        channel, sender, person = str(row[0]), str(row[1]), str(row[2])
        scoped = f"{channel}{PREFIX}{sender}"
        # (name it had, person it is): keyed by its person; by the raw id, before identities
        # (that id's person now); a guest's, by the channel-scoped keys (gateway.persons).
        for key, owner in (
            (person, person),
            (sender, person),
            (scoped, scoped),
            (f"{scoped}{PREFIX}unverified", f"{scoped}{PREFIX}unverified"),
        ):
            old = legacy_person_folder(channel, key)
            claims.setdefault(old, set()).add(person_folder(owner))
    return claims


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
    claims = _claims(store)
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
        if (people / new).exists():  # the person's other channel's folder took the name
            log.warning("people/%s: kept beside people/%s, its person's folder", name, new)
            done.beside.append((name, new))
            continue
        try:
            os.rename(people / name, people / new)
        except OSError as exc:  # another replica on this host renamed it, or the new one exists
            log.warning("people/%s: not renamed to %s: %s", name, new, exc)
            continue
        done.renamed.append((name, new))
    if done.renamed:
        log.info("renamed %d people's folders to their longer names", len(done.renamed))
    return done
