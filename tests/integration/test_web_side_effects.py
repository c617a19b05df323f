"""What a request the owner did not make can do to the web page: nothing. Over real HTTP
against a running `omega start`:

- reading the event stream (a GET a foreign page's <img> or a prefetch can make) delivers no
  alert kept while no page was open; the page's own POST does, once;
- a made-up or stale session cookie costs the database no write (a write lock held elsewhere
  does not hold up its 401);
- a request naming another Host (DNS rebinding) is refused before anything else: no login, no
  session, no change.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from omega.memory.store import Store
from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.web_support import RunningWeb, login, seed

KEPT = "Kept while no page was open: the disk is almost full"


@pytest.fixture
def web(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> Iterator[tuple[RunningWeb, dict[str, object]]]:
    ids = seed(isolated_env)
    # No lease renewal or beat (a write every 5 s by default) during the tests' short locks.
    running = RunningWeb(isolated_env, openai_env(fake_openai, OMEGA_STORE__LEASE_SECONDS="3600"))
    try:
        yield running, ids
    finally:
        code, err = running.terminate()
        assert code == 0, err
        assert "Traceback" not in err


def _rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    conn = connect_db(home / "memory.db")
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def _kept(home: Path) -> list[tuple[object, ...]]:
    return _rows(home, "SELECT status, channel FROM owner_alerts ORDER BY id")


def _chat_events(lines: Iterator[str]) -> Iterator[dict[str, object]]:
    """The `chat` events of an open event stream, as they come."""
    event = ""
    for line in lines:
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: ") and event == "chat":
            yield json.loads(line.removeprefix("data: "))
        elif not line:
            event = ""


def test_the_event_stream_delivers_no_kept_alert_the_pages_post_does(
    fake_openai: FakeOpenAI, isolated_env: Path, tmp_path: Path
) -> None:
    """Before, each GET of /chat/events delivered (and marked delivered) the kept alerts: a
    foreign page's <img> pointing there used them up unseen."""
    seed(isolated_env)
    store = Store(isolated_env / "memory.db")
    try:
        store.keep_owner_alert(KEPT, "alert")
    finally:
        store.close()
    ready = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(ready))
        notify.settimeout(60)
        running = RunningWeb(isolated_env, openai_env(fake_openai, NOTIFY_SOCKET=str(ready)))
        try:
            # Ready: the start's own delivery of kept alerts is over (no channel reached the
            # owner, so the alert is still kept).
            assert notify.recv(64) == b"READY=1"
            _kept_alert_is_delivered_only_on_the_pages_post(running)
        finally:
            code, err = running.terminate()
    assert code == 0, err
    assert "Traceback" not in err


def _kept_alert_is_delivered_only_on_the_pages_post(running: RunningWeb) -> None:
    home = running.home
    assert _kept(home) == [("pending", "")]
    client, csrf = login(running)
    with closing(client):
        # What an <img src=".../chat/events"> or a prefetch does: open the stream, then go.
        with client.stream("GET", "/chat/events") as stream:
            assert stream.status_code == 200
            assert next(stream.iter_lines()) == "retry: 2000"
        assert _kept(home) == [("pending", "")]
        # The page: its stream open, its script posts for the kept alerts (the page's origin,
        # the session's CSRF token); they arrive on the stream, once.
        with client.stream("GET", "/chat/events") as stream:
            lines = stream.iter_lines()
            assert next(lines) == "retry: 2000"
            foreign = client.post(
                "/chat/alerts", headers={"Origin": "http://evil.example", "X-CSRF-Token": csrf}
            )
            assert foreign.status_code == 403
            assert client.post("/chat/alerts", headers={"Origin": running.base}).status_code == 403
            assert _kept(home) == [("pending", "")]
            own = {"Origin": running.base, "X-CSRF-Token": csrf}
            response = client.post("/chat/alerts", headers=own)
            assert response.status_code == 200
            assert response.json() == {"ok": True, "sent": 1}
            event = next(_chat_events(lines))
            assert event["kind"] == "alert" and KEPT in str(event["text"])
        assert _kept(home) == [("delivered", "web")]
        shown = _rows(home, "SELECT text FROM web_events WHERE kind = 'alert'")
        assert len([text for (text,) in shown if KEPT in str(text)]) == 1  # once
        # Nothing is left to deliver: asking again sends nothing.
        assert client.post("/chat/alerts", headers=own).json() == {"ok": True, "sent": 0}


