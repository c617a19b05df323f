"""The web page in a real browser: Debian's headless Chromium driven by Playwright, against a
running `omega start` with a scripted OpenAI-compatible provider.

Log in with the token (and be refused without it), chat and see the reply live, a command,
an alert and a reminder arriving while the page is open, an image shown inline, history on
reload; approve and reject a proposal, cancel a task, resolve a limitation, delete a fact; a
foreign page's POST and a POST without the CSRF token change nothing. Every page is
screenshotted under the test's tmp dir (and, with WEB_SCREENSHOTS_DIR=<dir>, copied there:
that is how docs/*.png are made).
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect, sync_playwright

from omega.memory.store import Store
from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.web_support import RunningWeb, seed, serving

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="no chromium installed (apt-get install chromium; .ci/run installs it)",
    ),
    pytest.mark.slow,  # a real headless chromium per test
]
# A 2x2 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def web(fake_openai: FakeOpenAI, isolated_env: Path) -> Iterator[tuple[RunningWeb, dict[str, Any]]]:
    ids = seed(isolated_env)
    with serving(isolated_env, openai_env(fake_openai)) as running:
        yield running, ids


class Shots:
    """Screenshots of every page, under the test's tmp dir."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.copy_to = os.environ.get("WEB_SCREENSHOTS_DIR", "")

    def take(self, page: Page, name: str) -> Path:
        path = self.folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 1000
        if self.copy_to:
            Path(self.copy_to).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(self.copy_to) / path.name)
        return path


