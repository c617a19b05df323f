"""The web page's security promises, played by an attacker over real HTTP against a running
`omega start`: no session, no entry (every route, SSE and POST included); a login link works
once; the cookie is HttpOnly and SameSite=Strict; a POST from anywhere but the page itself, or
without the session's CSRF token, changes nothing; secrets stay out of the log."""

from __future__ import annotations

import re
import stat
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from tests.conftest import openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.web_support import RunningWeb, login, seed, serving

GET_ROUTES = [
    "/",
    "/chat",
    "/chat/events",
    "/media/0123456789abcdef0123456789abcdef.png",
    "/limitations",
    "/proposals",
    "/proposals/1",
    "/fragments",
    "/evolution",
    "/tasks",
    "/people",
    "/person?id=ana",
    "/conversations",
    "/audit",
    "/tools",
    "/health",
    "/static/app.js",
    "/static/style.css",
    "/no-such-page",
]
POST_ROUTES = [
    "/chat/send",
    "/chat/alerts",
    "/limitations/1/resolve",
    "/proposals/1/approve",
    "/proposals/2/reject",
    "/fragments/1/deactivate",
    "/fragments/1/reactivate",
    "/tasks/x/cancel",
    "/person/fact/delete",
    "/person/purge",
    "/person/quiet",
    "/people/approve",
    "/people/deny",
    "/people/revoke",
    "/logout",
]


