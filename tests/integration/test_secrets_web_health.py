"""The web page's Health page shows the security audit as `omega security audit` does: no
credential in it, not the password of a provider's `base_url` that a finding names."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.conftest import openai_env
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.web_support import RunningWeb

PASSWORD = "Zq-web-pass-5151"


def test_the_health_page_shows_no_base_url_password(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # A server of one's own (loopback), its model unpriced and counted as free: the audit's
    # spending-cap finding names where it is.
    base_url = fake_openai.base_url.replace("://", f"://webuser:{PASSWORD}@", 1)
    env = openai_env(
        fake_openai,
        OMEGA_PROVIDER__OPENAI__BASE_URL=base_url,
        OMEGA_LIMITS__DAILY_USD="5",
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK="0",
    )
    running = RunningWeb(isolated_env, env)
    try:
        client = httpx.Client(base_url=running.base, follow_redirects=False, timeout=10)
        assert client.get(running.login_link.removeprefix(running.base)).status_code == 303
        page = client.get("/health")
        assert page.status_code == 200
        assert "a server of your own" in page.text  # the finding that names the URL is there
        assert PASSWORD not in page.text
    finally:
        code, err = running.terminate()
    assert code == 0 and "Traceback" not in err, err
