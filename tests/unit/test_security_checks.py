"""The security audit's small judges, fuzzed: what counts as loopback and as a credential."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.ops.security.access import is_loopback
from omega.ops.security.walls import looks_secret

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


@given(st.text(max_size=80))
def test_is_loopback_never_raises_and_admits_only_loopback(host: str) -> None:
    if is_loopback(host):
        bare = host.strip().strip("[]")
        assert bare in ("", "localhost") or bare.startswith(("127.", "::1", "0:0:0:0:0:0:0:1"))


def test_is_loopback_examples() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", ""]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.5", "example.com", "127.0.0.1.x"]))


@given(st.text(max_size=40), st.text(max_size=80))
def test_looks_secret_never_raises(name: str, value: str) -> None:
    assert looks_secret(name, value) in (True, False)


def test_looks_secret_examples() -> None:
    assert looks_secret("AWS_SECRET_ACCESS_KEY", "x")
    assert looks_secret("ANTHROPIC_AUTH_TOKEN", "x")
    assert looks_secret("HTTPS_PROXY", "http://me:pw@proxy:3128")
    assert not looks_secret("HTTPS_PROXY", "http://proxy:3128")
    assert not looks_secret("ANTHROPIC_BASE_URL", "https://api.example")
    assert not looks_secret("LANG", "C.UTF-8")