def _db(home: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    conn = connect_db(home / "memory.db")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _logged_in(browser: Browser, running: RunningWeb) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    response = page.goto(running.login_link)
    assert response is not None and response.ok
    assert page.url == running.base + "/"  # the token left the address bar
    return page


def test_login_chat_live_events_and_history(
    browser: Browser,
    web: tuple[RunningWeb, dict[str, Any]],
    fake_openai: FakeOpenAI,
    tmp_path: Path,
) -> None:
    running, _ = web
    shots = Shots(tmp_path / "screens")
    due = (datetime.now(UTC) + timedelta(seconds=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fake_openai.script = [
        Step(text="Hello from Omega!", match="hello omega"),
        Step(
            text=f"I will remind you.\nSCHEDULE: Stretch your legs | {due} | once",
            match="remind me",
        ),
        Step(text="Noted.\nLIMITATION: Cannot fly | no wings | grow wings", match="can you fly"),
        Step(text="A nice red square.", match="look at this"),
    ]
    # Without the token: refused.
    anonymous = browser.new_page()
    refused = anonymous.goto(running.base + "/chat")
    assert refused is not None and refused.status == 401
    assert "web.url" in anonymous.inner_text("body")
    shots.take(anonymous, "refused")
    anonymous.close()

    page = _logged_in(browser, running)
    page.goto(running.base + "/chat")
    expect(page.locator("#chat[data-connected='1']")).to_have_count(1)

    def say(text: str) -> None:
        page.fill("#chat-text", text)
        page.press("#chat-text", "Enter")

    say("hello omega")
    expect(page.locator(".line.out .text", has_text="Hello from Omega!")).to_be_visible()
    say("/help")
    expect(page.locator(".line.out.kind-command", has_text="/tasks")).to_be_visible()
    say("can you fly?")
    expect(page.locator(".line.out .text", has_text="Noted.")).to_be_visible()
    # The owner alert of the new limitation arrives on the open page.
    expect(page.locator(".line.out.kind-alert", has_text="Cannot fly")).to_be_visible()
    say("remind me to stretch in 3 seconds")
    expect(page.locator(".line.out.kind-reminder", has_text="Stretch your legs")).to_be_visible(
        timeout=20_000
    )
    red: FilePayload = {"name": "red.png", "mimeType": "image/png", "buffer": PNG}
    page.set_input_files("#chat-image", files=[red])
    say("look at this")
    # The first image loads pydantic-ai in Omega (a lean request is text only): a few seconds
    # on a loaded machine, more than the 5 s `expect` waits by default.
    expect(page.locator(".line.out .text", has_text="A nice red square.")).to_be_visible(
        timeout=30_000
    )
    image = page.locator(".line.in img.inline-img").last
    expect(image).to_be_visible()
    assert page.evaluate("(img) => img.naturalWidth", image.element_handle()) == 2
    shots.take(page, "chat")

    # History on reload, in order, the image included.
    page.reload()
    texts = page.locator("#chat .line .text").all_inner_texts()
    for expected in ("hello omega", "Hello from Omega!", "Noted.", "Stretch your legs"):
        assert any(expected in text for text in texts), (expected, texts)
    assert texts.index("hello omega") < texts.index("Hello from Omega!")
    expect(page.locator(".line.in img.inline-img")).to_have_count(1)
    # What the provider was sent came through the same pipeline as any channel.
    hello = [r for r in fake_openai.requests if "hello omega" in r.last_user_text]
    assert hello
    assert _db(running.home, "SELECT COUNT(*) FROM messages WHERE channel = 'web'")[0][0] >= 6


def test_alerts_kept_while_no_page_was_open_arrive_when_the_chat_opens(
    browser: Browser, fake_openai: FakeOpenAI, isolated_env: Path, tmp_path: Path
) -> None:
    """The event stream (a GET) delivers nothing kept; the chat's script asks for the kept
    alerts with a POST once its stream is open, and they arrive on the page."""
    kept = "Kept while no page was open: the disk is almost full"
    seed(isolated_env)
    store = Store(isolated_env / "memory.db")
    try:
        store.keep_owner_alert(kept, "alert")
    finally:
        store.close()
    ready = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(ready))
        notify.settimeout(60)
        running = RunningWeb(isolated_env, openai_env(fake_openai, NOTIFY_SOCKET=str(ready)))
        try:
            assert notify.recv(64) == b"READY=1"  # the start's own delivery is over
            sql = "SELECT status, channel FROM owner_alerts"
            assert _db(running.home, sql) == [("pending", "")]
            page = _logged_in(browser, running)  # the overview: no chat, nothing delivered
            assert _db(running.home, sql) == [("pending", "")]
            page.goto(running.base + "/chat")
            expect(page.locator(".line.out.kind-alert", has_text=kept)).to_be_visible()
            assert _db(running.home, sql) == [("delivered", "web")]
            page.reload()  # shown again from the history, not delivered twice
            expect(page.locator("#chat[data-connected='1']")).to_have_count(1)
            expect(page.locator(".line.out.kind-alert", has_text=kept)).to_have_count(1)
        finally:
            code, err = running.terminate()
    assert code == 0, err
    assert "Traceback" not in err


def test_dashboard_decisions_and_screenshots(
    browser: Browser, web: tuple[RunningWeb, dict[str, Any]], tmp_path: Path
) -> None:
    running, ids = web
    shots = Shots(tmp_path / "screens")
    page = _logged_in(browser, running)
    expect(page.locator(".card", has_text="proposals to review")).to_contain_text("2")
    expect(page.locator("svg.chart rect")).not_to_have_count(0)
    shots.take(page, "dashboard")

    # Approve one proposal (with notes promoted to a prompt fragment).
    page.goto(running.base + "/proposals?status=pending")
    shots.take(page, "proposals")
    page.click(f"a[href='/proposals/{ids['approve']}'] >> nth=0")
    expect(page.locator("pre.diff")).to_contain_text("Extract the text of the PDF")
    expect(page.locator("dl.facts")).to_contain_text("touches the network")
    shots.take(page, "proposal")
    page.fill("form[action$='/approve'] input[name='note']", "keep summaries short")
    page.check("form[action$='/approve'] input[name='promote']")
    page.click("form[action$='/approve'] button")
    expect(page.locator("#status")).to_have_text("approved")
    expect(page.locator("#msg")).to_contain_text("Approved")
    assert (running.home / "skills" / "pdf-reader" / "SKILL.md").is_file()
    assert _db(running.home, "SELECT COUNT(*) FROM prompt_fragments")[0][0] == 1

    # The promoted notes are a prompt fragment: shown with where they came from, switched off.
    page.goto(running.base + "/fragments")
    row = page.locator("tr[data-fragment='1']")
    expect(row).to_contain_text("keep summaries short")
    expect(row).to_contain_text(f"proposal #{ids['approve']}, promoted by owner (web)")
    expect(row).to_contain_text("introspection_evaluation, limitation_analysis")
    shots.take(page, "fragments")
    row.locator("button", has_text="Deactivate").click()
    expect(page.locator("#msg")).to_contain_text("Deactivated prompt fragment #1")
    expect(page.locator("tr[data-fragment='1'] td.state")).to_have_text("inactive")
    assert _db(running.home, "SELECT active FROM prompt_fragments") == [(0,)]

    # Reject the other, with a reason.
    page.goto(running.base + f"/proposals/{ids['reject']}")
    page.fill("form[action$='/reject'] input[name='reason']", "never touch money")
    page.click("form[action$='/reject'] button")
    expect(page.locator("#status")).to_have_text("rejected")
    assert _db(running.home, "SELECT status, reviewer_notes, reviewed_by FROM proposals") == [
        ("approved", "keep summaries short", "owner (web)"),
        ("rejected", "never touch money", "owner (web)"),
    ]

    # Cancel the task; its due time is shown in the owner's zone.
    page.goto(running.base + "/tasks")
    row = page.locator(f"tr[data-task='{ids['task']}']")
    expect(row).to_contain_text("Water the plants")
    shots.take(page, "tasks")
    row.locator("button", has_text="Cancel").click()
    expect(page.locator("#msg")).to_contain_text("Cancelled: Water the plants")
    assert _db(running.home, "SELECT status FROM scheduled_tasks") == [("cancelled",)]

    # Resolve the limitation with a note.
    page.goto(running.base + "/limitations?status=open")
    shots.take(page, "limitations")
    page.fill("form[action$='/resolve'] input[name='note']", "installed a pdf skill")
    page.click("form[action$='/resolve'] button")
    expect(page.locator("#msg")).to_contain_text("Resolved")
    assert _db(running.home, "SELECT status, resolution FROM limitations") == [
        ("resolved", "installed a pdf skill")
    ]

    # People and facts: delete one fact.
    page.goto(running.base + "/people")
    shots.take(page, "people")
    page.click("a[href='/person?id=ana']")
    shots.take(page, "person")
    page.locator("tr", has_text="Lisbon").locator("button").click()
    expect(page.locator("#msg")).to_contain_text("Forgot city")
    assert _db(running.home, "SELECT key FROM facts WHERE sender_id = 'ana'") == [("name",)]

    for name, path in (
        ("conversations", "/conversations"),
        ("audit", "/audit"),
        ("tools", "/tools"),
        ("health", "/health"),
        ("evolution", "/evolution"),
    ):
        page.goto(running.base + path)
        expect(page.locator("h1")).to_be_visible()
        shots.take(page, name)
    page.goto(running.base + "/evolution")
    expect(page.locator("#gate")).to_contain_text("pdf-reader")
    expect(page.locator("#gate")).to_contain_text("approved by owner (web)")
    expect(page.locator("#learned")).to_contain_text("fragment (inactive)")
    expect(page.locator("#learned")).to_contain_text("keep summaries short")
    page.goto(running.base + "/audit?event=proposal:")
    expect(page.locator("table")).to_contain_text("proposal:approved")
    expect(page.locator("table")).to_contain_text("proposal:rejected")
    page.goto(running.base + "/tools?ok=0")
    expect(page.locator("table")).to_contain_text("not found")
    page.goto(running.base + "/conversations")
    page.locator("table a").first.click()
    expect(page.locator(".chat")).to_contain_text("Hello Ana!")
    shots.take(page, "conversation")
    assert len(list((tmp_path / "screens").glob("*.png"))) == 14  # + chat, refused: other test


def test_csrf_and_foreign_pages_change_nothing(
    browser: Browser, web: tuple[RunningWeb, dict[str, Any]]
) -> None:
    running, ids = web
    page = _logged_in(browser, running)
    # The page's own script, but without the CSRF token: refused.
    status = page.evaluate(
        """async (url) => (await fetch(url, {method: "POST",
            headers: {"Content-Type": "application/x-www-form-urlencoded"},
            body: "note=x"})).status""",
        f"/proposals/{ids['approve']}/approve",
    )
    assert status == 403
    # A foreign site the owner visits while logged in posts a form to Omega.
    target = f"{running.base}/tasks/{ids['task']}/cancel"
    attacker = _serve_attacker_page(target)
    try:
        page.goto(f"http://127.0.0.1:{attacker.server_port}/")
        page.wait_for_load_state("networkidle")
        body = page.inner_text("body")
        assert "Not logged in" in body or "Refused" in body
    finally:
        attacker.shutdown()
    assert _db(running.home, "SELECT status FROM proposals ORDER BY id") == [
        ("pending",),
        ("pending",),
    ]
    assert _db(running.home, "SELECT status FROM scheduled_tasks") == [("pending",)]


def _serve_attacker_page(target: str) -> HTTPServer:
    html = (
        f'<form id="f" method="post" action="{target}">'
        '<input name="csrf_token" value="guess"></form>'
        "<script>document.getElementById('f').submit()</script>"
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
