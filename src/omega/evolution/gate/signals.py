"""What a proposal's code and config would do, parsed: the gate's content signal.

Not a word list over the prose alone: network destinations (URLs, host names, IP addresses,
e-mail addresses, webhook-like endpoints), sensitive files read (browser profiles, keychains,
`~/.ssh`, `.env`, wallets, message stores), and broker, payment and messaging APIs are pulled
out of every field of the proposal, of the MCP servers a skill declares (command, args, env)
and of the scaffold a tool would get. From those facts, each gate category gets a verdict:
`yes` (the content shows it), `unsure` (part of it) or `no`, with the reason.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

import yaml

from omega.evolution.gate.disguise import disguises
from omega.evolution.gate.hosts import destinations
from omega.evolution.gate.lexicon import (
    API_SIGNS,
    DESTRUCTIVE_ACTS,
    DROP_SITES,
    GATE_NOUNS,
    GATE_TARGETS,
    MESSAGE_NOUNS,
    MESSAGE_VERBS,
    MONEY_NOUNS,
    SECRET_FILES,
    SECRET_WORDS,
    SEND_VERBS,
    THIRD_PARTIES,
    TRADE_VERBS,
    WEAKEN_VERBS,
    WEBHOOK_HOSTS,
)
from omega.evolution.gate.lexicon_more import OUTWARD_CHANNELS, PRIVATE_DATA, PUBLIC_API, unnegated
from omega.evolution.gate.normalize import readings
from omega.evolution.proposals import TOOL_NAME, scaffold_text

Verdict = Literal["yes", "no", "unsure"]
# Anchored at the start of a run of address characters, so a long run is scanned once.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@((?:[a-z0-9-]{1,63}\.)+[a-z]{2,})", re.IGNORECASE)
_PHONE = re.compile(r"\+\d[\d\s().-]{7,}\d")
# "100 AAPL", "50 x TSLA": a quantity and a ticker, read in the original case.
_TICKER = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:x\s+)?(?:\$)?([A-Z]{2,5})\b")
_AMOUNT = re.compile(
    r"[$€£¥]\s?\d|\b\d+(?:[.,]\d+)?\s?(?:usd|eur|gbp|chf|dollars?|euros?|btc|eth|usdt)\b",
    re.IGNORECASE,
)
_NOT_TICKERS = frozenset(
    "API URL JSON HTTP HTTPS CSV PDF SQL UTC GMT MB GB KB MS AM PM ID OK".split()
)
_SCHEME = re.compile(r"\b([a-z][a-z0-9+.-]{1,15})://([^\s/\"'<>`)\]?#\\]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Facts:
    """What the content would do, as parsed."""

    hosts: tuple[str, ...] = ()  # network destinations off this machine
    webhooks: tuple[str, ...] = ()  # destinations built to receive data (hooks, bins, tunnels)
    files: tuple[str, ...] = ()  # sensitive files or stores it reads
    apis: tuple[str, ...] = ()  # "broker: ib", "payment: stripe", "messaging: smtp"
    acts: tuple[str, ...] = ()  # what it says it does: send, trade, weaken, destroy...
    hidden: tuple[str, ...] = ()  # destinations or content the code cannot read as written
    public: tuple[str, ...] = ()  # hosts documented as public APIs, read over HTTPS only

    def as_dict(self) -> dict[str, list[str]]:
        """For the gate's record."""
        return {k: list(v) for k, v in self.__dict__.items() if v}


@dataclass(frozen=True)
class Finding:
    """One category's verdict from one signal, and why."""

    verdict: Verdict
    reason: str

    def as_dict(self) -> dict[str, str]:
        """For the gate's record."""
        return {"verdict": self.verdict, "reason": self.reason}


def sources(spec: dict[str, Any]) -> str:
    """Every field of a proposal, its declared MCP servers and its scaffold, as one text.

    Not `alternative_approaches`: what it says it will not do is neither written nor run."""
    spec = {k: v for k, v in spec.items() if k != "alternative_approaches"}
    parts = [json.dumps(spec, ensure_ascii=False, default=str)]
    for value in spec.values():
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(str(item) for item in value)
    parts += [_mcp_text(spec.get(key)) for key in ("mcp", "mcp_servers", "mcpServers")]
    parts.append(_mcp_text(_frontmatter_mcp(str(spec.get("content") or ""))))
    name = spec.get("name")
    if spec.get("kind") == "tool" and isinstance(name, str) and TOOL_NAME.fullmatch(name):
        # (Another name is no tool name: the gate rejects it on its own.)
        parts.append(_scaffold_fields(scaffold_text(name, 0, spec)))
    return "\n".join(p for p in parts if p)


