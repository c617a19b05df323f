"""`omega init` offers every channel plug-in it discovers, through its real entry point: on a
terminal (a pty, answered as a person types) it asks an e-mail channel's and a third-party
plug-in's questions from their pydantic sections, re-asks a wrong value and a failed login,
names the missing library's extra, keeps comments and never shows a secret; `omega start`
then runs both channels. The same works with flags (--channel-set, --channel-owner)."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from tests.conftest import OMEGA_BIN, openai_env, run_omega
from tests.fakes.imap_server import FakeImap
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.smtp_server import SmtpSink
from tests.integration.terminal_session import Answer, run_in_terminal
from tests.integration.test_channel_plugins import _outbox_until, _write_line
from tests.integration.test_channel_plugins import plugins_dir as plugins_dir  # the fixture
from tests.integration.test_email_channel import (
    AUTHSERV,
    PASSWORD,
    PROVEN,
    _answers,
    _mail,
    _start,
    imap,
    smtp,
)
from tests.integration.test_init import SECRETS, FakeTelegram
from tests.integration.test_init import telegram as telegram  # the fixture

__all__ = ["imap", "plugins_dir", "smtp", "telegram"]  # fixtures used here by name

PROVIDER_KEY = "sk-init-channels-secret-0123"
WRONG_PASSWORD = "wrong-imap-pass-98765"
TELEGRAM_TOKEN = SECRETS[1]  # the token the fake Telegram takes
# Questions asked whatever the channels (answered when they show up).
OTHERS = {
    r"Transcribe voice messages": "n",
    r"Talk with Omega on (discord|slack|matrix) \(": "n",  # the other built-in plug-ins
    r"Run `[^`]*` now\?": "n",  # bubblewrap's install, offered to root
}


def _pythonpath(plugins: Path) -> str:
    """The plug-ins' folder, before whatever PYTHONPATH the tests run with (a worktree's src)."""
    return os.pathsep.join(filter(None, [str(plugins), os.environ.get("PYTHONPATH", "")]))


def _env(home: Path, plugins: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("OMEGA_") and not key.endswith("_API_KEY")
    }
    env.update(
        OMEGA_HOME=str(home),
        OMEGA_ALLOW_ROOT="1",
        PYTHONPATH=_pythonpath(plugins),
        COLUMNS="400",
        NO_COLOR="1",
        TERM="xterm",
    )
    env.update(extra)
    return env


def _provider_flags(server: FakeOpenAI) -> list[str]:
    return [
        "--provider",
        "openai",
        "--base-url",
        server.base_url,
        "--api-key",
        PROVIDER_KEY,
        "--model",
        "fake-model",
    ]


def test_init_on_a_terminal_adds_an_email_channel_and_a_plugin_that_omega_start_runs(
    plugins_dir: Path,
    fake_openai: FakeOpenAI,
    isolated_env: Path,
    imap: FakeImap,
    smtp: SmtpSink,
    tmp_path: Path,
) -> None:
    home = isolated_env
    home.mkdir(parents=True)
    (home / "config.toml").write_text("# my Omega\n[memory]\nmax_context_messages = 12\n")
    inbox, outbox = tmp_path / "in.fifo", tmp_path / "out.jsonl"
    fake_openai.script = [Step(text="OK", match="Say OK")]
    argv = [OMEGA_BIN, "init", *_provider_flags(fake_openai)]
    argv += ["--no-telegram", "--no-whatsapp", "--sandbox", "rx", "--no-heartbeat", "--no-web"]
    argv += ["--no-service"]
    e = r"(\(.*\) )?"  # a prompt's default and choices
    email_round = [
        Answer(r"Talk with Omega on email \(e-mail: IMAP in .*\)\?", "y"),
        Answer(rf"IMAP server Omega reads mail from .*{e}:", "127.0.0.1"),
        Answer(r"IMAP security .*\[ssl/starttls/plain\] \(ssl\):", "plain"),
        Answer(r"IMAP port \(0: the usual one .*\) \(0\):", "not-a-port"),
        Answer(r"imap_port: Input should be a valid integer.*IMAP port .*\(0\):", str(imap.port)),
        Answer(rf"The mailbox's user name .*{e}:", "omega@example.org"),
        Answer(r"The mailbox's password .*:", WRONG_PASSWORD, hidden=True),
        Answer(r"SMTP server Omega sends mail through:", "127.0.0.1"),
        Answer(r"SMTP security .*\(starttls\):", "plain"),
        Answer(r"SMTP port .*\(0\):", str(smtp.port)),
        Answer(r"SMTP user name \(Enter: the IMAP one\):", ""),
        Answer(r"SMTP password \(Enter: send without logging in\):", "", hidden=True),
        Answer(r"Address Omega's mail comes from .*:", ""),
        Answer(r"Your mail provider's authserv-id.*:", AUTHSERV),
        Answer(r"Your own email address or id .*:", "Ana@Example.org"),
        Answer(r"Who else may talk to Omega on email .*:", ""),
        Answer(r"What a stranger who writes gets .*\(allowlist\):", ""),
        # the login fails: asked again, the first round's answers as defaults
        Answer(r"email: IMAP 127\.0\.0\.1.*Answer the email questions again\?", "y"),
        Answer(r"IMAP server Omega reads mail from .*\(127\.0\.0\.1\):", ""),
        Answer(r"IMAP security .*\(plain\):", ""),
        Answer(rf"IMAP port .*\({imap.port}\):", ""),
        Answer(r"The mailbox's user name .*\(omega@example\.org\):", ""),
        Answer(r"The mailbox's password .*\(Enter keeps the one you have\):", PASSWORD, True),
        Answer(r"SMTP server Omega sends mail through \(127\.0\.0\.1\):", ""),
        Answer(r"SMTP security .*\(plain\):", ""),
        Answer(rf"SMTP port .*\({smtp.port}\):", ""),
        Answer(r"SMTP user name \(Enter: the IMAP one\):", ""),
        Answer(r"SMTP password \(Enter: send without logging in\):", "", hidden=True),
        Answer(r"Address Omega's mail comes from .*:", ""),
        Answer(r"Your mail provider's authserv-id.*\(mx\.example\.org\):", ""),
        Answer(r"Your own email address or id .*:", "Ana@Example.org"),
        Answer(r"Who else may talk to Omega on email .*\(ana@example\.org\):", ""),
        Answer(r"What a stranger who writes gets .*\(allowlist\):", ""),
    ]
    fifo_round = [
        Answer(r"logged in to omega@example\.org's INBOX.*Talk with Omega on fifo .*\?", "y"),
        Answer(
            r"needs a library that is not installed: pip install "
            r"'omega-fifo-channel\[fifo\]'.*Set fifo up anyway .*\?",
            "y",
        ),
        Answer(r"The FIFO people write to \(made when missing\):", str(inbox)),
        Answer(r"Outbox:", str(tmp_path / "no-such-folder" / "out.jsonl")),
        Answer(r"Your own fifo address or id .*:", "ana"),
        Answer(r"Who else may talk to Omega on fifo .*:", "bob"),
        Answer(r"What a stranger who writes gets .*:", "pairing"),
        Answer(r"does not exist.*Answer the fifo questions again\?", "y"),
        Answer(r"The FIFO people write to .*:", ""),
        Answer(r"Outbox .*:", str(outbox)),
        Answer(r"Your own fifo address or id .*:", "ana"),
        Answer(r"Who else may talk to Omega on fifo .*\(ana, bob\):", ""),
        Answer(r"What a stranger who writes gets .*\(pairing\):", ""),
        # a plug-in that cannot load for want of its library: the extra is named, and it is
        # turned on only if the owner says so
        Answer(
            r"The channel plug-in broken could not be loaded.*install its library with: "
            r"pip install 'omega-broken-channel\[broken\]' Turn broken on anyway .*\?",
            "n",
        ),
    ]
    session = run_in_terminal(
        argv, _env(home, plugins_dir), [*email_round, *fifo_round], optional=OTHERS
    )
    assert session.code == 0, session.screen[-3000:]
    assert "replies will go to" in session.screen
    for secret in (PASSWORD, WRONG_PASSWORD, PROVIDER_KEY):
        assert secret not in session.screen
        for log in home.rglob("*.log"):
            assert secret not in log.read_text(encoding="utf-8", errors="replace")

    path = home / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text.startswith("# my Omega\n") and "max_context_messages = 12" in text
    config = tomllib.loads(text)
    assert config["channel"]["email"] == {
        "enabled": True,
        "imap_host": "127.0.0.1",
        "imap_security": "plain",
        "imap_port": imap.port,
        "imap_user": "omega@example.org",
        "imap_password": PASSWORD,
        "smtp_host": "127.0.0.1",
        "smtp_security": "plain",
        "smtp_port": smtp.port,
        "authserv_id": AUTHSERV,
        "allowed_users": ["ana@example.org"],
        "dm_policy": "allowlist",
    }
    assert config["channel"]["fifo"] == {
        "enabled": True,
        "inbox": str(inbox),
        "outbox": str(outbox),
        "allowed_users": ["ana", "bob"],
        "dm_policy": "pairing",
    }
    assert config["auth"]["owners"] == ["email:ana@example.org", "fifo:ana"]
    assert "broken" not in config["channel"]

    # `omega start` runs both channels from what init wrote.
    fake_openai.script = [
        Step(text="Dinner is at eight.", match="when is dinner"),
        Step(text="Hello Ana, from the FIFO.", match="hi there"),
    ]
    env = openai_env(
        fake_openai, PYTHONPATH=_pythonpath(plugins_dir), OMEGA_MEMORY__IDLE_MINUTES="600"
    )
    omega = _start(env, home)
    try:
        # The owner, proven by the receiving server's Authentication-Results.
        imap.deliver(
            _mail("Ana <ana@example.org>", "Plans", "when is dinner?", "<m1@ex.org>", PROVEN)
        )
        _answers(smtp, "<m1@ex.org>", "Dinner is at eight.", home)
        _write_line(inbox, {"id": "f1", "from": "ana", "text": "hi there"})
        lines = _outbox_until(outbox, "Hello Ana, from the FIFO.")
        kinds = [line["kind"] for line in lines if line["to"] == "ana"]
        assert [kind for kind in kinds if kind != "status"] == ["welcome", "reply"]
        status = run_omega("status", env=env)
        rows = {line.split()[0]: line for line in status.stdout.splitlines() if line.strip()}
        assert "plug-in, omega@example.org, running" in rows["email"]  # its own report
        assert "plug-in, running" in rows["fifo"]  # the one Omega keeps for it
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    for secret in (PASSWORD, PROVIDER_KEY):
        assert secret not in err + status.stdout + status.stderr
        for log in home.rglob("*.log"):
            assert secret not in log.read_text(encoding="utf-8", errors="replace")


def test_flags_add_a_plugin_channel_its_setup_test_guards_and_bad_values_write_nothing(
    plugins_dir: Path, isolated_env: Path, imap: FakeImap, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": str(plugins_dir)}
    config = isolated_env / "config.toml"
    base = ["init", "--non-interactive"]
    email = [
        "--channel-set",
        "email.imap_host=127.0.0.1",
        "--channel-set",
        f"email.imap_port={imap.port}",
        "--channel-set",
        "email.imap_security=plain",
        "--channel-set",
        "email.imap_user=omega@example.org",
        "--channel-set",
        "email.smtp_host=127.0.0.1",
        "--channel-owner",
        "email:Ana@Example.org",
    ]
    bad = run_omega(*base, *email, "--channel-set", "email.imap_port=many", env=env)
    assert bad.returncode == 1 and "channel.email.imap_port" in bad.stderr
    bad = run_omega(*base, "--channel-set", "emial.imap_host=x", env=env)
    assert bad.returncode == 1 and "no installed channel plug-in is named 'emial'" in bad.stderr
    bad = run_omega(*base, "--channel-set", "email.colour=red", env=env)
    assert bad.returncode == 1 and "has no key 'colour'" in bad.stderr
    refused = run_omega(
        *base, *email, "--channel-set", f"email.imap_password={WRONG_PASSWORD}", env=env
    )
    assert refused.returncode == 1 and "--no-check" in refused.stderr
    assert WRONG_PASSWORD not in refused.stdout + refused.stderr
    assert not config.exists()

    done = run_omega(*base, *email, "--channel-set", f"email.imap_password={PASSWORD}", env=env)
    assert done.returncode == 0, done.stderr
    assert "logged in to omega@example.org's INBOX" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr
    written = tomllib.loads(config.read_text())
    assert written["channel"]["email"]["imap_port"] == imap.port  # a number, not text
    assert written["channel"]["email"]["allowed_users"] == ["ana@example.org"]
    assert written["auth"]["owners"] == ["email:ana@example.org"]
    assert stat.S_IMODE(config.stat().st_mode) == 0o600

    # A plug-in whose library is missing: the extra is named, the section still written.
    fifo = run_omega(
        *base,
        "--channel-set",
        f"fifo.inbox={tmp_path / 'in.fifo'}",
        "--channel-set",
        f"fifo.outbox={tmp_path / 'out.jsonl'}",
        "--channel-set",
        "fifo.allowed_users=ana, bob",
        env=env,
    )
    assert fifo.returncode == 0, fifo.stderr
    assert "pip install 'omega-fifo-channel[fifo]'" in fifo.stdout
    assert "replies will go to" in fifo.stdout
    written = tomllib.loads(config.read_text())
    assert written["channel"]["fifo"]["allowed_users"] == ["ana", "bob"]
    assert written["channel"]["email"]["imap_password"] == PASSWORD  # kept

    # Turned off, it is listed as off.
    off = run_omega(*base, "--channel-set", "fifo.enabled=false", env=env)
    assert off.returncode == 0, off.stderr
    status = run_omega("status", env=env)
    rows = {line.split()[0]: line for line in status.stdout.splitlines() if line.strip()}
    assert "plug-in, off" in rows["fifo"]
    assert PASSWORD not in status.stdout


@pytest.mark.no_store
def test_a_channel_declined_on_the_terminal_is_not_written(
    plugins_dir: Path, isolated_env: Path
) -> None:
    argv = [OMEGA_BIN, "init", "--provider", "local", "--no-telegram", "--no-whatsapp"]
    argv += ["--sandbox", "rx", "--no-heartbeat", "--no-web", "--no-service"]
    session = run_in_terminal(
        argv,
        _env(isolated_env, plugins_dir),
        [
            Answer(r"Talk with Omega on email .*\?", "n"),
            Answer(r"Talk with Omega on fifo .*\?", "n"),
            Answer(r"Turn broken on anyway .*\?", ""),  # Enter: no
        ],
        optional=OTHERS,
    )
    assert session.code == 0, session.screen[-3000:]
    config = tomllib.loads((isolated_env / "config.toml").read_text())
    assert not {"email", "fifo", "broken"} & set(config.get("channel", {}))


@pytest.mark.no_store
def test_telegram_keeps_its_own_questions_and_a_refused_token_is_asked_again(
    telegram: FakeTelegram, isolated_env: Path, tmp_path: Path
) -> None:
    argv = [OMEGA_BIN, "init", "--provider", "local", "--no-whatsapp", "--sandbox", "rx"]
    argv += ["--no-heartbeat", "--no-web", "--no-service"]
    env = _env(isolated_env, tmp_path, OMEGA_CHANNEL__TELEGRAM__API_URL=telegram.url)
    session = run_in_terminal(
        argv,
        env,
        [
            Answer(
                r"Talk with Omega on telegram \(Telegram Bot API, long polling or a webhook\)\?",
                "y",
            ),
            Answer(r"Bot token from @BotFather .*:", "999:wrong-token", hidden=True),
            Answer(r"Your Telegram user id .*:", "4242"),
            Answer(
                r"telegram: Telegram refused the token \(Unauthorized\); check the token "
                r"Answer the telegram questions again\?",
                "y",
            ),
            Answer(r"Bot token from @BotFather .*:", TELEGRAM_TOKEN, hidden=True),
            Answer(r"Your Telegram user id .*:", "4242"),
            Answer(r"Talk with Omega on email .*\?", "n"),
        ],
        optional=OTHERS,
    )
    assert session.code == 0, session.screen[-3000:]
    assert "Telegram bot: @omega_bot" in session.screen  # the second token passed getMe
    assert TELEGRAM_TOKEN not in session.screen and "999:wrong-token" not in session.screen
    assert telegram.paths == ["/bot999:wrong-token/getMe", f"/bot{TELEGRAM_TOKEN}/getMe"]
    config = tomllib.loads((isolated_env / "config.toml").read_text())
    assert config["channel"]["telegram"] == {
        "bot_token": TELEGRAM_TOKEN,
        "enabled": True,
        "allowed_users": [4242],
    }
    assert config["auth"]["owners"] == ["telegram:4242"]
