"""The web page attacked with what strangers control, against a running `omega start`.

Text a stranger can put in memory.db (a message, a display name, a gap's title, a proposal, a
lesson, a tool's output or arguments, an alert, a fact, a chat line) is shown on the owner's
page: on every page it stays text (escaped: no element, attribute or `javascript:` link of
its making), in a real browser no script of its making runs, neither in what the page was
rendered with nor in what arrives live on the chat; and a path of its making cannot forge a
line of omega.log.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest

from omega.evolution.gaps import LimitationStore
from omega.evolution.proposals import ProposalStore
from omega.memory.audit import AuditEntry
from omega.memory.store import Store
from omega.types import ToolCall
from tests.conftest import openai_env
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.web_support import RunningWeb, login, seed, serving

# Closes an attribute or a tag wherever it lands, then makes an element, a handler, a script.
XSS = (
    '"\'><b data-pwn=1>x</b><img src=x data-pwn=2 onerror="window.__pwned=1">'
    "<script>window.__pwned=2</script>"
)
LINK = "javascript:window.__pwned=3"
PAGES = [
    "/",
    "/chat",
    "/limitations",
    "/limitations?status=resolved",
    "/proposals",
    "/fragments",
    "/evolution",
    "/tasks",
    "/people",
    "/person?id=" + httpx.QueryParams({"x": XSS})["x"],
    "/conversations",
    "/audit",
    "/tools",
    "/health",
]

# Every page shows the stranger's text somewhere (`*`: a proposal's or conversation's own page).
SHOWN = {"/", "/chat", "/limitations", "/proposals", "/proposals/*", "/fragments", "/evolution"}
SHOWN |= {"/tasks", "/people", "/person", "/conversations", "/conversations/*", "/audit"}
SHOWN |= {"/tools", "/health"}


def _hostile(home: Path) -> dict[str, Any]:
    """Every kind of stranger-made text the dashboard shows, each carrying XSS."""
    ids = seed(home)
    store = Store(home / "memory.db")
    try:
        gaps = LimitationStore(store)
        gap, _ = gaps.add(f"gap {XSS}", f"desc {XSS}", f"plan {XSS}")
        closed, _ = gaps.add(f"closed {XSS}", "d")
        gaps.resolve(str(closed.id), f"note {XSS}", by=f"by {XSS}")
        proposals = ProposalStore(store)
        filed = proposals.file(
            "skill",
            {
                "name": "evil-skill",
                "description": f"skill {XSS}",
                "content": f"# {XSS}\n{LINK}",
                "risk_level": XSS,
                "category": XSS,
            },
            goal=XSS,
            source=XSS,
            evidence=[XSS, LINK],
            gate={"action": "manual_review", "errors": [XSS], "warnings": [XSS]},
        ).proposal
        proposals.file(
            "lesson",
            {"skill": XSS, "content": f"lesson {XSS}", "description": XSS},
            goal=XSS,
            source="reflection",
            evidence=[XSS],
            gate={"action": "manual_review", "errors": [], "warnings": []},
        )
        proposals.add_fragment("reply", f"fragment {XSS}", XSS)
        proposals.add_learnings("openai", [f"learned {XSS}"], "*")
        store.create_task(
            channel="telegram",
            sender_id=XSS,
            reply_target=XSS,
            description=f"task {XSS}",
            due_at=datetime.now(UTC) + timedelta(days=1),
            repeat="once",
            timezone="UTC",
        )
        store.store_exchange("telegram", XSS, f"said {XSS}", f"answered {XSS}")
        store.set_fact(XSS, f"key {XSS}", f"value {XSS}")
        store.set_fact("ana", "language", XSS)
        store.audit(
            AuditEntry(
                channel=XSS,
                sender_id=XSS,
                status="denied",
                event=XSS,
                input_text=XSS,
                output_text=LINK,
                detail=XSS,
                provider=XSS,
                model=XSS,
            )
        )
        store.record_tool_calls(
            [ToolCall(f"t{XSS}"[:60], {"x": XSS}, False, XSS, 5, XSS)],
            agent=XSS,
            channel="telegram",
            sender_id=XSS,
        )
        store.pairing_offer("telegram", "666", "666", XSS, XSS, datetime.now(UTC))
        store.grant_access("telegram", XSS, "person", XSS)
        store.keep_owner_alert(f"alert {XSS}", "alert")
        with store.transaction() as conn:
            for direction, text in (("in", f"owner {XSS}"), ("out", f"reply {XSS}")):
                conn.execute(
                    "INSERT INTO web_events (created_at, direction, kind, text, media) "
                    "VALUES (?, ?, ?, ?, ?)",
                    ("2026-01-01T00:00:00.000000Z", direction, f"k{XSS}", text, ""),
                )
    finally:
        store.close()
    return {**ids, "gap": gap.id, "proposal": filed.id}


@pytest.fixture
def web(fake_openai: FakeOpenAI, isolated_env: Path) -> Iterator[tuple[RunningWeb, dict[str, Any]]]:
    ids = _hostile(isolated_env)
    with serving(isolated_env, openai_env(fake_openai)) as running:
        yield running, ids


class _Elements(HTMLParser):
    """What a page's HTML makes: elements, scripts, handlers, links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "data-pwn" or name.startswith("on"):
                self.found.append(f"<{tag} {name}>")
            link = (value or "") if name in ("href", "src", "action", "formaction") else ""
            if link.strip().lower().startswith(("javascript:", "data:")):
                self.found.append(f"<{tag} {name}={value!r}>")
        if tag == "script" and dict(attrs).get("src") != "/static/app.js":
            self.found.append("<script>")