def _mcp_text(value: object) -> str:
    """An MCP server declaration (mapping or list; command, args, env) as plain lines."""
    servers = list(value.values()) if isinstance(value, dict) else value
    if not isinstance(servers, list):
        return ""
    lines: list[str] = []
    for server in servers:
        if not isinstance(server, dict):
            continue
        args = server.get("args")
        command = [str(server.get("command", ""))]
        command += [str(a) for a in args] if isinstance(args, list) else []
        lines.append(" ".join(command))
        env = server.get("env")
        if isinstance(env, dict):
            lines += [f"{key}={val}" for key, val in env.items()]
    return "\n".join(lines)


def _frontmatter_mcp(content: str) -> object:
    """The `mcp:` of a YAML frontmatter the instructions may carry, if any."""
    if not content.startswith("---"):
        return None
    head = content[3:].split("\n---", 1)[0]
    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError:
        return None
    return data.get("mcp") if isinstance(data, dict) else None


def _scaffold_fields(text: str) -> str:
    """The scaffold's quoted fields read back (`# key: <json>` lines), as plain text."""
    values = []
    for line in text.splitlines():
        key, sep, literal = line.removeprefix("# ").partition(": ")
        if sep and line.startswith("# ") and key.isidentifier():
            try:
                values.append(json.dumps(json.loads(literal), ensure_ascii=False))
            except json.JSONDecodeError:
                continue
    return "\n".join(values)


def extract(spec: dict[str, Any]) -> Facts:
    """Parse what the proposal would reach, read and call."""
    raw = sources(spec)
    folded = unnegated(readings(raw))
    hidden = disguises(folded)
    text = f"{folded}\n{readings(hidden.readback)}" if hidden.readback else folded
    # IDN names are read before look-alikes are folded (folding would turn them into Latin).
    found = [destinations(unicodedata.normalize("NFKC", raw)), destinations(text)]
    hosts = {h for d in found for h in d.hosts}
    hosts |= {m.group(0).casefold() for m in DROP_SITES.finditer(text)}
    external = sorted(hosts)
    webhooks = sorted(
        h for h in external if any(sign.search(h) for sign in WEBHOOK_HOSTS.values())
    ) + [f"path: {m.group(0)}" for m in _webhook_paths(text)]
    webhooks += hidden.leaks
    files = sorted({label for label, sign in SECRET_FILES.items() if sign.search(text)})
    files += [f"credentials: glob {g}" for g in hidden.files]
    apis = sorted(
        {label for label, sign in API_SIGNS.items() if sign.search(text)} | {*hidden.apis}
    )
    acts = _acts(text, raw)
    disguised = [why for d in found for why in d.disguised] + hidden.runtime + hidden.encoded
    if hidden.runtime:
        acts.add("runtime_destination")
    facts = Facts(
        tuple(external),
        tuple(webhooks),
        tuple(files),
        tuple(apis),
        tuple(sorted(acts)),
        tuple(dict.fromkeys(disguised)),
    )
    return replace(facts, public=_public_hosts(facts, text))


def _public_hosts(facts: Facts, text: str) -> tuple[str, ...]:
    """The hosts, when every one is a documented public API read over HTTPS and nothing is
    sent: no secret, file, webhook, address, disguise or send verb. Otherwise none."""
    if not facts.hosts or not PUBLIC_API.search(text):
        return ()
    risky = {"send", "secret", "address", "message_send", "private", "outward", "trade"}
    if facts.webhooks or facts.files or facts.apis or facts.hidden or risky & set(facts.acts):
        return ()
    schemes = {m.group(1).casefold() for m in _SCHEME.finditer(text)}
    urls = {m.group(2).casefold().split(":")[0] for m in _SCHEME.finditer(text)}
    if schemes != {"https"} or not set(facts.hosts) <= urls:
        return ()
    return facts.hosts


_WEBHOOK_PATH = re.compile(r"/(api/)?webhooks?/|/hooks?/|/collect\b|/exfil|/upload\b", re.I)


def _webhook_paths(text: str) -> list[re.Match[str]]:
    return list(_WEBHOOK_PATH.finditer(text))[:3]


_ACTS: dict[str, re.Pattern[str]] = {
    "send": SEND_VERBS,
    "trade": TRADE_VERBS,
    "money": MONEY_NOUNS,
    "message": MESSAGE_NOUNS,
    "message_send": MESSAGE_VERBS,
    "third_party": THIRD_PARTIES,
    "secret": SECRET_WORDS,
    "weaken": WEAKEN_VERBS,
    "gate": GATE_NOUNS,
    "gate_target": GATE_TARGETS,
    "destroy": DESTRUCTIVE_ACTS,
    "private": PRIVATE_DATA,
    "outward": OUTWARD_CHANNELS,
}


