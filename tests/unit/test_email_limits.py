"""A hostile mail costs linear time: the caps before and after parsing (limits.py), the quoted
history and HTML read in one pass (text.py), and parse_mail's time bounded on generated
hostile mail (generously: the point is that it does not grow with the square of the input)."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.email.limits import MAX_CONTAINERS, MAX_DEPTH, MAX_HEADERS, MAX_PARAMS
from omega.channels.email.mail import parse_mail
from omega.channels.email.text import _ATTRIBUTION, html_to_text, strip_quoted

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

HEAD = b"From: Ana <ana@example.org>\r\nSubject: hi\r\nMessage-ID: <h@example.org>\r\n"


def _nested(depth: int, leaf: bytes = b"Content-Type: text/plain\r\n\r\nleaf\r\n") -> bytes:
    body = leaf
    for level in range(depth):
        b = f"b{level}".encode()
        body = (
            b'Content-Type: multipart/mixed; boundary="'
            + b
            + b'"\r\n\r\n--'
            + b
            + b"\r\n"
            + body
            + b"\r\n--"
            + b
            + b"--\r\n"
        )
    return body


def _refusal(raw: bytes) -> str:
    found = parse_mail(raw).refusal
    return found.code if found else ""


def test_normal_mail_fits_every_cap() -> None:
    mail = HEAD + b"MIME-Version: 1.0\r\n" + _nested(4) + b"x\r\n" * 50_000
    parsed = parse_mail(mail)
    assert parsed.refusal is None and parsed.text == "leaf"


def test_each_cap_refuses_the_mail_whole() -> None:
    assert _refusal(HEAD + b"\r\n" + b"x" * (10 * 1024 * 1024)) == "size"
    assert _refusal(HEAD + b"\r\n" + b"x\r\n" * 200_001) == "lines"
    containers = b"".join(b"Content-Type: multipart/mixed\r\n" for _ in range(MAX_CONTAINERS + 1))
    assert _refusal(HEAD + containers + b"\r\n") == "containers"
    params = b'Content-Type: text/plain; a="' + b";" * (MAX_PARAMS + 1) + b"\r\n"
    assert _refusal(HEAD + params + b"\r\nbody") == "params"
    headers = b"".join(b"X-H%d: v\r\n" % n for n in range(MAX_HEADERS))
    assert _refusal(HEAD + headers + b"\r\nbody") == "headers"
    long_header = b"X-Long: " + b"a " * 40_000 + b"\r\n"
    assert _refusal(HEAD + long_header + b"\r\nbody") == "header_size"
    assert _refusal(HEAD + b"MIME-Version: 1.0\r\n" + _nested(MAX_DEPTH + 1)) == "depth"
    assert _refusal(HEAD + b"MIME-Version: 1.0\r\n" + _nested(MAX_DEPTH)) == ""


def _strip_quoted_before(text: str) -> str:
    """strip_quoted as it was (quadratic): the reference the linear one must agree with."""
    lines = text.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        rest = [x for x in lines[index + 1 :] if x.strip()]
        if line.rstrip() == "--":
            break
        if _ATTRIBUTION.match(line.strip()) and (not rest or rest[0].lstrip().startswith(">")):
            break
        if line.lstrip().startswith(">") and all(x.lstrip().startswith(">") for x in rest):
            break
        kept.append(line)
    return "\n".join(kept).strip()


_LINES = st.sampled_from(
    ["hi", "", "  ", "> old", " >> older", "On Mon, Ana wrote:", "-- ", "--", "From: x", "ok"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES | st.text(max_size=20), max_size=30))
def test_linear_strip_quoted_agrees_with_the_old_one(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert strip_quoted(text) == _strip_quoted_before(text)


def test_html_is_read_as_before() -> None:
    markup = (
        "<html><head><title>t</title><style>p {}</style></head><body><p>Yes,&nbsp;please"
        "</p><script>evil()</script><!-- hidden --><div>to<b>morrow</b></div>a &lt; b < c"
        "<br/>end</BODY></html>"
    )
    assert html_to_text(markup) == "Yes, please\n\ntomorrow\na < b < c\nend"
    assert html_to_text("<p>open <script>never closed") == "open"
    assert html_to_text("text <!-- never closed") == "text"
    assert html_to_text("a <b") == "a <b"


_HOSTILE_HTML = ["<a ", "<!--", "</a", "<", "<<>", "&#", "<script>", "<p x='>", "<!"]


def _hostile(kind: str, size: int) -> bytes:
    if kind == "lines":
        return HEAD + b"\r\n" + b"> hi\r\nyes\r\n" * (size // 2)
    if kind == "nested":
        return HEAD + b"MIME-Version: 1.0\r\n" + _nested(MAX_DEPTH, b"\r\n" + b"x\r\n" * size)
    if kind == "headers":  # every header as long or as many as the caps let through
        subject = b"Subject: " + b"=?utf-8?q?a \r\n " * (size // 16) + b"\r\n"
        results = b"Authentication-Results: mx.example.org; " + b"(" * 15_000 + b"\r\n"
        name = b"From: " + b"=?utf-8?q?" * 150 + b" <ana@example.org>\r\n"
        extra = b"".join(b"X-H%d: (((\r\n" % n for n in range(MAX_HEADERS - 10))
        refs = b"References: " + b"<a@b> " * (size // 6) + b"\r\n"
        return name + subject + results + extra + refs + b"\r\nbody"
    if kind == "params":
        params = b'Content-Type: text/plain; a="' + b";" * (MAX_PARAMS - 1) + b"x" * size
        return HEAD + params + b"\r\n\r\nbody"
    piece = _HOSTILE_HTML[size % len(_HOSTILE_HTML)].encode()
    return HEAD + b"Content-Type: text/html\r\n\r\n" + piece * (size * 3)


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from(["lines", "nested", "headers", "params", "html"]),
    st.integers(min_value=50_000, max_value=60_000),
)
def test_hostile_mail_parses_in_bounded_time(kind: str, size: int) -> None:
    raw = _hostile(kind, size)
    started = time.perf_counter()
    parsed = parse_mail(raw)
    assert time.perf_counter() - started < 2.0, (kind, size)
    assert isinstance(parsed.text, str)


def test_sixty_thousand_quoted_lines_are_linear() -> None:
    text = "\n".join(["new text", "On Mon, Ana wrote:"] + ["> quoted"] * 60_000)
    started = time.perf_counter()
    assert strip_quoted(text) == "new text"
    assert strip_quoted(re.sub("> ", "", text)).startswith("new text")
    assert time.perf_counter() - started < 2.0
