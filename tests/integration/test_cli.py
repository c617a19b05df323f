"""The CLI: ask, status, config errors, refusing a newer database and the root guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omega.cli import support
from tests.conftest import on_postgresql, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step


def test_ask_answers_one_shot_without_memory(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    fake_openai.script = [Step(text="Paris.")]
    result = run_omega("ask", "Capital of France?", env=openai_env(fake_openai))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Paris."
    [request] = fake_openai.requests
    assert [m["role"] for m in request.messages] == ["system", "user"]
    # Nothing of the conversation is kept; the call is audited (issue 28).
    conn = connect_db(isolated_env / "memory.db")
    kept = [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("messages", "facts")]
    audited = conn.execute("SELECT event, sender_id, output_tokens FROM audit_log").fetchall()
    conn.close()
    assert kept == [0, 0]
    assert audited == [("ask", "cli", 1)]


def test_ask_reports_provider_failure_kindly(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [Step(status=500)] * 3
    result = run_omega("ask", "hello", env=openai_env(fake_openai))
    assert result.returncode == 1
    assert "not available right now" in result.stderr  # a 5xx: the provider is down
    assert "Traceback" not in result.stderr


def test_ask_help_and_usage_errors_are_typers(fake_openai: FakeOpenAI) -> None:
    """`omega ask` is answered without the typer app (omega.cli.ask), except what typer says:
    its help and its errors, unchanged."""
    env = openai_env(fake_openai)
    help_text = run_omega("ask", "--help", env=env)
    assert help_text.returncode == 0 and "--tools" in help_text.stdout
    assert "Ask one question" in help_text.stdout
    for args, said in (
        ((), "Missing argument"),
        (("--bogus", "hi"), "No such option"),
        (("one", "two"), "unexpected extra argument"),
    ):
        result = run_omega("ask", *args, env=env)
        assert (result.returncode, said in result.stderr) == (2, True), (args, result.stderr)
    assert fake_openai.requests == []


def test_ask_takes_what_typer_takes(fake_openai: FakeOpenAI) -> None:
    empty = run_omega("ask", "  ", env=openai_env(fake_openai))
    assert (empty.returncode, empty.stderr.splitlines()[-1]) == (2, "omega: the question is empty")
    # A question that looks like an option, after `--`; ANSI codes are not printed to a pipe.
    fake_openai.script = [Step(text="\x1b[31mred\x1b[0m answer")]
    dashed = run_omega("ask", "--", "--tools", env=openai_env(fake_openai))
    assert (dashed.returncode, dashed.stdout) == (0, "red answer\n"), dashed.stderr
    assert fake_openai.requests[0].last_user_text == "--tools"
    assert "tools" not in fake_openai.requests[0].body


def test_status_shows_provider_paths_and_counts(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    result = run_omega("status", env=openai_env(fake_openai))
    assert result.returncode == 0, result.stderr
    assert "openai" in result.stdout
    assert str(isolated_env) in result.stdout
    assert "messages" in result.stdout
    assert "sk-test-secret" not in result.stdout


def test_status_auto_selects_local_model_with_nothing_configured() -> None:
    result = run_omega("status", env={"PATH": str(Path(os.__file__).parent)})
    assert result.returncode == 0, result.stderr
    assert "local (auto-selected)" in result.stdout


@pytest.mark.parametrize("command", [["status"], ["ask", "hi"]], ids=" ".join)
def test_first_run_deploys_private_home(
    command: list[str], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # `omega ask` (answered without the typer app) leaves the same private home.
    run_omega(*command, env=openai_env(fake_openai))
    files = ("SYSTEM_PROMPT.md", "WELCOME.toml", "omega.log")
    for name in files if on_postgresql() else (*files, "memory.db"):
        assert (isolated_env / name).stat().st_mode & 0o777 == 0o600, name
    for folder in ("workspace", "workspace/inbox", "skills", "projects"):
        assert (isolated_env / folder).is_dir()


@pytest.mark.no_store
@pytest.mark.parametrize(
    "toml, expected",
    [
        ("[provider\n", "not valid TOML"),
        ('[provider]\ndefault = "skynet"\n', "provider.default"),
        ('[memory]\nmax_context_messages = "lots"\n', "memory.max_context_messages"),
    ],
)
def test_broken_config_stops_start_up_without_traceback(
    isolated_env: Path, toml: str, expected: str
) -> None:
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(toml)
    for args in (("status",), ("ask", "hi"), ("chat", "--jsonl")):
        result = run_omega(*args)
        assert result.returncode == 2, args
        assert expected in result.stderr
        assert str(isolated_env / "config.toml") in result.stderr
        assert "Traceback" not in result.stderr


def test_database_from_newer_omega_is_refused(isolated_env: Path) -> None:
    run_omega("status")
    with connect_db(isolated_env / "memory.db") as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    result = run_omega("chat", "--jsonl", stdin="")
    assert result.returncode == 2
    assert "schema version 999" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.no_store
def test_root_guard_refuses_without_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.delenv("OMEGA_ALLOW_ROOT")
    with pytest.raises(SystemExit) as info:
        support.check_not_root()
    assert info.value.code == 1
    monkeypatch.setenv("OMEGA_ALLOW_ROOT", "1")
    support.check_not_root()  # allowed, with a warning


def test_root_guard_end_to_end() -> None:
    """As root (CI), omega refuses without the override; as a normal user it just runs."""
    import subprocess

    from tests.conftest import OMEGA_BIN

    env = {k: v for k, v in os.environ.items() if k != "OMEGA_ALLOW_ROOT"}
    proc = subprocess.run(
        [OMEGA_BIN, "status"], env=env, capture_output=True, text=True, check=False
    )
    # `omega ask` is answered without the typer app: the same guard, before anything is read.
    asked = subprocess.run(
        [OMEGA_BIN, "ask", "hi"], env=env, capture_output=True, text=True, check=False
    )
    if os.geteuid() == 0:
        assert proc.returncode == asked.returncode == 1
        assert "refusing to run as root" in proc.stderr
        assert "refusing to run as root" in asked.stderr
        allowed = run_omega("status", env={"OMEGA_ALLOW_ROOT": "1"})
        assert allowed.returncode == 0
        assert "warning: running as root" in allowed.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert "root" not in proc.stderr and "root" not in asked.stderr


def test_limitations_list_and_resolve_from_the_cli(isolated_env: Path) -> None:
    from omega.evolution.gaps import LimitationStore
    from omega.memory import Store

    run_omega("status")
    store = Store(isolated_env / "memory.db")
    LimitationStore(store).add("No email", "Cannot send emails", "Add SMTP")
    store.close()
    (isolated_env / "HEARTBEAT.md").write_text("- [ ] No email — Cannot send emails\n")
    listing = run_omega("limitations", "list")
    assert "[1] open     No email — Cannot send emails" in listing.stdout
    assert "plan: Add SMTP" in listing.stdout
    resolved = run_omega("limitations", "resolve", "1", "--note", "SMTP added")
    assert resolved.returncode == 0, resolved.stderr
    assert "No email" not in (isolated_env / "HEARTBEAT.md").read_text()
    assert run_omega("limitations", "list").stdout.strip() == "No open limitations."
    assert "SMTP added" in run_omega("limitations", "list", "--all").stdout
    missing = run_omega("limitations", "resolve", "7")
    assert missing.returncode == 1 and "no open limitation" in missing.stderr