def _acts(text: str, raw: str) -> set[str]:
    acts = {name for name, sign in _ACTS.items() if sign.search(text)}
    tickers = [m.group(1) for m in _TICKER.finditer(raw) if m.group(1) not in _NOT_TICKERS]
    if tickers:
        acts.add("quantity_of_securities")
    if _AMOUNT.search(text):
        acts.add("amount")
    if _PHONE.search(raw) or _EMAIL.search(text):
        acts.add("address")
    return acts


def content_findings(facts: Facts) -> dict[str, Finding]:
    """Each gate category's verdict from the parsed facts (only categories with something)."""
    acts = set(facts.acts)
    found: dict[str, Finding] = {}
    secret_files = [f for f in facts.files if f.startswith("credentials")]
    leaving = facts.hosts or facts.webhooks or acts & {"address", "runtime_destination"}
    if secret_files:
        found["credential_access"] = Finding("yes", f"reads {', '.join(secret_files)}")
    elif "secret" in acts:
        found["credential_access"] = Finding("unsure", "speaks of credentials or secrets")
    if (facts.files or "secret" in acts) and (leaving or "send" in acts):
        where = ", ".join(sorted({*facts.hosts, *facts.webhooks})[:4]) or "elsewhere"
        what = ", ".join(facts.files) or "credentials or secrets"
        verdict: Verdict = "yes" if facts.files or leaving else "unsure"
        found["data_exfiltration"] = Finding(verdict, f"sends {what} to {where}")
        if verdict == "yes" and "secret" in acts and not secret_files:
            # Credentials cannot be sent without being read.
            found["credential_access"] = Finding("yes", f"sends credentials to {where}")
    elif "private" in acts and (leaving or "outward" in acts):
        found["data_exfiltration"] = Finding(
            "yes", "puts the owner's private data where it leaves the machine"
        )
    elif facts.webhooks or (facts.hosts and "send" in acts):
        found["data_exfiltration"] = Finding(
            "unsure",
            f"sends data off the machine: {', '.join(sorted({*facts.webhooks, *facts.hosts})[:4])}",
        )
    money_apis = [a for a in facts.apis if a.split(":")[0] in ("broker", "payment")]
    assets = acts & {"quantity_of_securities", "amount", "money"}
    if "trade" in acts and (money_apis or assets):
        reason = f"{'; '.join(money_apis) or 'securities or money'} with a buy/sell/pay verb"
        found["financial_transactions"] = Finding("yes", reason)
    elif money_apis:
        found["financial_transactions"] = Finding("unsure", f"calls {', '.join(money_apis)}")
    msg_apis = [a for a in facts.apis if a.startswith("messaging")]
    messaging = {"message", "message_send"} <= acts
    if msg_apis and (acts & {"message_send", "address", "third_party", "message"}):
        found["third_party_messaging"] = Finding("yes", f"sends messages via {', '.join(msg_apis)}")
    elif messaging and acts & {"address", "third_party"}:
        found["third_party_messaging"] = Finding("yes", "sends messages to other people")
    elif msg_apis or messaging:
        found["third_party_messaging"] = Finding("unsure", "sends messages; to whom is unclear")
    if "gate_target" in acts or ("weaken" in acts and "gate" in acts):
        found["self_modification"] = Finding("yes", "changes Omega's gate, sandbox or approval")
    elif "gate" in acts:
        found["self_modification"] = Finding("unsure", "speaks of Omega's gate or sandbox")
    if "destroy" in acts:
        found["system_destruction"] = Finding("yes", "destroys data or the system")
    return found


@dataclass(frozen=True)
class Judgement:
    """The model judge's verdicts (judge.py): judged now, from the cache, or unavailable."""

    findings: dict[str, Finding]
    status: Literal["judged", "cached", "unavailable"]
    detail: str = ""

    @classmethod
    def unavailable(cls, categories: Iterable[str], why: str) -> Judgement:
        """No usable verdict: every category is uncertain, so the owner decides."""
        reason = f"the model judge gave no valid verdict ({why})"
        return cls({c: Finding("unsure", reason) for c in categories}, "unavailable", why)

    def as_dict(self) -> dict[str, Any]:
        """For the gate's record."""
        return {
            "status": self.status,
            "detail": self.detail,
            "findings": {c: f.as_dict() for c, f in self.findings.items()},
        }
