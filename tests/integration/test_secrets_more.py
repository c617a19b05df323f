"""More ways a secret could leave, each closed: an uncaught exception's traceback on stderr,
a channel plug-in's failure kept in its health file, a registered secret escaped by JSON or
`repr()` (a `"` or `\\` in it), and the well-known token shapes of GitHub, Slack and AWS in a
tool's output. The channel plug-in is a module and a hand-written .dist-info on the
subprocess's PYTHONPATH (no pip): its factory, and its `enabled` when asked to, raise an error
that quotes its configured token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_start import Running

OWNER = '["terminal:ana"]'

PLUGIN_MODULE = """\
from omega.channels.plugin import ChannelPlugin, PluginChannelConfig


class LeakyConfig(PluginChannelConfig):
    token: str = ""
    crash: bool = False  # `enabled` raises (an uncaught error in `omega status`)


def _build(ctx):
    raise RuntimeError(f"login refused for {ctx.section.token}")


def _enabled(ctx):
    if ctx.section.crash:
        raise RuntimeError(f"cannot reach the service with {ctx.section.token}")
    return bool(ctx.section.enabled)


PLUGIN = ChannelPlugin(name="leaky", config_model=LeakyConfig, factory=_build, enabled=_enabled)
"""


@pytest.fixture
def leaky_plugin(tmp_path: Path) -> Path:
    """A folder holding the `leaky` channel plug-in, installed as far as entry points go."""
    site = tmp_path / "site"
    info = site / "omega_leaky_channel-0.1.0.dist-info"
    info.mkdir(parents=True)
    (site / "omega_leaky_channel.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: omega-leaky-channel\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[omega.channels]\nleaky = omega_leaky_channel:PLUGIN\n", encoding="utf-8"
    )
    return site


def _configure(home: Path, token: str, crash: bool = False) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f"[channel.leaky]\nenabled = true\ntoken = {json.dumps(token)}\n"
        f"crash = {'true' if crash else 'false'}\n",
        encoding="utf-8",
    )


def test_an_uncaught_exception_is_printed_redacted(
    leaky_plugin: Path, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    token = "Zq-uncaught-token-5151"
    _configure(isolated_env, token, crash=True)
    result = run_omega("status", env=openai_env(fake_openai, PYTHONPATH=str(leaky_plugin)))
    assert result.returncode != 0
    assert "Traceback" in result.stderr  # the plug-in's error was not caught: the hook printed it
    assert "cannot reach the service with [REDACTED]" in result.stderr
    assert token not in result.stdout + result.stderr


def _start_failing(home: Path, fake_openai: FakeOpenAI, site: Path) -> dict[str, object]:
    """Run `omega start` until the owner is told the leaky plug-in failed; its health report."""
    omega = Running(openai_env(fake_openai, PYTHONPATH=str(site)))
    try:
        alerts = omega.wait_for("alert", timeout=60)
        assert any("leaky" in str(alert["text"]) for alert in alerts), alerts
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    report = json.loads((home / "leaky.health.json").read_text(encoding="utf-8"))
    assert report["state"] == "failed", report
    return dict(report)


def test_a_plugin_failure_reaches_its_health_file_redacted(
    leaky_plugin: Path, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    token = "Zq-health-token-6262"
    _configure(isolated_env, token)
    health = _start_failing(isolated_env, fake_openai, leaky_plugin)
    assert "login refused for [REDACTED]" in str(health["detail"])
    assert token not in (isolated_env / "leaky.health.json").read_text(encoding="utf-8")


def test_a_secret_escaped_by_repr_is_still_hidden(
    leaky_plugin: Path, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """The failure is logged as `RuntimeError('...')`: a `\\` in the token is doubled there."""
    token = "Zq-repr-" + "\\" + "token-7373"
    _configure(isolated_env, token)
    health = _start_failing(isolated_env, fake_openai, leaky_plugin)
    log = (isolated_env / "omega.log").read_text(encoding="utf-8")
    assert "leaky could not start" in log
    for text in (log, str(health["detail"])):
        assert "Zq-repr-" not in text and "token-7373" not in text


def _tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _run_tool(fake_openai: FakeOpenAI, home: Path, command: str, **env: str) -> tuple[str, str]:
    """Have the model run `command` in a chat; the stored call's (arguments, result_preview)."""
    fake_openai.script = [
        Step(tool_calls=[_tool_call("call_1", "run_shell", command=command)]),
        Step(text="done."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=OWNER, **env),
        stdin=jsonl({"text": "run it", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    conn = connect_db(home / "memory.db")
    try:
        rows = list(conn.execute("SELECT arguments, result_preview FROM tool_calls"))
    finally:
        conn.close()
    ((arguments, preview),) = rows
    return str(arguments), str(preview)


def test_a_secret_with_a_quote_and_a_backslash_leaves_no_piece_in_stored_arguments(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    secret = 'Zq-json"quoted' + "\\" + "back-8484"  # registered: *_TOKEN in the environment
    arguments, preview = _run_tool(
        fake_openai, isolated_env, f"printf '%s\\n' '{secret}'", ACME_SERVICE_TOKEN=secret
    )
    assert "[REDACTED]" in arguments, arguments  # stored as JSON: `\"` and `\\`
    for text in (arguments, preview):
        assert "Zq-json" not in text and "back-8484" not in text, text


@pytest.mark.parametrize(
    "token",
    [
        "ghp_" + "Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2w",
        "gho_" + "Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2w",
        "ghu_" + "Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2w",
        "ghs_" + "Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2w",
        "ghr_" + "Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2w",
        "github_pat_" + "11ZQABCDE0aBcDeFgHiJkL_Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3yZ",
        "xoxb-" + "123456789012-1234567890123-ZqAbCdEfGhIjKlMnOpQrStUv",
        "xoxp-" + "123456789012-1234567890123-1234567890123-Zq0123456789abcdef",
        "xoxa-" + "2-123456789012-1234567890123-Zq0123456789abcdef",
        "xapp-" + "1-A0ZQ1234567-1234567890123-Zq0123456789abcdef0123456789",
        "AKIA" + "ZQ7EXAMPLE4ACCES",
    ],
)
def test_a_well_known_token_in_a_tool_output_is_hidden_by_its_shape(
    fake_openai: FakeOpenAI, isolated_env: Path, token: str
) -> None:
    """Nobody registered it: its shape alone hides it (the command is written so that the
    token appears only in the output, never whole in the arguments)."""
    head, tail = token[:6], token[6:]
    _, preview = _run_tool(fake_openai, isolated_env, f"echo 'key: {head}''{tail}'")
    assert "[REDACTED]" in preview, preview
    assert tail[-12:] not in preview, preview


def test_ordinary_words_near_those_shapes_are_left_alone(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    words = "ghost_writer xoxo-hugs xapp-store AKIAWORD github_pat_ AKIA1234"
    _, preview = _run_tool(fake_openai, isolated_env, f"echo '{words}'")
    assert words in preview, preview
