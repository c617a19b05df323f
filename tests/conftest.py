"""Shared fixtures: an isolated OMEGA_HOME, no credentials, the pipeline's deps (`make_deps`),
the real `claude` CLI's set-up (`real_claude`), and helpers to run the CLI."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

from omega.app import bootstrap, pipeline_deps
from omega.memory import Store
from omega.memory.db import STORE_URL_ENV
from omega.providers.base import Provider
from omega.turn import PipelineDeps
from tests.engine_split import no_store_is_true
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.real_claude import RealClaude, UnavailableError, pinned_claude
from tests.fakes.synapse import Synapse
from tests.postgres import BACKEND_ENV, PostgresServer, running_server
from tests.stacks import DUMP_ENV_VARS, dump_and_kill, hung_report
from tests.timings import pytest_collection_modifyitems, pytest_runtest_protocol

# Fixtures and hooks defined elsewhere and used by every test (ruff would take the import as
# unused).
__all__ = ["no_store_is_true", "pytest_collection_modifyitems", "pytest_runtest_protocol"]

# A suite started in the background by a shell (`make unit` runs the PostgreSQL suite with `&`)
# inherits SIGINT ignored, and so would every `omega` it starts: tests that interrupt Omega
# with Ctrl-C need the ordinary disposition back (exec resets a handled signal to the default).
signal.signal(signal.SIGINT, signal.default_int_handler)

CREDENTIAL_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "TELEGRAM_BOT_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "DISCORD_BOT_TOKEN",
    "OPENAI_BASE_URL",
    "CLAUDECODE",
)
OMEGA_BIN = str(Path(sys.executable).with_name("omega"))


# Read once: isolated_env removes every OMEGA_* variable from each test's environment.
_BACKEND = os.environ.get(BACKEND_ENV, "sqlite")


def on_postgresql() -> bool:
    """Whether this run puts every store on PostgreSQL (`OMEGA_TEST_STORE=postgresql`)."""
    return _BACKEND == "postgresql"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL cluster for the session (Debian's binaries; see tests/postgres.py)."""
    with running_server() as server:
        yield server


@pytest.fixture(autouse=True)
def isolated_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """Every test gets its own OMEGA_HOME and sees no real credentials or OMEGA_* settings;
    on the PostgreSQL run, its own fresh database too (OMEGA_STORE_URL)."""
    for var in list(os.environ):
        if var in CREDENTIAL_VARS or (var.startswith("OMEGA_") and var != "OMEGA_ALLOW_ROOT"):
            monkeypatch.delenv(var, raising=False)
    home = tmp_path / "omega-home"
    monkeypatch.setenv("OMEGA_HOME", str(home))
    monkeypatch.setenv("OMEGA_ALLOW_ROOT", "1")  # CI machines run as root
    if not on_postgresql() or request.node.get_closest_marker("sqlite_only"):
        yield home
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.new_database()
    monkeypatch.setenv(STORE_URL_ENV, url)
    yield home
    server.drop(url)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running scripted OpenAI-compatible server."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """A real Matrix homeserver on loopback, started once per session (it is slow to start);
    tests register fresh accounts on it. Fails, never skips, where `make dev` did not
    install it."""
    server = Synapse(tmp_path_factory.mktemp("synapse"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned `claude` CLI (installed on first use); a visible skip only where npm is absent."""
    try:
        return pinned_claude()
    except UnavailableError as exc:
        if shutil.which("npm") is None:
            pytest.skip(f"real-CLI contract tests skipped: {exc}")
        raise


@pytest.fixture
def real_claude(
    claude_bin: Path, isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RealClaude]:
    """The one set-up of the tests with the real `claude` CLI: the pinned CLI, a running fake
    Messages API, $OMEGA_HOME with a secret in config.toml, a fresh user home; the CLI's
    environment and Omega's other secrets are set in this test's environment."""
    with FakeAnthropic() as api:
        claude = RealClaude.prepare(claude_bin, api, isolated_env, tmp_path / "user-home")
        for name, value in claude.env.items():
            monkeypatch.setenv(name, value)
        yield claude


class MakeDeps(Protocol):
    """Builds the pipeline's deps in the test's OMEGA_HOME (see the `make_deps` fixture)."""

    def __call__(self, provider: Provider | None = None, /, **env: str) -> PipelineDeps:
        """Deps with `env` (OMEGA_* settings) set first and `provider` in place of the real one."""
        ...


@pytest.fixture
def make_deps(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeDeps]:
    """The one way tests build PipelineDeps, as `omega start` does: settings from `env` (set
    for the rest of the test), the configured provider unless a double is given; every store
    it opened is closed at teardown."""
    stores: list[Store] = []

    def make(provider: Provider | None = None, /, **env: str) -> PipelineDeps:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        runtime = bootstrap(isolated_env)
        store = Store(runtime.paths.db)
        stores.append(store)
        deps = pipeline_deps(runtime, store)
        if provider is not None:
            deps.provider = provider
        return deps

    yield make
    for store in stores:
        store.close()


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, object]]:
        """The JSON objects `omega chat --jsonl` wrote, in order."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def run_omega(
    *args: str, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 60
) -> CliResult:
    """Run the installed `omega` console script as a user would; one still running after
    `timeout` fails the test with where it was stuck (tests/stacks.py)."""
    full_env = dict(os.environ, **DUMP_ENV_VARS)
    full_env.update(env or {})
    proc = subprocess.Popen(
        [OMEGA_BIN, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )
    try:
        stdout, stderr = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        stdout, stderr = dump_and_kill(proc)
        report = hung_report(f"omega {' '.join(args)}", timeout, stdout, stderr)
    else:
        return CliResult(proc.returncode, stdout, stderr)
    pytest.fail(report, pytrace=False)


def openai_env(server: FakeOpenAI, **extra: str) -> dict[str, str]:
    """Env that points Omega's openai provider at the fake server."""
    env = {
        "OMEGA_PROVIDER__DEFAULT": "openai",
        "OMEGA_PROVIDER__OPENAI__BASE_URL": server.base_url,
        "OMEGA_PROVIDER__OPENAI__API_KEY": "sk-test-secret-key-0123456789",
        "OMEGA_PROVIDER__OPENAI__MODEL": "fake-model",
    }
    env.update(extra)
    return env


def jsonl(*messages: Mapping[str, object]) -> str:
    """Encode messages as `omega chat --jsonl` input."""
    return "".join(json.dumps(m) + "\n" for m in messages)