@pytest.fixture
def web(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> Iterator[tuple[RunningWeb, dict[str, object]]]:
    ids = seed(isolated_env)
    with serving(isolated_env, openai_env(fake_openai)) as running:
        yield running, ids


def _state(home: Path) -> tuple[str, str, str]:
    conn = connect_db(home / "memory.db")
    try:
        proposal = conn.execute("SELECT status FROM proposals WHERE id = 1").fetchone()[0]
        limitation = conn.execute("SELECT status FROM limitations WHERE id = 1").fetchone()[0]
        task = conn.execute("SELECT status FROM scheduled_tasks").fetchone()[0]
    finally:
        conn.close()
    return proposal, limitation, task


def test_without_a_session_every_route_is_401(web: tuple[RunningWeb, dict[str, object]]) -> None:
    running, _ = web
    with httpx.Client(base_url=running.base, timeout=10) as client:
        for route in GET_ROUTES:
            assert client.get(route).status_code == 401, route
        for route in POST_ROUTES:
            response = client.post(route, headers={"Origin": running.base}, data={"x": "1"})
            assert response.status_code == 401, route
        # A made-up cookie is no session either.
        client.cookies.set("omega_session", "forged")
        assert client.get("/").status_code == 401
        assert client.get("/chat/events").status_code == 401
    assert _state(running.home) == ("pending", "open", "pending")


def test_login_link_works_once_sets_a_strict_httponly_cookie_and_rotates(
    web: tuple[RunningWeb, dict[str, object]],
) -> None:
    running, _ = web
    url_file = running.url_file
    assert stat.S_IMODE(url_file.stat().st_mode) == 0o600
    first = running.login_link
    with httpx.Client(timeout=10) as client:
        response = client.get(first, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert "Path=/" in cookie
    # Used up: the same link no longer logs in; a fresh one is in web.url, still 0600.
    with httpx.Client(timeout=10) as client:
        assert client.get(first, follow_redirects=False).status_code == 401
        wrong = running.base + "/?token=" + "A" * 43
        assert client.get(wrong, follow_redirects=False).status_code == 401
    assert running.login_link != first
    assert stat.S_IMODE(url_file.stat().st_mode) == 0o600
    # Tokens never reach the log, nor a stderr that is no terminal (a journal): it says where
    # the link is instead.
    log = (running.home / "omega.log").read_text()
    token = first.split("token=")[1]
    assert token not in log
    assert running.login_link.split("token=")[1] not in log
    deadline = time.monotonic() + 30
    while "web page at" not in "".join(running.stderr) and time.monotonic() < deadline:
        time.sleep(0.05)
    said = "".join(running.stderr)
    assert "log in with the one-time link in" in said and token not in said


def test_posts_need_the_page_origin_and_the_csrf_token(
    web: tuple[RunningWeb, dict[str, object]],
) -> None:
    running, ids = web
    client, csrf = login(running)
    own = {"Origin": running.base}
    attempts = [
        ({}, {"csrf_token": csrf, "note": "x"}),  # no Origin, no Referer
        ({"Origin": "http://evil.example"}, {"csrf_token": csrf, "note": "x"}),
        ({"Referer": "http://evil.example/page"}, {"csrf_token": csrf, "note": "x"}),
        (own, {"note": "x"}),  # no token
        (own, {"csrf_token": "wrong" + csrf[5:], "note": "x"}),
    ]
    with closing(client):
        for headers, form in attempts:
            for route in (
                f"/proposals/{ids['approve']}/approve",
                f"/limitations/{ids['limitation']}/resolve",
                f"/tasks/{ids['task']}/cancel",
            ):
                response = client.post(route, headers=headers, data=form)
                assert response.status_code == 403, (route, headers, form)
        # JSON chat without the header token: refused too.
        response = client.post("/chat/send", headers=own, json={"text": "hi"})
        assert response.status_code == 403
        # GET never changes anything: the action routes do not answer it.
        assert client.get(f"/tasks/{ids['task']}/cancel").status_code == 405
        assert client.request("PUT", "/chat/send", headers=own).status_code == 405
        assert _state(running.home) == ("pending", "open", "pending")
        # The page's own POST, with its token, is accepted.
        response = client.post(
            f"/tasks/{ids['task']}/cancel", headers=own, data={"csrf_token": csrf}
        )
        assert response.status_code == 303
        assert _state(running.home) == ("pending", "open", "cancelled")


def test_security_headers_and_logout(web: tuple[RunningWeb, dict[str, object]]) -> None:
    running, _ = web
    client, csrf = login(running)
    with closing(client):
        page = client.get("/")
        assert page.status_code == 200 and "read from the providers' caches" in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["referrer-policy"] == "same-origin"
        out = client.post("/logout", headers={"Origin": running.base}, data={"csrf_token": csrf})
        assert out.status_code == 303
        assert client.get("/").status_code == 401


def test_media_serves_only_names_the_channel_made(
    web: tuple[RunningWeb, dict[str, object]],
) -> None:
    running, _ = web
    (running.home / "secret.png").write_bytes(b"\x89PNG secret")
    client, _ = login(running)
    with closing(client):
        for name in ("../secret.png", "..%2Fsecret.png", "secret.png", "..%2F..%2Fmemory.db"):
            assert client.get(f"/media/{name}").status_code == 404, name


def test_non_loopback_host_needs_allow_remote(fake_openai: FakeOpenAI) -> None:
    result = run_omega(
        "start",
        env=openai_env(fake_openai, OMEGA_WEB__ENABLED="true", OMEGA_WEB__HOST="0.0.0.0"),
        timeout=30,
    )
    assert result.returncode == 2
    assert "allow_remote" in result.stderr


def test_an_id_past_any_row_is_no_page_not_a_database_error(
    web: tuple[RunningWeb, dict[str, object]],
) -> None:
    running, _ = web
    client, csrf = login(running)
    huge = "9" * 20  # past a 64-bit integer: SQLite once raised OverflowError (500)
    with closing(client):
        assert client.get(f"/proposals/{huge}").status_code == 404
        own = {"Origin": running.base}
        for route in (f"/proposals/{huge}/approve", f"/limitations/{huge}/resolve"):
            assert client.post(route, headers=own, data={"csrf_token": csrf}).status_code == 404
        assert client.get("/proposals/999999999999999999").status_code == 404  # 18 digits
    assert _state(running.home) == ("pending", "open", "pending")


def test_behind_a_tls_proxy_links_name_it_its_posts_are_the_pages_and_the_cookie_is_secure(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """`[web] public_url`: the server sees plain http from the proxy, the browser sends the
    proxy's https origin. Before it, every POST there was refused and the cookie was not
    Secure (sent in clear to any http:// address of that host)."""
    public = "https://omega.example.org"
    seed(isolated_env)
    running = RunningWeb(isolated_env, openai_env(fake_openai, OMEGA_WEB__PUBLIC_URL=public))
    try:
        link = running.login_link
        assert link.startswith(public + "/?token=")
        found = re.search(r"web page at (http://[^ ]+)", "".join(running.stderr))
        assert found
        local = found.group(1)  # what the proxy forwards to
        with httpx.Client(base_url=local, follow_redirects=False, timeout=10) as client:
            login = client.get(link.removeprefix(public))
            assert login.status_code == 303
            cookie = login.headers["set-cookie"]
            assert "; Secure" in cookie and "HttpOnly" in cookie
            session = {"Cookie": cookie.split(";")[0]}  # httpx keeps Secure ones off http
            page = client.get("/chat", headers=session)
            match = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
            assert page.status_code == 200 and match
            csrf = match.group(1)
            evil = client.post(
                "/logout",
                headers=session | {"Origin": "https://evil.example"},
                data={"csrf_token": csrf},
            )
            assert evil.status_code == 403
            plain = client.post(
                "/logout",
                headers=session | {"Origin": "http://omega.example.org"},
                data={"csrf_token": csrf},
            )
            assert plain.status_code == 403  # the proxy's origin is https, nothing else
            out = client.post(
                "/logout", headers=session | {"Origin": public}, data={"csrf_token": csrf}
            )
            assert out.status_code == 303
            assert client.get("/", headers=session).status_code == 401
    finally:
        code, err = running.terminate()
    assert code == 0, err


@pytest.mark.parametrize(
    "value", ["http://omega.example.org", "https://omega.example.org/omega", "omega.example.org"]
)
def test_public_url_must_be_an_https_origin(fake_openai: FakeOpenAI, value: str) -> None:
    env = openai_env(fake_openai, OMEGA_WEB__ENABLED="true", OMEGA_WEB__PUBLIC_URL=value)
    result = run_omega("start", env=env, timeout=30)
    assert result.returncode == 2
    assert "public_url" in result.stderr and "https://" in result.stderr
