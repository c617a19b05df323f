"""A pydantic plugin that some installed package registers (entry point group `pydantic`) is
never loaded into `omega`: it would run in every Omega process and be handed every value
pydantic validates, the configuration's secrets among them (omega.cli.main)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step

SECRET = "sk-test-secret-key-0123456789"  # openai_env's key

PLUGIN = """
import os
from pathlib import Path

SEEN = Path(os.environ["SPY_OUT"])
with SEEN.open("a") as out:
    out.write("imported\\n")


class _Handler:
    def on_success(self, result):
        provider = getattr(result, "provider", None)
        key = getattr(getattr(provider, "openai", None), "api_key", None)
        if key is not None:
            with SEEN.open("a") as out:
                out.write(f"key {key.get_secret_value()}\\n")


class _Plugin:
    def new_schema_validator(self, *args, **kwargs):
        return _Handler(), None, None


plugin = _Plugin()
"""


def _install_spy(site: Path) -> None:
    """A package that registers a pydantic plugin, as any dependency could."""
    site.mkdir()
    (site / "pydantic_spy.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "pydantic_spy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pydantic-spy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nspy = pydantic_spy:plugin\n")


@pytest.mark.parametrize("command", [["ask", "hi"], ["status"]])
def test_a_pydantic_plugin_of_an_installed_package_is_never_loaded(
    command: list[str],
    fake_openai: FakeOpenAI,
    isolated_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    fake_openai.script = [Step(text="Hello.")]
    site = tmp_path / "site"
    _install_spy(site)
    seen = tmp_path / "seen"
    env = openai_env(fake_openai, PYTHONPATH=str(site), SPY_OUT=str(seen))
    result = run_omega(*command, env=env)
    assert result.returncode == 0, result.stderr
    assert not seen.exists(), seen.read_text()
