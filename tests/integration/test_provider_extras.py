"""The base install has OpenAI's SDK only (issue 41): a provider or a skill's MCP servers whose
SDK is not installed say which extra brings it, in `omega ask` and `omega status`, and the MCP
servers' record, instead of failing on an import. Python's own switch for a module that is not
there (`sys.modules[name] = None`) stands in for the missing package."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.api_models import SDK_EXTRAS, missing_sdk
from omega.sandbox import Sandbox
from omega.tools.mcp import MCP_INSTALL, start_servers
from omega.tools.mcp_health import failures
from omega.types import McpServer

PROVIDERS = [("anthropic", "anthropic", "sk-ant-test"), ("gemini", "gemini", "AIza-test")]


def omega_without(
    modules: list[str], *args: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`omega <args>` in a process where `modules` cannot be imported."""
    code = (
        "import sys\n"
        f"for name in {modules!r}:\n    sys.modules[name] = None\n"
        "from omega.cli.main import main\n"
        f"sys.argv = ['omega', *{list(args)!r}]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("provider", "extra", "key"), PROVIDERS)
def test_a_provider_without_its_sdk_names_its_extra(
    isolated_env: Path, provider: str, extra: str, key: str
) -> None:
    assert missing_sdk(provider) == ""  # the dev install has every extra
    module = SDK_EXTRAS[provider][0]
    env = {
        "OMEGA_PROVIDER__DEFAULT": provider,
        f"OMEGA_PROVIDER__{provider.upper()}__API_KEY": key,
        # Nothing listens there: were the SDK imported, the call would fail otherwise.
        f"OMEGA_PROVIDER__{provider.upper()}__BASE_URL": "http://127.0.0.1:9",
    }
    install = f"pip install 'omega-agent[{extra}]'"
    asked = omega_without([module], "ask", "Hello?", env=env)
    assert asked.returncode == 1, asked.stderr
    assert install in asked.stderr and "Traceback" not in asked.stderr
    status = omega_without([module], "status", env=env)
    assert install in status.stdout, status.stdout + status.stderr


def test_openai_compatible_providers_need_no_extra() -> None:
    assert [missing_sdk(name) for name in ("openai", "ollama", "openrouter", "local")] == [""] * 4


@pytest.mark.parametrize("module", ["mcp", "fastmcp"])
async def test_mcp_servers_without_the_sdk_are_recorded_with_the_extra(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    paths = OmegaPaths(isolated_env)
    paths.ensure()
    sandbox = Sandbox(SandboxSection(), paths)
    server = McpServer("calc", sys.executable, ("-c", "pass"))
    async with AsyncExitStack() as stack:
        assert await start_servers(stack, [server, server], sandbox) == []
    [failure] = failures(isolated_env)
    assert failure.name == "calc" and MCP_INSTALL in failure.reason
