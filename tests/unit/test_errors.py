"""One error family: every exception class Omega defines derives from OmegaError, so callers can
catch Omega's errors as one kind."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

import omega
from omega.errors import OmegaError

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def omega_modules() -> list[types.ModuleType]:
    """Every module of the omega package, imported."""
    names = [info.name for info in pkgutil.walk_packages(omega.__path__, "omega.")]
    names.remove("omega.__main__")  # `python -m omega`: importing it runs the CLI; no class
    return [omega, *(importlib.import_module(name) for name in sorted(names))]


def error_classes(modules: list[types.ModuleType]) -> list[type[BaseException]]:
    """The exception classes defined (not just imported) in `modules`."""
    found = []
    for module in modules:
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                found.append(value)
    return found


def outsiders(classes: list[type[BaseException]]) -> list[str]:
    """The classes that are not OmegaErrors, as module.name."""
    return [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, OmegaError)]


def test_every_error_class_is_an_omega_error() -> None:
    classes = error_classes(omega_modules())
    assert len(classes) >= 19  # the walk really found them
    problems = outsiders(classes)
    assert not problems, "derive these from omega.errors.OmegaError:\n" + "\n".join(problems)


def test_a_stray_error_class_is_caught() -> None:
    stray = types.ModuleType("omega.stray")
    exec("class StrayError(ValueError):\n    pass\n", stray.__dict__)
    assert outsiders(error_classes([stray])) == ["omega.stray.StrayError"]


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("omega.config.ConfigError", Exception),
        ("omega.schedule.ScheduleError", ValueError),
        ("omega.tools.safe_fs.UnsafePathError", OSError),
        ("omega.memory.tasks.TaskLookupError", LookupError),
        ("omega.web.app.WebConfigError", ValueError),
        ("omega.evolution.proposals.registration.ReviewError", ValueError),
    ],
)
def test_errors_keep_the_standard_base_callers_catch(name: str, base: type[Exception]) -> None:
    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    assert issubclass(cls, OmegaError) and issubclass(cls, base)
    assert isinstance(cls("boom"), base) and str(cls("boom")) == "boom"