def _made_by_the_stranger(html: str) -> list[str]:
    """The elements, handlers, scripts and links on a page that are no part of the page's own
    making."""
    parser = _Elements()
    parser.feed(html)
    return parser.found


def _pages(ids: dict[str, Any]) -> list[str]:
    proposals = [f"/proposals/{ids['proposal']}", f"/proposals/{int(ids['proposal']) + 1}"]
    return PAGES + proposals


def test_stranger_text_is_escaped_on_every_page(web: tuple[RunningWeb, dict[str, Any]]) -> None:
    running, ids = web
    client, _ = login(running, timeout=30)
    shown: set[str] = set()
    with closing(client):
        found = client.get("/conversations")
        links = re.findall(r'href="(/conversations/[0-9a-f]+)"', found.text)
        assert links
        for path in _pages(ids) + links:
            page = client.get(path)
            assert page.status_code == 200, (path, page.text[:300])
            assert "text/html" in page.headers["content-type"]
            assert _made_by_the_stranger(page.text) == [], path
            if "&lt;b data-pwn=1&gt;" in page.text:
                shown.add(re.sub(r"/[0-9a-f]+$", "/*", path.split("?")[0]))
    assert shown >= SHOWN, SHOWN - shown  # the attack reached them


# ---- in a real browser -----------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="no chromium installed (apt-get install chromium; .ci/run installs it)",
)


@needs_chromium
@pytest.mark.slow
def test_stranger_text_runs_no_script_in_a_real_browser(
    web: tuple[RunningWeb, dict[str, Any]], fake_openai: FakeOpenAI
) -> None:
    from playwright.sync_api import Dialog, expect, sync_playwright

    running, ids = web
    fake_openai.script = [Step(text=f"live {XSS}", match="say it")]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            page = browser.new_page()
            dialogs: list[str] = []

            def seen(dialog: Dialog) -> None:
                dialogs.append(dialog.message)
                dialog.dismiss()

            page.on("dialog", seen)
            response = page.goto(running.login_link)
            assert response is not None and response.ok
            for path in _pages(ids):
                page.goto(running.base + path)
                page.wait_for_load_state("load")
                assert page.locator("[data-pwn]").count() == 0, path
                assert page.evaluate("window.__pwned") is None, path
            # Live on the chat: the owner's own line and the reply arrive through the script.
            page.goto(running.base + "/chat")
            expect(page.locator("#chat[data-connected='1']")).to_have_count(1)
            page.fill("#chat-text", f"say it {XSS}")
            page.press("#chat-text", "Enter")
            expect(page.locator(".line.out .text", has_text="live ")).to_be_visible(timeout=20_000)
            expect(page.locator(".line.in .text", has_text="say it ")).to_have_count(1)
            assert page.locator("[data-pwn]").count() == 0
            assert page.evaluate("window.__pwned") is None
            assert XSS in page.locator(".line.out .text").last.inner_text()
            assert dialogs == []
        finally:
            browser.close()


# ---- the log ---------------------------------------------------------------------------------


def test_a_refused_posts_path_cannot_forge_a_log_line(
    web: tuple[RunningWeb, dict[str, Any]],
) -> None:
    """A page on another port of the same host is same-site: the browser sends it the session
    cookie, and its POST is refused for its origin. The path it names is logged as data: a
    line break in it starts no line of omega.log."""
    running, _ = web
    client, csrf = login(running, timeout=30)
    forged = "2026-01-01 00:00:00,000 WARNING omega: the owner approved everything"
    with closing(client):
        response = client.post(
            "/proposals/1/approve%0A" + forged.replace(" ", "%20"),
            headers={"Origin": "http://127.0.0.1:1"},
            data={"csrf_token": csrf},
        )
        assert response.status_code == 403
    lines = (running.home / "omega.log").read_text().splitlines()
    assert any("refused a POST" in line for line in lines)
    assert not any(line.startswith(forged) for line in lines)
    assert not any(line.startswith(forged) for line in "".join(running.stderr).splitlines())


# ---- logging out -----------------------------------------------------------------------------


def test_logging_out_ends_the_pages_event_stream(web: tuple[RunningWeb, dict[str, Any]]) -> None:
    """A page left open after its owner logged out (or whose session expired) receives
    nothing more: its event stream ends, so what is said afterwards (another person's words
    in an alert included) does not appear on it."""
    running, _ = web
    client, csrf = login(running, timeout=30)
    other, other_csrf = login(running, timeout=30)  # a second browser, still logged in
    own = {"Origin": running.base}
    with closing(client), closing(other), client.stream("GET", "/chat/events") as stream:
        lines = stream.iter_lines()
        assert next(lines).startswith("retry:")
        out = client.post("/logout", headers=own, data={"csrf_token": csrf})
        assert out.status_code == 303
        said = other.post(
            "/chat/send",
            headers={**own, "X-CSRF-Token": other_csrf},
            json={"text": "said after the logout"},
        )
        assert said.status_code == 200, said.text
        for line in lines:  # ends: without the check it would go on with keep-alives
            assert "said after the logout" not in line
