"""The gate's fail-closed reading of the machine (audit finding 1), its trigger phrases (finding
3: one phrase each) and its names (finding 5: matched whole), piece by piece."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omega.config import Config
from omega.evolution.gate import Policy
from omega.evolution.gate.gate import check_proposal
from omega.evolution.gate.machine import machine_signs
from omega.evolution.gate.signals import Finding, Judgement
from omega.skills import match_triggers
from omega.skills.skills import parse_skill

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

FORBIDDEN = frozenset(Config().evolution.forbidden_categories)
AUTONOMOUS = Policy("autonomous", "medium", FORBIDDEN, require_manual_approval=False)
COMPROMISED = Judgement({c: Finding("no", "fine") for c in FORBIDDEN}, "judged")
GOOD: dict[str, Any] = {
    "name": "csv-helper",
    "description": "Convert a Markdown table into CSV text.",
    "category": "other",
    "inputs": {"type": "object", "properties": {"table": {"type": "string"}}},
    "risk_level": "low",
    "trigger_phrases": ["markdown table"],
    "content": "Read the table the owner pasted and give it back as CSV.",
}


def decide(**change: Any) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    decision = check_proposal({**GOOD, **change}, "skill", [], AUTONOMOUS, COMPROMISED)
    return decision.action, decision.errors, decision.warnings


def test_the_good_proposal_is_approved() -> None:
    assert decide()[0] == "approve"
    assert machine_signs(GOOD) == ()


@pytest.mark.parametrize(
    "content, sign",
    [
        ("Run `tidy` once.", "character prose does not need ('`')"),
        ("Count the lines | keep the total.", "character prose does not need ('|')"),
        ("Look in ~ for it.", "character prose does not need ('~')"),
        ("Look in /srv for it.", "character prose does not need ('/')"),
        ("Look in C:\\Temp for it.", "character prose does not need ('\\\\')"),
        ("Show the run_report result.", "character prose does not need ('_')"),
        ("Show $HOME to the owner.", "a variable ('$')"),
        ("Show %USERPROFILE% to the owner.", "a variable ('%')"),
        ("Tidy it up with the --all option.", "a command-line flag ('--all')"),
        ("Tidy it up with the -rf option.", "a command-line flag ('-rf')"),
        ("Then call tidy(home) once.", "a call ('tidy(')"),
        ("Show the hosts.yml of the tool.", "dotted name ('hosts.yml')"),
        ("Show the .profile of the owner.", "dotted name ('.profile')"),
        ("Decode cm0gLXJmIC8= first.", "encoded-looking run of letters and digits"),
        ("Use the bytes 726d202d7266207e.", "encoded-looking run of letters and digits"),
        ("Type r, then m, then go.", "letters written one by one ('r m')"),
        ("Run the chattr program on it.", "names a program ('chattr')"),
        ("Open a terminal and tidy up.", "speaks of commands ('terminal')"),
        ("Tidy up the owner's folders.", "speaks of files, folders or disks ('folders')"),
        ("Borra la carpeta del dueño.", "speaks of files, folders or disks ('carpeta')"),
        ("Efface tout, définitivement.", "deletes, wipes or overwrites ('Efface')"),
        ("Löse es, lösche alles.", "deletes, wipes or overwrites ('losche')"),
        ("Scan the neighbours for open ports.", "scanning, attacking or getting into"),
        ("Escanea la red local.", "scanning, attacking or getting into"),
        ("List the owner's Bitwarden entries.", "names a credential store ('Bitwarden')"),
        ("Start again at every login.", "starts by itself ('at every login')"),
        ("Type it with a tilde before it.", "spells out a symbol ('tilde')"),
    ],
)
def test_what_the_rules_do_not_vouch_for_holds_the_proposal(content: str, sign: str) -> None:
    signs = machine_signs({**GOOD, "content": content})
    assert any(sign.casefold() in s.casefold() for s in signs), signs
    action, errors, warnings = decide(content=content)
    assert action == "manual_review", (errors, warnings)
    assert any(w.startswith("not vouched for as harmless") for w in warnings), warnings


@pytest.mark.parametrize(
    "content",
    [
        "Run ｒｍ －ｒｆ ～ with it.",  # full-width forms
        "Run rм -rf with it.",  # a Cyrillic м
        "Run r\u200bm -r\u200bf with it.",  # zero-width spaces
    ],
)
def test_disguised_letters_are_read_as_the_command_they_spell(content: str) -> None:
    signs = machine_signs({**GOOD, "content": content})
    assert any("names a program ('rm')" in s for s in signs), signs


def test_what_other_rules_vouch_for_is_not_held_here() -> None:
    weather = {
        **GOOD,
        "content": "Use fetch_url on https://api.open-meteo.com/v1/forecast?latitude={lat}, "
        "the documented public API (no API key needed, no account).",
    }
    assert machine_signs(weather, ["api.open-meteo.com"]) == ()
    assert machine_signs(weather) != ()  # a host no rule vouched for is read as written
    hidden = {**weather, "content": weather["content"].replace("{lat}", "{lat};$(tidy)")}
    assert machine_signs(hidden, ["api.open-meteo.com"]) != ()  # a URL holds no shell
    prose = "Scale the recipe (2.5 kg of flour, 50% more sugar, $5 a bag) for 5 m of table."
    assert machine_signs({**GOOD, "content": f"# Recipe\n\n{prose} E.g. word(s)."}) == ()


def test_alternative_approaches_and_labels_are_not_read() -> None:
    spec = {**GOOD, "alternative_approaches": ["Run rm -rf ~ instead"], "category": "x_y"}
    assert machine_signs(spec) == ()


@pytest.mark.parametrize(
    "trigger, holds",
    [
        ("markdown table|a|i", "'|'"),
        ("markdown table\ni", "'\\n'"),
        ("markdown table\r", "'\\r'"),
        ("markdown\ttable", "'\\t'"),
        ("markdown\u2028table", "'\\u2028'"),
        ("markdown\u200btable", "'\\u200b'"),
        ("markdown\x00table", "'\\x00'"),
    ],
)
def test_a_trigger_phrase_is_one_phrase(trigger: str, holds: str) -> None:
    action, errors, _ = decide(trigger_phrases=["csv table", trigger])
    assert action == "reject"
    assert any(f"holds {holds}" in e for e in errors), errors


def test_a_trigger_that_is_not_a_string_is_refused() -> None:
    action, errors, _ = decide(trigger_phrases=[["markdown table"]])
    assert action == "reject" and any("is not a string" in e for e in errors), errors


def test_why_a_pipe_matters_the_loader_splits_on_it() -> None:
    """What the gate used to let through: one phrase that loads as three, two firing always."""
    text = "---\nname: csv-helper\ndescription: d\ntriggers: markdown table|a|i\n---\nbody\n"
    skill = parse_skill(text, Path("csv-helper/SKILL.md"))
    assert match_triggers([skill], "I am home")
    assert decide(trigger_phrases=["markdown table|a|i"])[0] == "reject"


@pytest.mark.parametrize("name", ["helper-2\n", "helper-2\r\n", "\nhelper-2"])
def test_a_skill_name_is_matched_whole(name: str) -> None:
    action, errors, _ = decide(name=name)
    assert action == "reject" and any("not a valid skill name" in e for e in errors), errors


def test_a_tool_name_is_matched_whole() -> None:
    spec = {**GOOD, "name": "disk_report\n"}
    decision = check_proposal(spec, "tool", [], AUTONOMOUS, COMPROMISED)
    assert decision.action == "reject"
    assert any("not a valid tool name" in e for e in decision.errors), decision.errors
