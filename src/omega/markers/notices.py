"""What the person is told when a marker in Omega's reply did not act: the reply may promise
("I will remind you") what never happened, so the failure is said plainly, in their language."""

from __future__ import annotations

from omega import i18n

_SCHEDULING = frozenset({"SCHEDULE", "SCHEDULE_ACTION"})
_TASK_EDITS = frozenset({"CANCEL_TASK", "UPDATE_TASK"})
# Omega's own bookkeeping, promised to nobody: a failure is in the log and audit only.
_INTERNAL = frozenset({"LIMITATION", "SELF_HEAL", "SELF_HEAL_RESOLVED", "SILENT", "HEARTBEAT_OK"})
MAX_WHAT_CHARS = 80
# Before a marker's name in MarkerOutcome.unmet: refused because the reply read text nobody here
# wrote (provenance.EXTERNAL_BARRED). Said as not done, whatever its kind: neither its time nor its
# task was the trouble, and a self-healing step the owner would not hear of otherwise.
REFUSED = "refused:"


def unmet_of_raw(raw: str) -> tuple[str, str]:
    """(marker name, first field) of a marker line the parser rejected."""
    name, _, rest = raw.strip().strip("*`-• ").partition(":")
    return name.strip("*` ").upper(), rest.split("|")[0].strip(" *`")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_WHAT_CHARS else text[: MAX_WHAT_CHARS - 1] + "…"


def unmet_notice(unmet: list[tuple[str, str]], language: str) -> str:
    """One line per marker that did not act ('' when all did), in `language`."""
    lines: list[str] = []
    for name, what in unmet:
        if name.startswith(REFUSED):
            line = i18n.message("marker_failed_other", language, what=name.removeprefix(REFUSED))
        elif name in _INTERNAL:
            continue
        elif name in _SCHEDULING:
            line = i18n.message("marker_failed_schedule", language, what=_short(what) or name)
        elif name in _TASK_EDITS:
            line = i18n.message("marker_failed_task", language, what=_short(what) or name)
        else:
            line = i18n.message("marker_failed_other", language, what=name)
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)
