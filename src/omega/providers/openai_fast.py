"""The openai SDK walks every chat-completions request against its TypedDicts before sending it
(about a millisecond per history message, the largest CPU cost of a warm turn). That walk renames
aliased keys and formats dates and files; the chat-completions parameters have neither, so a
request of plain JSON values is sent as it is. Anything else still takes the SDK's own path."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import typing_extensions as typing

log = logging.getLogger(__name__)

Transform = Callable[[object, Any], Coroutine[Any, Any, object]]
_PLAIN = (str, int, float, bool, type(None))
_installed = False


def needs_transform(annotation: object, seen: set[int] | None = None) -> bool:
    """Whether anything inside `annotation` carries an openai PropertyInfo alias or format."""
    from openai._utils._transform import PropertyInfo

    seen = set() if seen is None else seen
    if id(annotation) in seen:
        return False
    seen.add(id(annotation))
    if typing.get_origin(annotation) is typing.Annotated:
        for meta in typing.get_args(annotation)[1:]:
            if isinstance(meta, PropertyInfo) and (meta.alias or meta.format):
                return True
    if typing.is_typeddict(annotation):
        hints = typing.get_type_hints(annotation, include_extras=True)
        return any(needs_transform(hint, seen) for hint in hints.values())
    return any(needs_transform(arg, seen) for arg in typing.get_args(annotation))


def is_plain_json(value: object) -> bool:
    """Whether `value` is made only of dicts with str keys, lists and JSON scalars."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _PLAIN):
            continue
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                return False
            stack.extend(item.values())
        else:
            return False
    return True


def identity_when_plain(original: Transform, expected: tuple[object, ...]) -> Transform:
    """A stand-in for the SDK's transform: for `expected` params whose values are plain JSON,
    the request minus its omitted arguments; otherwise the SDK's own transform."""
    from openai._utils import is_given

    async def transform(data: object, expected_type: Any) -> object:
        if expected_type in expected and isinstance(data, Mapping):
            given = {key: value for key, value in data.items() if is_given(value)}
            if is_plain_json(given):
                return given
        return await original(data, expected_type)

    return transform


def install() -> bool:
    """Skip the SDK's walk for chat-completions requests, once, if their types need none;
    returns whether it is skipped."""
    global _installed
    if _installed:
        return True
    try:
        from openai.resources.chat.completions import completions as module
        from openai.types.chat import completion_create_params as params

        expected = (
            params.CompletionCreateParams,
            params.CompletionCreateParamsStreaming,
            params.CompletionCreateParamsNonStreaming,
        )
        if any(needs_transform(kind) for kind in expected):
            log.info("openai request types carry aliases or formats; the SDK's walk stays")
            return False
        original = module.__dict__["async_maybe_transform"]
        module.__dict__["async_maybe_transform"] = identity_when_plain(original, expected)
    except Exception:  # another SDK layout: its own path is always correct
        log.debug("openai request walk kept", exc_info=True)
        return False
    _installed = True
    return True
