"""The lean first request (omega.providers.lean_api) is the request pydantic-ai sends, body for
body, and its reply the one pydantic-ai's path gives: for openai, ollama and openrouter, the
model families it mirrors, tools offered or not or filtered for a guest, max_tokens set or not,
and histories with assistant and system turns. Against the scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from omega.config import Config
from omega.paths import OmegaPaths
from omega.providers import build_provider, lean_api
from omega.providers.api import ApiProvider
from omega.providers.base import ProviderError
from omega.types import ChatMessage, Context, ImageInput, McpServer, Reply
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Step

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"
ROOT = Path(__file__).resolve().parents[2]

MODELS = [
    ("openai", "gpt-4o-mini"),
    ("openai", "gpt-4.1-nano"),
    ("openai", "gpt-5-mini"),
    ("openai", "o3-mini"),
    ("openai", "fake-model"),
    ("ollama", "llama3.2"),
    ("ollama", "qwen3:8b"),
    ("ollama", "mistral-small"),
    ("openrouter", "anthropic/claude-sonnet-4"),
    ("openrouter", "openai/gpt-4o-mini"),
    ("openrouter", "meta-llama/llama-3.3-70b-instruct"),
]
HISTORIES = {
    "one turn": [ChatMessage("user", "Sum?")],
    "assistant turns": [
        ChatMessage("user", "Hi"),
        ChatMessage("assistant", "Hello"),
        ChatMessage("user", "How are you?"),
        ChatMessage("assistant", "Fine."),
        ChatMessage("user", "Sum?"),
    ],
    "system turns": [
        ChatMessage("system", "Earlier: the garden."),
        ChatMessage("user", "Hi"),
        ChatMessage("system", "A note."),
        ChatMessage("assistant", "Hello"),
        ChatMessage("user", "Sum?"),
    ],
}
TOOLS: dict[str, tuple[bool, frozenset[str] | None]] = {
    "no tools": (False, None),
    "all tools": (True, None),
    "a guest's": (True, frozenset({"read_file", "list_files", "calc_add"})),
    "none allowed": (True, frozenset()),
}


def provider_for(server: FakeOpenAI, home: Path, name: str, model: str) -> ApiProvider:
    section = {"base_url": server.base_url, "api_key": "sk-test", "model": model}
    config = Config.model_validate({"provider": {name: section}})
    home.mkdir(parents=True, exist_ok=True)  # the price memo's folder
    provider = build_provider(name, config, OmegaPaths(home))
    assert isinstance(provider, ApiProvider)
    return provider


def lean(request: RecordedRequest) -> bool:
    """Whether the request went out lean (the OpenAI SDK names itself in every request)."""
    return "x-stainless-lang" not in request.headers


def both(
    provider: ApiProvider, context: Context, monkeypatch: pytest.MonkeyPatch
) -> tuple[Reply, Reply]:
    """The call sent lean, then by pydantic-ai."""
    by_lean = asyncio.run(provider.complete(context))
    with monkeypatch.context() as patch:
        patch.setattr(lean_api, "body_for", lambda provider, context: None)
        by_sdk = asyncio.run(provider.complete(context))
    return by_lean, by_sdk


@pytest.mark.parametrize(("name", "model"), MODELS)
def test_the_lean_request_is_the_one_pydantic_ai_sends(
    fake_openai: FakeOpenAI,
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    model: str,
) -> None:
    provider = provider_for(fake_openai, isolated_env, name, model)
    for history in HISTORIES.values():
        for use_tools, allowed in TOOLS.values():
            for max_tokens in (None, 300):
                context = Context(
                    system_prompt="You are a test assistant.",
                    messages=history,
                    use_tools=use_tools,
                    allowed_tools=allowed,
                    max_tokens=max_tokens,
                )
                by_lean, by_sdk = both(provider, context, monkeypatch)
                first, second = fake_openai.requests[-2:]
                assert lean(first) and not lean(second)
                assert first.body == second.body, (history, use_tools, allowed, max_tokens)
                assert first.headers["authorization"] == second.headers["authorization"]
                assert by_lean.text == by_sdk.text == "echo: Sum?"
                assert (by_lean.model, by_lean.usage) == (by_sdk.model, by_sdk.usage)
                assert by_lean.tool_calls == by_sdk.tool_calls == ()


def test_a_priced_reply_costs_what_pydantic_ai_says(
    fake_openai: FakeOpenAI, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dated snapshot's name in the answer, cached tokens: the same model, tokens and cost."""
    provider = provider_for(fake_openai, isolated_env, "openai", "gpt-4o-mini")
    step = Step(text="Hi there", model="gpt-4o-mini-2024-07-18", cached_tokens=3)
    fake_openai.script = [step, step, step]
    context = Context(system_prompt="Be brief." * 40, messages=[ChatMessage("user", "Hi")])
    by_lean, by_sdk = both(provider, context, monkeypatch)
    assert by_lean.usage.cost_usd and by_lean.usage.cached_tokens == 3
    assert (by_lean.text, by_lean.model, by_lean.usage) == (by_sdk.text, by_sdk.model, by_sdk.usage)
    # Priced again from the home's price memo, which learnt both names: the same cost.
    memo = provider.memo
    assert memo is not None and memo.knows("openai", step.model, fake_openai.base_url)
    remembered = asyncio.run(provider.complete(context))
    assert remembered.usage == by_lean.usage