def test_a_cookie_that_is_no_session_costs_no_write(
    web: tuple[RunningWeb, dict[str, object]],
) -> None:
    """Before, every cookie value opened a write transaction (expired sessions deleted, the
    use noted): made-up cookies were writes for anyone who reached the port, and waited on
    every other writer. Now they are refused while another connection holds the write lock."""
    running, _ = web
    client, csrf = login(running)
    with closing(client):
        stale = client.cookies["omega_session"]
        out = client.post("/logout", headers={"Origin": running.base}, data={"csrf_token": csrf})
        assert out.status_code == 303
    holder = Store(running.home / "memory.db")
    try:
        with (
            holder.transaction(),
            httpx.Client(base_url=running.base, timeout=10) as anyone,
        ):
            for value in ("forged", "A" * 43, stale, "x" * 4000):
                cookie = {"Cookie": f"omega_session={value}"}
                assert anyone.get("/chat", headers=cookie).status_code == 401, value
                post = anyone.post("/logout", headers=cookie | {"Origin": running.base})
                assert post.status_code == 401, value
    finally:
        holder.close()
    # Once the lock is gone, a real session still works.
    client, _ = login(running)
    with closing(client):
        assert client.get("/").status_code == 200


def _other_hosts(port: int) -> list[str]:
    other = port + 1 if port < 65535 else port - 1
    return [
        f"evil.example:{port}",  # DNS rebinding: the attacker's name, the page's port
        "evil.example",
        f"localhost.evil.example:{port}",
        f"127.0.0.1.nip.io:{port}",
        f"127.0.0.1:{other}",  # the page's address, another port
        f"localhost:{other}",
        "127.0.0.1",  # port 80
        f"::1:{port}",
        "",
    ]


def test_a_request_for_another_host_is_refused_before_anything(
    web: tuple[RunningWeb, dict[str, object]],
) -> None:
    running, ids = web
    port = urlsplit(running.base).port
    assert port is not None
    client, csrf = login(running)
    with closing(client):
        session = {"Cookie": f"omega_session={client.cookies['omega_session']}"}
    link = running.login_link
    token_path = link.removeprefix(running.base)
    task = f"/tasks/{ids['task']}/cancel"
    with httpx.Client(base_url=running.base, follow_redirects=False, timeout=10) as raw:
        for host in _other_hosts(port):
            named = {"Host": host}
            page = raw.get("/chat", headers=named | session)
            assert page.status_code == 400, host
            assert "csrf-token" not in page.text and "set-cookie" not in page.headers
            refused = raw.get(token_path, headers=named)
            assert refused.status_code == 400, host
            assert "set-cookie" not in refused.headers
            # Even the page's own POST (cookie, token, an Origin matching that Host).
            cancel = raw.post(
                task,
                headers=named | session | {"Origin": f"http://{host}"},
                data={"csrf_token": csrf},
            )
            assert cancel.status_code == 400, host
        assert running.login_link == link  # the link was not used up
        assert _rows(running.home, "SELECT status FROM scheduled_tasks") == [("pending",)]
        # The page's own names, at its port, are served.
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert raw.get("/chat", headers={"Host": host} | session).status_code == 200, host
            assert raw.get("/chat", headers={"Host": host}).status_code == 401, host
        assert raw.get(token_path).status_code == 303  # the link still logs in, once


def test_behind_a_tls_proxy_its_host_is_the_pages_too(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """A proxy may forward the public Host as it came (`Host: omega.example.org`) or the
    page's own address: both are served; another name, or the public name at another
    port, is not."""
    public = "https://omega.example.org"
    seed(isolated_env)
    running = RunningWeb(isolated_env, openai_env(fake_openai, OMEGA_WEB__PUBLIC_URL=public))
    try:
        found = re.search(r"web page at (http://[^ ]+)", "".join(running.stderr))
        assert found
        local = found.group(1).strip()
        port = urlsplit(local).port
        with httpx.Client(base_url=local, follow_redirects=False, timeout=10) as raw:
            logged_in = raw.get(
                running.login_link.removeprefix(public), headers={"Host": "omega.example.org"}
            )
            assert logged_in.status_code == 303
            session = {"Cookie": logged_in.headers["set-cookie"].split(";")[0]}
            for host in ("omega.example.org", "omega.example.org:443", f"127.0.0.1:{port}"):
                assert raw.get("/chat", headers={"Host": host} | session).status_code == 200
            for host in (f"omega.example.org:{port}", "omega.example.org:80", "evil.example"):
                refused = raw.get("/chat", headers={"Host": host} | session)
                assert refused.status_code == 400, host
    finally:
        code, err = running.terminate()
    assert code == 0, err


def test_refused_hosts_cannot_fill_the_log(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    """A rebinding page (or a scanner) repeating requests for made-up names gets a log line
    for each name's first refusal, not one a request."""
    seed(isolated_env)
    running = RunningWeb(isolated_env, openai_env(fake_openai))
    try:
        with httpx.Client(base_url=running.base, timeout=10) as raw:
            for _ in range(40):
                assert raw.get("/chat", headers={"Host": "evil.example"}).status_code == 400
            for _ in range(3):
                assert raw.get("/chat", headers={"Host": "other.example"}).status_code == 400
    finally:
        code, err = running.terminate()
    assert code == 0, err
    refused = [
        line for line in err.splitlines() if "refused a request for the unknown host" in line
    ]
    assert len(refused) == 2, refused
    assert "'evil.example'" in refused[0] and "'other.example'" in refused[1]
