"""Destinations and secrets a proposal builds at run time or encodes, so no list can read them.

What the code cannot read, it reports: a destination joined from pieces (`"hoo" + "ks.io"`,
`"".join([...])`), taken from the environment (`$VAR`, `${VAR}`, `os.environ`, "the address in
CONTINUITY_TARGET", "the address in the note"), a DNS lookup of a computed name
(`nslookup $(...).x.zip`), a `data:` URL, a Markdown or HTML image on an external host, raw
SMTP (`HELO`, `MAIL FROM`, a socket to port 25/465/587), encoded text (base64, hex, `\\x`
escapes, percent-encoding, character codes, reversed strings) and globs over sensitive paths
(`../../.s?h/id_*`, `~/.aws/cred*`, `conf*.toml`). Literal joins and decodable blobs are read
back and handed to the other signals beside the original text.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import re
from dataclasses import dataclass, field

from omega.evolution.gate.hosts import destinations


def _re(*patterns: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)


_JOIN_LITERALS = re.compile(r"([\"'])(?:\s*(?:\+|\.|\|\||&)\s*|\s+)\1")
_JOIN_LIST = re.compile(r"join\(\s*\[([^\]]{1,400})\]\s*\)")
_LITERAL = re.compile(r"[\"']([^\"'\n]{0,200})[\"']")
NETWORK = _re(
    r"\b(curl|wget|nc|ncat|netcat|socat|telnet|ssh|scp|rsync|ftp|sftp|nslookup|dig|ping)\b",
    r"\b(requests|httpx|aiohttp|urllib|urlopen|fetch|axios|xmlhttprequest|websocket|socket)\b",
    r"https?://|\b(send|post|upload|mail|e-?mail|forward|deliver|transmit|push|sync|copy|"
    r"enviar|envoyer|senden|schicken|mandar|encaminhar)\b",
)
ENV_REFERENCE = _re(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?",
    r"\bos\.environ\b|\bgetenv\s*\(|\bprocess\.env\b|\bENV\s*\[|\$env:",
)
# "the address in the note", "the URL stored in X": a destination the reader is not shown.
INDIRECT = _re(
    r"\b(address|url|endpoint|destination|recipient|host|server|inbox|target|location|contact)"
    r"\s+(in|from|stored\s+in|given\s+in|named\s+in|listed\s+in|written\s+in|found\s+in|kept\s+in|"
    r"saved\s+in)\s+(the|my|a|that|this)?\s*(note|notes|file|variable|env|environment|config|"
    r"setting|settings|memo|clipboard|message|document|sticky)",
    r"\b(whatever|the\s+usual|the\s+agreed|the\s+other)\s+(address|url|endpoint|destination|host)",
    r"\bdireccion\s+(de|en|que\s+(esta|aparece|figura)\s+en)\s+(la\s+|el\s+)?"
    r"(nota|archivo|fichero|variable)",
    r"\badresse\s+(de|dans|indiquee\s+dans|figurant\s+dans|notee\s+dans)\s+(la\s+|le\s+)?"
    r"(note|fichier|variable|memo)",
    r"\badresse\s+(aus|in|im|auf)\s+(der\s+|dem\s+|einer\s+)?(notiz|datei|variable|zettel)",
    r"\bendereco\s+(da|na|do|no|que\s+esta\s+na)\s+(nota|arquivo|variavel)",
)
# An all-caps name given as where something goes: "to the address in CONTINUITY_TARGET".
INDIRECT_NAME = re.compile(
    r"\b(?:address|url|endpoint|destination|recipient|host|target|inbox)\s+(?:in|from|of|at)\s+"
    r"(?:the\s+)?((?-i:[A-Z][A-Z0-9_]{3,}))\b",
    re.IGNORECASE,
)
DNS_COMPUTED = _re(
    r"\b(nslookup|dig|host|drill|getent\s+hosts|resolvectl\s+query|gethostbyname|getaddrinfo|"
    r"dns\.resolver\.\w+|resolve)\b[^\n]{0,120}?(\$\(|`|\$\{|\{[^}]*\}|\+\s*\w|%s|\.format\()",
)
DATA_URL = _re(r"\bdata:[\w.+-]+/[\w.+-]+[;,]")
IMAGE = _re(
    r"!\[[^\]]{0,200}\]\(\s*<?((?:https?:)?//[^\s)>]+)", r"<img\b[^>]{0,200}src\s*=\s*[\"']?"
)
# A host that is not written out: a placeholder before the first "/" after the scheme.
RUNTIME_URL = _re(
    r"\b[a-z][a-z0-9+.-]{1,15}://[^\s\"'/]{0,120}?(\{|\$|%s|%\(|<[a-z_]+>)",
    r"[\"'][a-z][a-z0-9+.-]{1,15}://[^\"'\s/]*[\"']\s*\+",
)
# Private data put into a URL (a query, an image address): it leaves with the request.
PRIVATE_IN_URL = _re(
    r"://[^\s\"']{0,200}?[{$<%(](\w*\.)?\w*(history|message|transcript|memory|conversation|chat|"
    r"contact|password|passwd|token|secret|key|cookie|note|mail|phone|file|content|data|"
    r"summary|context|prompt|diary|journal)",
)
RAW_SMTP = _re(
    r"\b(HELO|EHLO)\s+\S",
    r"\bMAIL\s+FROM\s*:",
    r"\bRCPT\s+TO\s*:",
    r"\bport\s*[:=]?\s*(25|465|587)\b",
    r"[:,]\s*(25|465|587)\s*[)\]]",
    r":(25|465|587)\b",
)
ENCODED = _re(
    r"\bbase64\s+(-d|--decode|-D)\b|\bb64decode\b|\batob\s*\(|frombase64string|base64\.decode",
    r"bytes\.fromhex|\bunhexlify\b|\bxxd\s+-r\b|\bfromhex\b",
    r"(\\x[0-9a-f]{2}){4,}",
    r"(\\u00[0-9a-f]{2}){4,}",
    r"(%[0-9a-f]{2}){4,}",
    r"\bchr\s*\(\s*\d+\s*\)\s*\+|fromcharcode",
    r"\brot_?13\b|\bcaesar\b",
    r"\[\s*::\s*-1\s*\]|\|\s*rev\b|\breversed?\s*\(",
)
_BLOB = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}){4,}")
_PERCENT = re.compile(r"(?:%[0-9a-fA-F]{2}){4,}")
_GLOB_PATH = re.compile(r"[~\w./$-]*[*?\[][~\w./*?\[\]$-]*")
# Paths whose secrets a glob may reach (compared by their last components).
SENSITIVE_PATHS = (
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".ssh/id_ecdsa",
    ".ssh/authorized_keys",
    ".aws/credentials",
    ".aws/config",
    ".config/gcloud/application_default_credentials.json",
    ".git-credentials",
    ".netrc",
    ".env",
    ".pgpass",
    ".docker/config.json",
    ".kube/config",
    ".gnupg/private-keys-v1.d",
    ".omega/config.toml",
    ".omega/memory.db",
    "config.toml",
    "memory.db",
    "logins.json",
    "key4.db",
    "cookies.sqlite",
    "wallet.dat",
    ".bash_history",
    ".zsh_history",
    "credentials.json",
    "secrets.yaml",
)


@dataclass
class Disguises:
    """What the text hides or builds at run time; `readback` is the decoded or joined text."""

    runtime: list[str] = field(default_factory=list)  # destinations not written out
    encoded: list[str] = field(default_factory=list)  # encodings and obfuscations
    files: list[str] = field(default_factory=list)  # sensitive paths reached by globs
    apis: list[str] = field(default_factory=list)  # "messaging: raw smtp"
    leaks: list[str] = field(default_factory=list)  # channels that carry data out by design
    readback: str = ""


def joined_literals(text: str) -> str:
    """String literals joined as the program would join them (`"ho" + "oks.io"` -> hooks.io)."""
    text = _JOIN_LIST.sub(lambda m: '"' + "".join(_LITERAL.findall(m.group(1))) + '"', text)
    previous = None
    while previous != text:
        previous, text = text, _JOIN_LITERALS.sub("", text)
    return text


def _decoded(text: str) -> list[str]:
    """Base64 blobs, `\\x` escapes and percent-encoding that decode to readable text."""
    out = []
    for blob in _BLOB.findall(text):
        if blob.isalpha() or blob.isdigit():
            continue
        for decoder in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                raw = decoder(blob + "=" * (-len(blob) % 4))
                value = raw.decode("utf-8")
            except (binascii.Error, ValueError):
                continue
            if value and sum(c.isprintable() for c in value) / len(value) > 0.9:
                out.append(value)
                break
    for escaped in _HEX_ESCAPES.findall(text):
        try:
            out.append(bytes.fromhex(escaped.replace("\\x", "")).decode("utf-8"))
        except ValueError:
            continue
    for encoded in _PERCENT.findall(text):
        try:
            out.append(bytes.fromhex(encoded.replace("%", "")).decode("utf-8"))
        except ValueError:
            continue
    return out


def sensitive_glob(pattern: str) -> str | None:
    """The sensitive path a glob pattern reaches, if any."""
    parts = [p for p in pattern.replace("\\", "/").split("/") if p not in ("", ".", "..", "~")]
    if not parts or not any(c in pattern for c in "*?["):
        return None
    for path in SENSITIVE_PATHS:
        wanted = path.split("/")
        tail = parts[-len(wanted) :]
        if len(tail) == len(wanted) and all(
            fnmatch.fnmatchcase(w, t) for w, t in zip(wanted, tail, strict=True)
        ):
            if not any(c in "".join(tail) for c in "*?["):
                continue
            return path
    return None


def disguises(text: str) -> Disguises:
    """Everything `text` (already folded) builds at run time or encodes."""
    found = Disguises()
    joined = joined_literals(text)
    decoded = _decoded(text)
    found.readback = "\n".join(([joined] if joined != text else []) + decoded)
    if decoded:
        found.encoded.append("decodes to: " + "; ".join(d[:60] for d in decoded[:3]))
    networked = bool(NETWORK.search(text))
    env = ENV_REFERENCE.search(text)
    if env and networked:
        found.runtime.append(f"a destination or payload from the environment ({env.group(0)})")
    match = INDIRECT.search(text) or INDIRECT_NAME.search(text)
    if match:
        found.runtime.append(f"a destination it does not show ({match.group(0)!r})")
    if joined != text:
        new = set(destinations(joined).hosts) - set(destinations(text).hosts)
        if new:
            found.runtime.append(f"a destination joined from pieces ({', '.join(sorted(new))})")
    for sign, what in ((RUNTIME_URL, "a URL built at run time"),):
        match = sign.search(text)
        if match:
            found.runtime.append(f"{what} ({match.group(0)[:60]!r})")
    if match := PRIVATE_IN_URL.search(text):
        found.leaks.append(f"private data in a URL ({match.group(0)[:60]!r})")
    if match := DNS_COMPUTED.search(text):
        found.leaks.append(f"a DNS lookup of a computed name ({match.group(0)[:60]!r})")
    if match := DATA_URL.search(text):
        found.encoded.append(f"a data: URL ({match.group(0)!r})")
    if match := IMAGE.search(text):
        found.leaks.append(f"an image loaded from elsewhere ({match.group(0)[:60]!r})")
    if RAW_SMTP.search(text):
        found.apis.append("messaging: raw smtp")
    if match := ENCODED.search(text):
        found.encoded.append(f"encoded or obfuscated text ({match.group(0)[:40]!r})")
    for token in _GLOB_PATH.findall(text):
        path = sensitive_glob(token)
        if path:
            found.files.append(f"{token} reaches {path}")
    return found
