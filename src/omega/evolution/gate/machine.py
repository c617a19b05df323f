"""What a proposal says about the machine itself, which the gate's rules cannot vouch for.

The forbidden-category rules look for what they know is harmful; anything they do not know
would pass them. So here the gate fails closed the other way: a proposal that runs commands or
code, names a path, a file or a disk, deletes or wipes, scans or attacks a network, reads a
credential store, starts itself at login, or carries an opaque blob is not something the rules
understand as harmless, whatever its words. Each such sign is a reason: the proposal is at
least medium risk and waits for the owner (gate.py); the judge alone never clears it.

Code is found by its shape, not by a list of bad commands: backticks, pipes and shell operators,
any character prose does not need (`~ / \\ | { } [ ] < > = & @ ^ + _`, `$` before a name, `%`
not after a number), command-line flags (`-rf`, `--force`), calls (`rmtree(home)`), dotted
names (`hosts.yml`, `.bashrc`, `os.remove`), letters spelled out one by one, and runs of letters
and digits that look encoded (base64, hex). The words (machine_words.py) add what prose says
without code: programs by name, files and folders, deleting, scanning, credential stores.

Every string of the proposal is read (not its JSON keys, `alternative_approaches`, or the name,
kind and labels the gate checks on their own), folded as the other signals read it (look-alike
letters, full-width forms and invisible characters undone, spaced-out letters joined). URLs on
documented public API hosts, and the name of the `fetch_url` tool that reads them, are taken
out first: the host rules vouch for them.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from omega.evolution.gate.lexicon_more import unnegated
from omega.evolution.gate.machine_words import (
    COMMAND_LINE,
    CREDENTIAL_STORES,
    DESTROY_VERBS,
    DISCLOSURE,
    MACHINE_NOUNS,
    NETWORK_ATTACK,
    OWNED_SECRETS,
    PERSISTENCE,
    PROGRAMS,
    SPELLED_SYMBOLS,
    STORAGE,
)
from omega.evolution.gate.normalize import readings

# Fields the gate checks on their own terms, and what the proposal says it will not do.
_SKIPPED = frozenset({"kind", "name", "category", "risk_level", "alternative_approaches"})
_HEADING = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]")
# Omega's own tools whose only effect the other rules already judge: `fetch_url` reads a public
# http(s) URL, and the host rules vouch for the URL (or not).
_VOUCHED_TOOLS = re.compile(r"\bfetch_url\b")
# "no key, no account": an account named only to say none is used (secrets: unnegated).
_NO_ACCOUNT = re.compile(
    r"\b(no|without(\s+an?)?|never\s+an?)\s+(user\s+)?(accounts?|sign[\s-]?ups?|registration)"
    r"(\s+(is\s+|are\s+)?(needed|required|used))?\b",
    re.IGNORECASE,
)
# Characters prose needs; any other is code, a path or markup the rules do not read.
_PROSE_CHARS = "\\w\\s.,:;!?'\"()*%#$…—–«»„“”‘’¿¡°€£¥·-"
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a character prose does not need", re.compile(f"[^{_PROSE_CHARS}]|_")),
    ("a variable", re.compile(r"\$(?!\d)|(?<!\d)%|#")),
    ("a command-line flag", re.compile(r"(?:^|(?<=[\s\"'(,]))--?[a-z][\w-]*", re.IGNORECASE)),
    ("a call", re.compile(r"(?<!\w)[a-z_]\w*\((?!e?s\))", re.IGNORECASE)),
    (
        "a file name, dotfile or dotted name",
        re.compile(r"(?<![\w.-])[\w-]*\.(?=[\w-]*[a-z])[\w-]{2,}", re.IGNORECASE),
    ),
    (
        "an encoded-looking run of letters and digits",
        re.compile(
            r"(?<![\w+/=])(?=[a-z0-9+/]*\d)(?=[a-z0-9+/]*[a-z])[a-z0-9+/]{8,}={0,2}(?![\w+/=])"
            r"|(?<![a-z0-9+/])[a-z0-9+/]{4,}={1,2}(?![\w=])",
            re.IGNORECASE,
        ),
    ),
)
# Single letters written apart ("r m", "r, then m"): a command spelled out. Not the one-letter
# words of the rule languages, nor a unit after a number ("5 m").
_LETTER = re.compile(r"(?<![\w'’.-])(?<!\d )(?![aeiouy]\b)[a-z](?![\w'’-])")
_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("names a program", PROGRAMS),
    ("speaks of commands", COMMAND_LINE),
    ("speaks of files, folders or disks", STORAGE),
    ("speaks of the computer, its programs, settings, accounts or stored content", MACHINE_NOUNS),
    ("deletes, wipes or overwrites", DESTROY_VERBS),
    ("speaks of scanning, attacking or getting into a network or device", NETWORK_ATTACK),
    ("names a credential store", CREDENTIAL_STORES),
    ("names someone's secret", OWNED_SECRETS),
    ("tells it to others", DISCLOSURE),
    ("starts by itself", PERSISTENCE),
    ("spells out a symbol", SPELLED_SYMBOLS),
)


def strings(value: object) -> list[str]:
    """Every string in `value` (nested lists and mappings; their values, not their keys)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in strings(item)]
    return []


def machine_text(spec: dict[str, Any], public_hosts: Collection[str] = ()) -> str:
    """The proposal's strings as these rules read them: folded, spaced-out letters joined,
    URLs on documented public API hosts, Markdown heading marks, and secrets or accounts named
    only to say they are not used ("no API key needed", "no account") taken out."""
    parts = [s for key, value in spec.items() if key not in _SKIPPED for s in strings(value)]
    text = _NO_ACCOUNT.sub(" ", unnegated(readings("\n".join(parts))))
    for host in public_hosts:
        # Only what a URL holds, placeholders (`{lat}`, `<city>`) included: a shell operator
        # or quote after it is read as written.
        url = rf"https://{re.escape(host)}(?:[/?#](?:[\w\-.~%?&=+,:@/#]|\{{\w+\}}|<\w+>)*)?"
        text = re.sub(url, " ", text, flags=re.IGNORECASE)
    return _VOUCHED_TOOLS.sub(" ", _HEADING.sub(" ", text))


def machine_signs(spec: dict[str, Any], public_hosts: Collection[str] = ()) -> tuple[str, ...]:
    """Why the rules cannot vouch for this proposal as harmless (empty when they can): code,
    commands, paths, files, deleting, network attacks, credential stores, opaque blobs."""
    text = machine_text(spec, public_hosts)
    reasons = [
        f"{what} ({match.group(0).strip()[:40]!r})"
        for what, shape in _SHAPES
        if (match := shape.search(text))
    ]
    letters = _LETTER.findall(text.casefold())
    if len(letters) >= 2:
        reasons.append(f"letters written one by one ({' '.join(letters[:6])!r})")
    reasons += [
        f"{what} ({match.group(0).strip()[:40]!r})"
        for what, words in _WORDS
        if (match := words.search(text))
    ]
    return tuple(reasons)
