"""Package faces that load on first use: cheap for one-shot commands, and never a module where
a value was meant."""

from __future__ import annotations

import subprocess
import sys

import pytest

from omega.lazy import loader

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_a_name_that_is_also_a_submodule_is_refused() -> None:
    # `from omega.turn import marker_context` once returned the module marker_context.py
    # instead of the function of that name.
    with pytest.raises(ValueError, match="marker_context"):
        loader("omega.turn", {"marker_context": "marker_context"})


def test_every_face_name_is_a_value_after_all_submodules_are_imported() -> None:
    import importlib
    import pkgutil
    import types

    import omega.app
    import omega.evolution
    import omega.turn

    evolution = [
        importlib.import_module(f"omega.evolution.{name}") for name in omega.evolution.__all__
    ]
    for package in (omega.turn, omega.app, *evolution):
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
        for name in package.__all__:
            value = getattr(package, name)
            assert not isinstance(value, types.ModuleType), f"{package.__name__}.{name}"


def test_a_one_shot_command_does_not_import_the_service_or_the_turn_machinery() -> None:
    code = (
        "import sys\n"
        "from omega.app import bootstrap\n"
        "from omega.turn import compose_system_prompt\n"
        "print(sorted(m for m in sys.modules if m.startswith(('omega.app.', 'omega.turn.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "omega.app.service" not in out and "omega.gateway" not in out
    assert "omega.turn.ask" not in out and "omega.turn.prompt" in out


def test_the_reply_path_does_not_load_the_gates_language_identifier() -> None:
    """py3langid and numpy (about 12 MiB of every answering process) load when the gate first
    reads a proposal, not when the pipeline is imported."""
    code = (
        "import sys\n"
        "import omega.gateway.pipeline\n"
        "from omega.evolution.gate import legibility\n"
        "print('py3langid' in sys.modules, 'numpy' in sys.modules)\n"
        "legibility._identifier()\n"
        "print('py3langid' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False", "True"]


def test_the_gateway_loads_neither_the_gate_nor_an_http_client_until_one_is_needed() -> None:
    """The gate's lexicons (hundreds of regexes, ~0.2 s) and jsonschema load when a proposal or
    a lesson is first gated, httpx when a voice message is first transcribed: not in every
    process that starts a gateway."""
    code = (
        "import sys\n"
        "import omega.gateway.gateway\n"
        "from omega.evolution import gate\n"
        "heavy = ('omega.evolution.gate.gate', 'omega.evolution.gate.lexicon', 'jsonschema', "
        "'httpx')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "gate.gate_proposal\n"
        "print('omega.evolution.gate.gate' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split("\n")[:2] == ["[]", "True"]
