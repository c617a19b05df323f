"""The bundled SmolLM2 model really answers, offline, through the provider and the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.config.providers import LocalConfig
from omega.providers.local import LocalProvider, bundled_model_path
from omega.types import ChatMessage, Context
from tests.conftest import run_omega
from tests.dbfile import connect_db


@pytest.mark.no_store
def test_bundled_model_ships_in_the_wheel() -> None:
    path = bundled_model_path()
    assert path is not None and path.suffix == ".gguf"
    assert path.stat().st_size > 50_000_000


@pytest.mark.no_store
@pytest.mark.slow
def test_local_provider_answers_a_prompt() -> None:
    provider = LocalProvider(LocalConfig(max_tokens=24))
    assert provider.availability()[0]
    context = Context(
        system_prompt="You are a helpful assistant.",
        messages=[ChatMessage("user", "What is the capital of France?")],
    )
    reply = asyncio.run(provider.complete(context))
    assert reply.text.strip()
    assert reply.provider == "local"
    assert "SmolLM2" in reply.model
    assert reply.usage.input_tokens > 5
    assert 0 < reply.usage.output_tokens <= 24


@pytest.mark.no_store
@pytest.mark.slow
def test_local_provider_trims_history_that_does_not_fit() -> None:
    provider = LocalProvider(LocalConfig(n_ctx=512, max_tokens=16))
    long_history = [
        ChatMessage("user", "tell me about cats " * 40),
        ChatMessage("assistant", "cats are great " * 40),
    ] * 4
    context = Context(
        system_prompt="Be brief.", messages=[*long_history, ChatMessage("user", "Say yes." * 300)]
    )
    reply = asyncio.run(provider.complete(context))
    assert reply.usage.input_tokens <= 512


@pytest.mark.slow
def test_terminal_chat_answers_offline_with_the_bundled_model(isolated_env: Path) -> None:
    result = run_omega(
        "chat",
        stdin="Hello, who are you?\n/quit\n",
        env={
            "OMEGA_PROVIDER__DEFAULT": "local",
            "OMEGA_PROVIDER__LOCAL__MAX_TOKENS": "24",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/unreachable",
        },
        timeout=300,  # ~12 s alone; two cores shared with four test workers once took 120 s
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("omega> ")
    assert len(result.stdout.strip()) > len("omega>")

    with connect_db(isolated_env / "memory.db") as conn:
        rows = conn.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    assert rows[0] == ("user", "Hello, who are you?")
    assert rows[1][0] == "assistant"


# What a build for every x86-64 CPU since 2013 may use (scripts/install-llama.sh), and build
# options that are not CPU features. AMX, AVX-512 and AVX-VNNI come only from -march=native.
PORTABLE_X86_FEATURES = {"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"}
BUILD_OPTIONS = {"LLAMAFILE", "OPENMP", "REPACK", "KLEIDIAI", "ACCELERATE"}


@pytest.mark.no_store
def test_the_installed_llama_cpp_runs_on_every_cpu_of_its_architecture() -> None:
    import platform
    import re

    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    enabled = {name for name, value in re.findall(r"(\w+) = (\d+)", info) if value != "0"}
    assert not {name for name in enabled if name.startswith("AMX")}, info
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "AVX2" in enabled, info
        assert enabled <= PORTABLE_X86_FEATURES | BUILD_OPTIONS, info
