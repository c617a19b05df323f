"""The sandbox's temp folder cannot be turned into a door (audit finding): a command that
replaced `.tmp` with a symlink to `$OMEGA_HOME` made every later command's write grant point
there, so the next run read and wrote `config.toml` and `memory.db`. Played through `omega chat
--jsonl` with the scripted OpenAI fake, on the real kernel (Landlock), with bubblewrap failing
(as where user namespaces are refused) and with bubblewrap working (a person's folder, planted
by an owner's turn). The same commands in `rwx` mode reach the file: the attack is real."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from omega.turn import local_owner_id
from omega.turn.privileges import person_folder
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import tool_call

SECRET = "sk-config-secret-9191"
PLANT = "rm -rf .tmp && ln -s .. .tmp && ls -la .tmp/"
STEAL = (
    'cat "$TMPDIR/config.toml"; cat ../config.toml; '
    'echo "# written by the model" >> "$TMPDIR/config.toml"; echo done'
)


@pytest.fixture
def no_bwrap(tmp_path: Path) -> str:
    """A PATH whose `bwrap` fails as a kernel refusing user namespaces makes it fail."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text('#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n')
    fake.chmod(0o755)
    return f"{folder}:{os.environ['PATH']}"


def _shell(fake: FakeOpenAI, text: str, command: str, **env: str) -> str:
    """One turn whose model runs `command`; what the tool returned."""
    fake.script = [
        Step(match=text, tool_calls=[tool_call("c1", "run_shell", command=command)]),
        Step(match=text, text="ok"),
    ]
    fake.requests.clear()
    sender = env.pop("SENDER", "")
    line = {"text": text, **({"sender_id": sender} if sender else {})}
    result = run_omega("chat", "--jsonl", env=openai_env(fake, **env), stdin=jsonl(line))
    assert result.returncode == 0, result.stderr
    results = [
        str(m["content"]) for r in fake.requests for m in r.messages if m.get("role") == "tool"
    ]
    assert results, result.stderr
    return results[-1]


def _config(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[provider.anthropic]\napi_key = "{SECRET}"\n')
    (home / "config.toml").chmod(0o600)


@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_a_symlinked_temp_folder_opens_nothing_on_the_next_start(
    fake_openai: FakeOpenAI, isolated_env: Path, no_bwrap: str, mode: str
) -> None:
    _config(isolated_env)
    env = {"PATH": no_bwrap, "OMEGA_SANDBOX__MODE": mode}
    _shell(fake_openai, "plant it", PLANT, **env)
    # The next start of Omega (a new process, a new sandbox):
    out = _shell(fake_openai, "steal it", STEAL, **env)
    assert SECRET not in out
    assert "written by the model" not in (isolated_env / "config.toml").read_text()
    assert (isolated_env / "workspace" / ".tmp").is_dir()  # a real folder again
    assert not (isolated_env / "workspace" / ".tmp").is_symlink()


def test_the_same_in_rwx_mode_reaches_the_file(
    fake_openai: FakeOpenAI, isolated_env: Path, no_bwrap: str
) -> None:
    _config(isolated_env)
    out = _shell(fake_openai, "steal it", STEAL, PATH=no_bwrap, OMEGA_SANDBOX__MODE="rwx")
    assert SECRET in out  # no confinement: the attack is real


def test_a_persons_temp_folder_planted_by_the_owner_opens_nothing_for_them(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """bubblewrap working: the owner's (persuaded) turn plants the link in Bob's folder; Bob,
    given a shell, then runs with his own folder only."""
    _config(isolated_env)
    bob = person_folder("bob")
    env = {
        "OMEGA_AUTH__PEOPLE_TOOLS": json.dumps(["run_shell"]),
        "OMEGA_CHANNEL__TERMINAL__ALLOWED_USERS": json.dumps([local_owner_id(), "bob"]),
    }
    plant = f"mkdir -p people/{bob} && cd people/{bob} && rm -rf .tmp && ln -s ../../.. .tmp"
    _shell(fake_openai, "plant it", plant, **env)
    out = _shell(fake_openai, "steal it", STEAL, SENDER="bob", **env)
    assert SECRET not in out
    assert "written by the model" not in (isolated_env / "config.toml").read_text()
