"""What `omega init` reads from a channel plug-in alone (omega.channels.setup,
omega.cli.setup_channels.from_flags): the questions its section implies, typed answers turned
into TOML values, the optional extra to install when its library is missing, its setup test
made safe; and what `omega status` and the self-check show of plug-in channels, on or off."""

from __future__ import annotations

import contextlib
import importlib.metadata
from importlib.metadata import PackageNotFoundError
from pathlib import Path
from typing import Literal

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, SecretStr
from tomlkit.toml_document import TOMLDocument

import omega.ops.selfcheck as selfcheck
from omega.channels import builtin
from omega.channels.base import Channel
from omega.channels.health import channel_health_lines
from omega.channels.plugin import ChannelContext, ChannelPlugin, PluginChannelConfig
from omega.channels.registry import Discovery, discover, register_checks
from omega.channels.setup import (
    field_error,
    install_hint,
    offered,
    parse,
    question_for,
    questions,
    run_setup,
)
from omega.cli.setup_channels import from_flags, to_toml
from omega.config import Config
from omega.health_file import write_health
from omega.logs import register_secret
from omega.ops.selfcheck import CheckContext, run_checks
from omega.ops.setup import Answers, SetupError
from omega.paths import OmegaPaths

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


class WireConfig(PluginChannelConfig):
    server: str  # required
    token: SecretStr = SecretStr("")  # empty: asked, hidden
    login_password: str = ""  # a secret by its name
    rooms: list[str] = Field(default_factory=list)
    mode: Literal["bot", "user"] = Field("bot", description="Which account Omega uses")
    port: int = Field(0, ge=0, le=65535, description="Port (0: the usual)")
    retries: int = 3  # a default, no description: not asked
    quiet: bool = Field(False, json_schema_extra={"init": True})
    region: str = Field("", json_schema_extra={"init": False})  # empty, but left out
    recovery_key: SecretStr | None = None  # optional, still a secret


def _never(ctx: ChannelContext) -> Channel:
    raise AssertionError("not started here")


def _plugin(name: str, *, reports: bool = False) -> ChannelPlugin:
    return ChannelPlugin(
        name=name, config_model=PluginChannelConfig, factory=_never, reports_health=reports
    )


WIRE = ChannelPlugin(name="wire", config_model=WireConfig, factory=_never)


def test_questions_come_from_the_section_model() -> None:
    asked = {q.key: q for q in questions(WireConfig)}
    assert list(asked) == [
        "server",
        "token",
        "login_password",
        "rooms",
        "mode",
        "port",
        "quiet",
        "recovery_key",
    ]
    assert asked["server"].required and asked["server"].prompt == "Server"
    assert {asked[key].kind for key in ("token", "login_password", "recovery_key")} == {"secret"}
    assert asked["rooms"].kind == "list"
    assert asked["mode"].kind == "choice" and asked["mode"].choices == ("bot", "user")
    assert asked["mode"].prompt == "Which account Omega uses" and asked["mode"].default == "bot"
    assert asked["quiet"].kind == "bool" and asked["quiet"].default == "no"
    # enabled, allowed_users and dm_policy have questions of their own; tell_strangers and
    # retries have a default worth keeping; region opted out.
    own = {"enabled", "allowed_users", "dm_policy", "tell_strangers", "retries", "region"}
    assert not own & set(asked)


def test_typed_answers_become_toml_values_and_bad_ones_say_why() -> None:
    rooms = question_for(WireConfig, "rooms")
    assert parse(rooms, " #a, #b ,, ") == ["#a", "#b"]
    assert parse(question_for(WireConfig, "quiet"), "Yes") is True
    port = question_for(WireConfig, "port")
    assert to_toml(WireConfig, port, parse(port, "8448")) == 8448
    assert to_toml(WireConfig, port, "many") == "many"  # left for the model to refuse
    assert "valid integer" in field_error(WireConfig, {"port": "many"}, "port")
    assert "less than or equal" in field_error(WireConfig, {"port": 70000}, "port")
    assert field_error(WireConfig, {"port": 8448}, "port") == ""  # server missing: not port's
    open_to_all = {"server": "x", "dm_policy": "open", "allowed_users": ["ana"]}
    assert field_error(WireConfig, open_to_all, "dm_policy") == ""
    assert '"*" in allowed_users' in field_error(WireConfig, open_to_all, "dm_policy", whole=True)
    secret = question_for(WireConfig, "token")
    assert parse(secret, " spaced secret ") == " spaced secret "  # typed exactly


