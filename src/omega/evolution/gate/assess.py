"""The gate's own judgement of a proposal: category and risk derived from what it says it does.

The model's `category` and `risk_level` are labels it chose; here they are normalized
("credential-access", " Credential_Access " -> credential_access) and set beside what the
content shows: declared permissions and side effects, shell commands, URLs, credential and
payment words, downloads piped into a shell. The gate takes the stricter of the two.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from omega.evolution.gate.lexicon_more import unnegated

RISK = {"low": 1, "medium": 2, "high": 3}
# Categories whose words a skill may explain without doing ("how to choose a strong password").
EXPLAINABLE = frozenset({"credential_access", "financial_transactions", "network_exploit"})
_SEPARATORS = re.compile(r"[\s\-./]+")


def normalize_label(value: object) -> str:
    """A category or risk label as the gate compares it: NFKC, case-folded, words joined by _."""
    text = unicodedata.normalize("NFKC", str(value)).casefold().strip()
    return _SEPARATORS.sub("_", text).strip("_")


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


# Derived category -> what in the text shows it.
CATEGORY_SIGNS: dict[str, re.Pattern[str]] = {
    "credential_access": _words(
        r"passw(or)?d",
        r"credential",
        r"\bsecrets?\b",
        r"api[\s_-]?keys?",
        r"(access|auth|bearer|api|session)[\s_-]?tokens?",
        r"private[\s_-]?keys?",
        r"ssh[\s_-]?keys?",
        r"\.ssh/",
        r"id_rsa",
        r"keychain",
        r"keyring",
        r"\bcookies?\b",
        r"/etc/shadow",
        r"seed[\s_-]?phrase",
        r"\bdump(s|ing|er)?\b",
    ),
    "financial_transactions": _words(
        r"\bpayments?\b",
        r"\bpay\s+(for|bills?|invoices?|someone|them|him|her)\b",
        r"credit[\s_-]?card",
        r"card[\s_-]?number",
        r"\biban\b",
        r"wire[\s_-]?transfer",
        r"transfer[\s_-]+(money|funds)",
        r"\bpurchas",
        r"\bcheckout\b",
        r"\bbitcoin\b",
        r"\bcrypto[\s_-]?(currency|wallet)",
        r"\bbank[\s_-]?account",
        # Trading: placing orders on a brokerage account is a financial transaction too.
        r"\b(buy|sell)\s+(and\s+sell\s+)?(orders?|shares?|stocks?|options?|futures)\b",
        r"\b(market|limit|stop)[\s_-]?orders?\b",
        r"\b(place|submit|send)s?\s+(an?\s+|the\s+)?(\w+\s+)?orders?\b",
        r"\bbrokerage\b",
        r"\b(stock|share)?broker\s+(api|account)\b",
        r"\btrad(e|es|ing)\s+(stocks?|shares?|options?|futures|forex|crypto)",
    ),
    "system_destruction": _words(
        r"rm\s+-[a-z]*r[a-z]*f",
        r"rm\s+-[a-z]*f[a-z]*r",
        r"\bmkfs\b",
        r"\bdd\s+if=",
        r"\bshred\b",
        r"\bwipe\b",
        r"drop\s+table",
        r"format\s+(the\s+)?(disk|drive)",
        r"delete\s+(all|every)",
    ),
    "network_exploit": _words(
        r"\bexploit",
        r"\bnmap\b",
        r"port[\s_-]?scan",
        r"brute[\s_-]?forc",
        r"sql[\s_-]?injection",
        r"reverse[\s_-]?shell",
        r"\bnc\s+-[a-z]*e\b",
        r"\bddos\b",
        r"\bphishing\b",
    ),
    "self_modification": _words(
        r"\$omega_home",
        r"\.omega/",
        r"config\.toml",
        r"memory\.db",
        r"system_prompt\.md",
        r"skill\.md",
        r"self-healing\.json",
        r"omega/(skills|tools)/",
        r"(disable|bypass|turn\s+off)\s+(the\s+)?(gate|sandbox|approval)",
    ),
}
# Downloaded content run by a shell or interpreter.
SHELL_PIPE = re.compile(
    r"(\b(curl|wget|fetch|iwr|invoke-webrequest)\b[^\n]*?\|\s*(sudo\s+)?"
    r"(ba|z|da|k|fi)?sh\b|\b(curl|wget)\b[^\n]*?\|\s*(sudo\s+)?(python[0-9.]*|perl|ruby|node)\b"
    r"|(ba|z)?sh\s+<\(\s*(curl|wget)|\beval\s+\"?\$\((curl|wget))",
    re.IGNORECASE,
)
HIGH_SIGNS = _words(
    r"\bsudo\b",
    r"\broot\b",
    r"\badmin(istrator)?\b",
    r"\bchmod\b",
    r"\bchown\b",
    r"\beval\b",
    r"\bexec\b",
    r"\bsystemctl\b",
    r"\bcrontab\b",
    r"registry[\s_-]?write",
    r"\bkill\s+-9\b",
)
MEDIUM_SIGNS = _words(
    r"https?://",
    r"\bwww\.",
    r"\bcurl\b",
    r"\bwget\b",
    r"\bdownload",
    r"\bupload",
    r"\bsend(s|ing)?\b",
    r"\bpost(s|ing)?\b",
    r"\bemails?\b",
    r"\bwrite(s)?\b",
    r"\bdelete(s)?\b",
    r"\bremove(s)?\b",
    r"\bmodif(y|ies)\b",
    r"\brun_shell\b",
    r"\bshell\b",
    r"\bexecute",
    r"\bsubprocess\b",
    r"```\s*(sh|bash|shell|zsh|console)",
)


@dataclass(frozen=True)
class Assessment:
    """What the gate makes of a proposal's content."""

    categories: frozenset[str]
    risk: str
    reasons: tuple[str, ...]
    explained: tuple[str, ...] = ()  # words it explains rather than acts on