@pytest.mark.parametrize(
    "case", ["unknown model", "mcp server", "image", "unknown tool", "fine-tuned model"]
)
def test_what_the_lean_path_does_not_mirror_takes_pydantic_ai_s(
    fake_openai: FakeOpenAI, isolated_env: Path, case: str
) -> None:
    model = {"unknown model": "o1-preview", "fine-tuned model": "ft:gpt-4o-mini:x"}
    provider = provider_for(fake_openai, isolated_env, "openai", model.get(case, "gpt-4o-mini"))
    context = Context(system_prompt="Hi.", messages=[ChatMessage("user", "Sum?")], use_tools=True)
    if case == "mcp server":
        server = McpServer("calc", sys.executable, (str(ECHO_SERVER),))
        turns = [ChatMessage("user", "Sum?")]
        context = Context("Hi.", turns, use_tools=True, mcp_servers=(server,))
    if case == "image":
        image = ImageInput(data=b"\x89PNG", mime_type="image/png")
        context = Context("Hi.", [ChatMessage("user", "Sum?")], images=(image,))
    if case == "unknown tool":
        assert provider.tools is not None

        def weather(city: str) -> str:
            """The weather in a city."""
            return city

        provider.tools.add(weather)
    assert asyncio.run(provider.complete(context)).text == "echo: Sum?"
    assert not lean(fake_openai.requests[-1])


def test_an_answer_with_thinking_is_read_by_pydantic_ai(
    fake_openai: FakeOpenAI, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = provider_for(fake_openai, isolated_env, "ollama", "qwen3:8b")
    step = Step(text="<think>Sums are easy.</think>It is 4.")
    fake_openai.script = [step, step]
    context = Context(system_prompt="Hi.", messages=[ChatMessage("user", "2+2?")], use_tools=True)
    by_lean, by_sdk = both(provider, context, monkeypatch)
    assert lean(fake_openai.requests[0])
    assert by_lean.text == by_sdk.text == "It is 4."
    assert (by_lean.model, by_lean.usage) == (by_sdk.model, by_sdk.usage)


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def test_a_lean_answer_that_calls_a_tool_goes_on_in_the_agent(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    provider = provider_for(fake_openai, isolated_env, "openai", "gpt-4o-mini")
    (isolated_env / "workspace").mkdir(parents=True, exist_ok=True)
    (isolated_env / "workspace" / "a.txt").write_text("apples")
    fake_openai.script = [
        Step(tool_calls=[tool_call("call_1", "read_file", path="a.txt")]),
        Step(text="It says apples."),
    ]
    context = Context("Hi.", [ChatMessage("user", "What is in a.txt?")], use_tools=True)
    reply = asyncio.run(provider.complete(context))
    first, second = fake_openai.requests
    assert lean(first) and not lean(second)
    assert second.messages[: len(first.messages)] == first.messages
    assert second.body["tools"] == first.body["tools"]
    assert reply.text == "It says apples."
    assert [(c.name, c.ok) for c in reply.tool_calls] == [("read_file", True)]
    answered = [usage for _, usage in fake_openai.answered]
    assert reply.usage.input_tokens == sum(u["prompt_tokens"] for u in answered)
    assert reply.usage.cost_usd and reply.usage.cost_usd > 0


LEAN_PROCESS = """
import asyncio, sys
from pathlib import Path
from omega.config import Config
from omega.paths import OmegaPaths
from omega.providers import build_provider
from omega.types import ChatMessage, Context
section = {"base_url": sys.argv[1], "api_key": "sk-test", "model": "gpt-4o-mini"}
config = Config.model_validate({"provider": {"openai": section}})
provider = build_provider("openai", config, OmegaPaths(Path(sys.argv[2])))
async def main():
    await provider.prepare()
    context = Context("Hi.", [ChatMessage("user", "Sum?")], use_tools=True, max_tokens=50)
    return await provider.complete(context)
reply = asyncio.run(main())
heavy = sorted(m for m in ("genai_prices", "pydantic_ai", "openai") if m in sys.modules)
print(reply.text, heavy)
"""


def test_a_process_answered_lean_imports_neither_pydantic_ai_nor_the_openai_sdk(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """Nor genai-prices, once the home's price memo knows the model."""
    isolated_env.mkdir(parents=True, exist_ok=True)  # the price memo's folder
    said = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", LEAN_PROCESS, fake_openai.base_url, str(isolated_env)],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
            check=False,
        )
        said.append(done.stdout.strip() or done.stderr)
    assert said == ["echo: Sum? ['genai_prices']", "echo: Sum? []"]


def failure(provider: ApiProvider, context: Context) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        asyncio.run(provider.complete(context))
    return caught.value


@pytest.mark.parametrize("status", [400, 401, 408, 429, 500, 503])
def test_a_lean_failure_is_the_error_pydantic_ai_s_path_gives(
    fake_openai: FakeOpenAI, isolated_env: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    provider = provider_for(fake_openai, isolated_env, "openai", "gpt-4o-mini")
    fake_openai.script = [Step(status=status, text="boom", retry_after=7)] * 2
    context = Context("Hi.", [ChatMessage("user", "Sum?")], use_tools=True)
    by_lean = failure(provider, context)
    with monkeypatch.context() as patch:
        patch.setattr(lean_api, "body_for", lambda provider, context: None)
        by_sdk = failure(provider, context)
    first, second = fake_openai.requests
    assert lean(first) and not lean(second)
    assert (by_lean.kind, by_lean.retry_after) == (by_sdk.kind, by_sdk.retry_after)
    assert str(by_lean) == str(by_sdk)


def test_a_lean_request_to_a_server_that_is_down_is_unavailable(isolated_env: Path) -> None:
    with FakeOpenAI() as server:
        provider = provider_for(server, isolated_env, "openai", "gpt-4o-mini")
    context = Context("Hi.", [ChatMessage("user", "Sum?")])
    assert failure(provider, context).kind == "unavailable"