def test_init_offers_channels_turned_on_by_their_section() -> None:
    names = [plugin.name for plugin in offered(discover().plugins)]
    assert names[:2] == ["telegram", "whatsapp"] and "email" in names
    assert "terminal" not in names and "web" not in names


def test_a_missing_library_names_the_packages_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.distribution
    assert install_hint("whatsapp") == ""  # neonize is installed for the tests
    assert install_hint("email") == ""  # no extra: the standard library

    def without_neonize(name: str) -> object:
        if name == "neonize":
            raise PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr("omega.channels.setup.distribution", without_neonize)
    assert install_hint("whatsapp") == "pip install 'omega-agent[whatsapp]'"


def test_a_setup_test_that_raises_is_a_failure_without_the_secret() -> None:
    register_secret("hunter2-secret-value")

    def leaky(section: BaseModel) -> tuple[bool, str]:
        raise RuntimeError("login hunter2-secret-value refused")

    plugin = ChannelPlugin(name="wire", config_model=WireConfig, factory=_never, setup=leaky)
    outcome = run_setup(plugin, WireConfig.model_validate({"server": "x"}))
    assert outcome is not None and not outcome[0]
    assert "refused" in outcome[1] and "hunter2-secret-value" not in outcome[1]
    assert run_setup(WIRE, WireConfig.model_validate({"server": "x"})) is None


def test_flags_fill_a_plugin_section() -> None:
    found = Discovery(plugins={"wire": WIRE})
    answers = Answers()
    doc = _doc('[channel.wire]\nallowed_users = ["zoe"]\n')
    from_flags(
        answers,
        doc,
        found,
        ["wire.server=matrix.example.org", "wire.rooms=#a, #b", "wire.port=8448"],
        ["wire:ana"],
    )
    assert answers.channels["wire"] == {
        "enabled": True,
        "server": "matrix.example.org",
        "rooms": ["#a", "#b"],
        "port": 8448,
        "allowed_users": ["zoe", "ana"],
    }
    assert answers.owners == ["wire:ana"]
    for bad in (["wire"], ["wire.server"], ["nope.x=1"], ["wire.colour=red"]):
        with pytest.raises(SetupError):
            from_flags(Answers(), doc, found, bad, [])
    with pytest.raises(SetupError):
        from_flags(Answers(), doc, found, [], ["ana"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=4), st.lists(st.text(max_size=20), max_size=2))
def test_any_flag_text_is_taken_or_refused_with_a_setup_error(
    assignments: list[str], owners: list[str]
) -> None:
    found = Discovery(plugins={"wire": WIRE, "telegram": builtin.TELEGRAM})
    with contextlib.suppress(SetupError):  # any other exception fails the test
        from_flags(Answers(), _doc(""), found, assignments, owners)


def _doc(text: str) -> TOMLDocument:
    return tomlkit.parse(text)


def test_status_and_the_self_check_show_plugin_channels_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selfcheck, "_registered", dict(selfcheck._registered))
    paths = OmegaPaths(tmp_path)
    paths.ensure()
    config = Config.model_validate(
        {
            "channel": {
                "own": {"enabled": True},  # writes its own health report
                "kept": {"enabled": True},  # Omega keeps one for it
                "idle": {"enabled": False},
            }
        }
    )
    write_health(paths.channel_health("own"), account="bot@example.org", state="receiving")
    write_health(paths.channel_health("kept"), state="running")
    found = Discovery(
        plugins={
            "own": _plugin("own", reports=True),
            "kept": _plugin("kept"),
            "idle": _plugin("idle"),
        }
    )
    register_checks(config, paths, found)
    lines = dict(channel_health_lines(config, paths))
    assert lines == {
        "idle": "plug-in, off",
        "kept": "plug-in, running",
        "own": "plug-in, bot@example.org, receiving",
    }
    checks = {check.name: check for check in run_checks(CheckContext(config, paths))}
    assert checks["own"].ok and "bot@example.org, receiving" in checks["own"].detail
    assert checks["kept"].ok and "running" in checks["kept"].detail
    assert "idle" not in checks