def proposal_text(spec: dict[str, Any]) -> str:
    """Everything in a proposal that says what it would do (not the rationale's alternatives)."""
    parts: list[str] = []
    for key in ("name", "description", "content", "rationale"):
        parts.append(str(spec.get(key) or ""))
    for key in ("side_effects", "os_permissions", "trigger_phrases"):
        value = spec.get(key)
        if isinstance(value, list):
            parts.extend(str(item) for item in value)
    parts.append(json.dumps(spec.get("inputs", {}), ensure_ascii=False, default=str))
    return unnegated(unicodedata.normalize("NFKC", "\n".join(parts)))


def assess(
    spec: dict[str, Any], public_hosts: Collection[str] = (), explaining: bool = False
) -> Assessment:
    """Derive categories and risk from the content of a proposal. URLs on `public_hosts`
    (documented public APIs) are not a risk of their own; when `explaining`, credential and
    trading words are what the skill talks about, not what it does."""
    text = proposal_text(spec)
    for host in public_hosts:
        text = re.sub(rf"https://{re.escape(host)}\S*", " ", text, flags=re.IGNORECASE)
    reasons: list[str] = []
    explained: list[str] = []
    categories = set()
    for category, pattern in CATEGORY_SIGNS.items():
        match = pattern.search(text)
        if match and explaining and category in EXPLAINABLE:
            explained.append(f"{category}: explains {match.group(0)!r}, does not do it")
        elif match:
            categories.add(category)
            reasons.append(f"{category}: mentions {match.group(0)!r}")
    risk = "low"
    pipe = SHELL_PIPE.search(text)
    high = HIGH_SIGNS.search(text)
    if pipe:
        reasons.append(f"pipes a download into an interpreter: {pipe.group(0)!r}")
    if high:
        reasons.append(f"high risk: mentions {high.group(0)!r}")
    permissions = spec.get("os_permissions")
    effects = spec.get("side_effects")
    if pipe or high or categories:
        risk = "high"
    elif MEDIUM_SIGNS.search(text) or permissions or effects:
        medium = MEDIUM_SIGNS.search(text)
        reasons.append(
            f"medium risk: mentions {medium.group(0)!r}"
            if medium
            else "medium risk: declares side effects or OS permissions"
        )
        risk = "medium"
    return Assessment(frozenset(categories), risk, tuple(reasons), tuple(explained))


def stricter(a: str, b: str) -> str:
    """The riskier of two risk levels (unknown counts as high)."""
    return max((a, b), key=lambda level: RISK.get(level, 3))
