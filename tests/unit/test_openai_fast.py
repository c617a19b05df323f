"""The openai SDK's request walk is skipped only where it would change nothing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any, Required

import pytest
from openai import omit
from openai._utils._transform import PropertyInfo, async_maybe_transform
from openai.types.chat import completion_create_params as params
from typing_extensions import TypedDict  # the SDK's own kind, as its params use

from omega.providers import openai_fast

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


class Aliased(TypedDict, total=False):
    card_id: Required[Annotated[str, PropertyInfo(alias="cardID")]]


class Nested(TypedDict, total=False):
    items: list[Aliased]


def test_chat_completion_params_need_no_walk_but_aliases_do() -> None:
    assert not openai_fast.needs_transform(params.CompletionCreateParamsNonStreaming)
    assert openai_fast.needs_transform(Aliased)
    assert openai_fast.needs_transform(Nested)  # found however deep it sits


def body() -> dict[str, Any]:
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]
    messages = [{"role": "system", "content": "s"}] + [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(10)
    ]
    return {"model": "m", "messages": messages, "tools": tools, "stream": False, "n": omit}


def test_plain_requests_equal_the_sdk_walk_and_skip_it() -> None:
    calls: list[object] = []

    async def original(data: object, expected: Any) -> object:
        calls.append(data)
        return await async_maybe_transform(data, expected)

    fast = openai_fast.identity_when_plain(original, (params.CompletionCreateParamsNonStreaming,))
    kind = params.CompletionCreateParamsNonStreaming
    got = asyncio.run(fast(body(), kind))
    assert got == asyncio.run(async_maybe_transform(body(), kind))
    assert (
        isinstance(got, dict) and "n" not in got
    )  # omitted arguments are dropped, as the SDK drops them
    assert calls == []
    # A value that is not plain JSON (a date here) takes the SDK's own path.
    odd = {**body(), "metadata": {"when": datetime(2026, 1, 1, tzinfo=UTC)}}
    asyncio.run(fast(odd, kind))
    assert calls == [odd]
    # Other request types are never touched.
    asyncio.run(fast({"card_id": "x"}, Aliased))
    assert len(calls) == 2


def test_install_replaces_the_chat_completions_walk() -> None:
    from openai.resources.chat.completions import completions

    assert openai_fast.install()
    assert completions.__dict__["async_maybe_transform"] is not async_maybe_transform
