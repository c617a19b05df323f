"""The chat-completions request pydantic-ai's OpenAI chat model sends for Omega's turns, and what
its answer means, with no pydantic-ai (the lean first request, omega.providers.lean_api).

pydantic-ai shapes a request by the model's profile (`max_completion_tokens` or `max_tokens`,
a system or developer role, strict tool schemas); the families below are the ones whose
requests are mirrored here and compared with pydantic-ai's own, body for body
(tests/integration/test_lean_body.py). Any other model keeps pydantic-ai's path.
"""

from __future__ import annotations

from typing import Any

from omega.types import Context

# Model name prefixes (lower case) whose request shape is mirrored; fine-tuned models ("ft:")
# get another schema transformer, so they are not.
LEAN_FAMILIES = (
    "gpt-4o",
    "gpt-4.1",
    "gpt-5",
    "o3",
    "o4",
    "llama",
    "qwen",
    "mistral",
    "fake-model",
    "anthropic/claude",
    "openai/gpt-4",
    "meta-llama/",
)
# What an answer's message may carry besides its text and still be a plain text answer.
_PLAIN_KEYS = frozenset({"role", "content"})


def knows_model(model: str) -> bool:
    """Whether requests to `model` are mirrored here."""
    return model.lower().startswith(LEAN_FAMILIES)


def messages(context: Context) -> list[dict[str, Any]] | None:
    """The `messages` pydantic-ai sends for the context: its turns in order, the system prompt
    after any leading system turns; None for turns it may send otherwise (an empty one)."""
    mapped: list[dict[str, Any]] = []
    for turn in context.messages:
        if not turn.content:
            return None
        role = turn.role if turn.role in ("assistant", "system") else "user"
        mapped.append({"role": role, "content": turn.content})
    if context.system_prompt:
        leading = 0
        while leading < len(mapped) and mapped[leading]["role"] == "system":
            leading += 1
        mapped.insert(leading, {"role": "system", "content": context.system_prompt})
    return mapped


def request_body(
    model: str, context: Context, tools: list[dict[str, Any]] | None
) -> dict[str, Any] | None:
    """The body of the request (tools: the entries offered; None or empty: none); None when
    the context's turns are not mirrored."""
    mapped = messages(context)
    if mapped is None:
        return None
    body: dict[str, Any] = {"model": model, "stream": False, "messages": mapped}
    if context.max_tokens:
        body["max_completion_tokens"] = context.max_tokens
    if tools:
        body["tool_choice"] = "auto"
        body["tools"] = tools
    return body


def message_of(data: Any) -> dict[str, Any] | None:
    """The answer's first choice's message; None for an answer that has none (an odd 200)."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    return message if isinstance(message, dict) else None


def plain_text(data: dict[str, Any]) -> str | None:
    """The answer's text when it is one pydantic-ai would end a run with as it is: a finished
    message with text only (no tool call, no thinking, no refusal); None otherwise."""
    message = message_of(data)
    if message is None or data["choices"][0].get("finish_reason") != "stop":
        return None
    content = message.get("content")
    if not isinstance(content, str) or not content or "<think" in content:
        return None
    if any(value not in (None, [], "") for key, value in message.items() if key not in _PLAIN_KEYS):
        return None
    return content
