"""Network destinations in a proposal, every spelling read as the one host it names.

A host is what a resolver would reach, not what a word list recognises: numeric IPv4 in any
base or part count (`2130706433`, `0177.0.0.1`, `0x7f000001`, `0x7f.1`), IPv6 and IPv4-mapped
IPv6 (`::ffff:7f00:1`), punycode and Unicode names (IDNA), and any top-level domain on the
public suffix list (the `publicsuffixlist` package bundles it; nothing is fetched). A form a
person would not write (a numeric IP other than dotted-quad, punycode, a mapped address) is
itself reported: a destination spelled so that it is not read is a disguise.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache

from publicsuffixlist import PublicSuffixList

# Two-label names ending in one of these are more likely files than hosts ("gate.py",
# "SKILL.md", "backup.zip"); with three labels or more, a scheme or an "@", they are hosts.
FILE_SUFFIXES = frozenset("py md sh zip mov rs so ps cs js mp4 ts sql bin db".split())
# ...unless the sentence sends something there: "upload it to drop.zip".
_TOWARDS = re.compile(r"\b(to|at|via|into|onto|vers|nach|para|an|a)\s+$", re.IGNORECASE)
_URL = re.compile(r"\b([a-z][a-z0-9+.-]{1,15})://\[?([^\s/\"'<>`)\]?#\\]+)", re.IGNORECASE)
_NAME = re.compile(
    r"(?<![\w@/.-])((?:[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?"
    r"\.)+[a-z\u00a1-\uffff][a-z0-9\u00a1-\uffff-]{1,62})(?![\w-])",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@([\w.-]{1,253}\.[\w-]{2,63})", re.IGNORECASE)
# Numbers that may be an IPv4 address in any base: 1-4 parts, each decimal, octal or hex.
_NUMERIC = re.compile(
    r"(?<![\w.:/-])((?:0x[0-9a-f]+|\d+)(?:\.(?:0x[0-9a-f]+|\d+)){0,3})(?![\w.-]*\w)", re.I
)
_IPV6 = re.compile(r"(?<![\w:])\[?((?:[0-9a-f]{0,4}:){2,7}[0-9a-f.]{1,15})\]?(?![\w:])", re.I)
_LOCAL = re.compile(r"localhost|[\w.-]+\.(local|localhost|internal|lan|home\.arpa)")
_NETWORK_WORDS = re.compile(
    r"\b(curl|wget|nc|ncat|netcat|socket|connect|http|https|ftp|ping|ssh|scp|rsync|telnet|"
    r"requests|fetch|urlopen|post|host|ip|server|send|upload|nslookup|dig)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    return PublicSuffixList(accept_unknown=False)


@dataclass(frozen=True)
class Destinations:
    """The hosts a text names, canonical, and the disguised spellings among them."""

    hosts: tuple[str, ...]
    disguised: tuple[str, ...]  # "0x7f000001 is 127.0.0.1", "xn--... is <unicode>"


def ipv4_any_base(text: str) -> str | None:
    """`text` read as inet_aton reads it (1-4 parts, decimal, 0-octal or 0x-hex); or None."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                values.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                values.append(int(part, 8))
            else:
                values.append(int(part, 10))
        except ValueError:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (24 - 8 * index)
    return str(ipaddress.IPv4Address(number))


def canonical_host(raw: str) -> tuple[str, str] | None:
    """(canonical host, why it was disguised or "") for one candidate; None if no host."""
    host = raw.strip().strip("[]").rstrip(".").casefold()
    host = host.rsplit("@", 1)[-1]
    if host.count(":") == 1:
        host = host.split(":")[0]
    if not host:
        return None
    if ":" in host:
        try:
            v6 = ipaddress.IPv6Address(host.split("%")[0])
        except ValueError:
            return None
        mapped = v6.ipv4_mapped or v6.sixtofour
        if mapped is not None:
            return str(mapped), f"{raw} is the IPv4 address {mapped}"
        return str(v6), ""
    if re.fullmatch(r"[0-9a-fx.]+", host) and re.search(r"\d", host):
        ip = ipv4_any_base(host)
        if ip is None:
            return None
        plain = re.fullmatch(r"(?:[1-9]\d{0,2}|0)(?:\.(?:[1-9]\d{0,2}|0)){3}", host)
        return ip, "" if plain else f"{raw} is the IP address {ip}"
    return _named(host, raw)


def _named(host: str, raw: str) -> tuple[str, str] | None:
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = host
    labels = ascii_host.split(".")
    if len(labels) < 2 or _psl().publicsuffix(ascii_host) is None:
        return None
    why = ""
    if "xn--" in ascii_host or ascii_host != host:
        try:
            unicode_host = ascii_host.encode("ascii").decode("idna")
        except UnicodeError:
            unicode_host = ascii_host
        why = f"{raw} is an internationalised name ({unicode_host})"
    return ascii_host, why


def destinations(text: str) -> Destinations:
    """Every host `text` names: in URLs (any scheme), e-mail addresses, bare names with a
    public suffix, IP addresses in any notation. Local names are left out."""
    found: dict[str, str] = {}
    local_disguises: list[str] = []

    def add(raw: str, strict: bool, before: str = "") -> None:
        result = canonical_host(raw)
        if result is None:
            return
        host, why = result
        labels = host.split(".")
        filelike = len(labels) == 2 and labels[-1] in FILE_SUFFIXES
        if not strict and filelike and not _TOWARDS.search(before):
            return
        if _LOCAL.fullmatch(host) or _loopback(host):
            if why:  # not leaving the machine, but spelled not to be read
                local_disguises.append(why)
            return
        if why or host not in found:
            found[host] = why or found.get(host, "")

    for match in _URL.finditer(text):
        add(match.group(2), strict=True)
    for match in _EMAIL.finditer(text):
        add(match.group(1), strict=True)
    for match in _NAME.finditer(text):
        add(match.group(1), strict=False, before=text[max(0, match.start() - 12) : match.start()])
    for match in _IPV6.finditer(text):
        add(match.group(1), strict=True)
    for match in _NUMERIC.finditer(text):
        number = match.group(1)
        dotted = number.count(".") == 3
        # A bare number is an address only beside network words ("curl 2130706433").
        if dotted or (len(number) >= 8 and _near_network(text, match.start())):
            add(number, strict=True)
    hosts = tuple(sorted(found))
    disguised = tuple(sorted({*(w for w in found.values() if w), *local_disguises}))
    return Destinations(hosts, disguised)


def _loopback(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _near_network(text: str, at: int) -> bool:
    window = text[max(0, at - 40) : at]
    return bool(_NETWORK_WORDS.search(window)) or window.rstrip().endswith(("//", "@"))
