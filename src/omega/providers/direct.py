"""What pydantic-ai is asked, and what its failures mean: Omega's turns as its messages, its
errors as ProviderError kinds, and the one-request path.

A call with no tool to offer (classification, planning, summaries, facts, the gate's judge, a
reply without tools) needs exactly one model request: it goes to the model directly
(`pydantic_ai.direct.model_request`) instead of through the agent graph, whose per-run set-up
(run context, instruction and tool bookkeeping, task groups) was about a third of a warm turn's
CPU (bench/profiles/warm_path.md). A call that offers tools makes its first request the same
way, with the tools the agent would offer (ApiProvider.complete); only a response that calls a
tool goes on in the agent. The request sent is the same: same messages, instructions, tools
and settings, and the same audit, limiter, breaker, fallback and costing around it (all of
them sit above the provider).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from omega.providers import prices
from omega.providers.base import ErrorKind, ProviderError, http_error_kind
from omega.types import Context, Reply, Usage

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
    from pydantic_ai.models import Model, ModelRequestParameters
    from pydantic_ai.settings import ModelSettings


def split_context(context: Context) -> tuple[list[ModelMessage], str | None]:
    """Omega's turns as pydantic-ai history plus the latest user message as the prompt."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        UserPromptPart,
    )

    turns = list(context.messages)
    prompt: str | None = None
    if turns and turns[-1].role == "user":
        prompt = turns.pop().content
    messages: list[ModelMessage] = []
    pending: list[Any] = []
    for turn in turns:
        if turn.role == "assistant":
            if pending:
                messages.append(ModelRequest(parts=pending))
                pending = []
            messages.append(ModelResponse(parts=[TextPart(turn.content)]))
        elif turn.role == "system":
            pending.append(SystemPromptPart(turn.content))
        else:
            pending.append(UserPromptPart(turn.content))
    if pending:
        messages.append(ModelRequest(parts=pending))
    return messages, prompt


def run_error_kind(exc: Exception) -> ErrorKind:
    """A failed run's kind: refused/reset/DNS/TLS "unavailable" (opens a breaker), "timeout"."""
    from pydantic_ai import exceptions

    if isinstance(exc, exceptions.ModelRateLimitError):
        return "rate_limit"
    timed_out = (TimeoutError, exceptions.ModelTimeoutError, exceptions.ModelRequestTimeout)
    if isinstance(exc, timed_out) or "timed out" in str(exc).lower():
        return "timeout"
    if isinstance(exc, exceptions.ModelOverloadedError):
        return "overloaded"
    down = (
        exceptions.ModelConnectionError,
        exceptions.ModelUnavailableError,
        exceptions.ModelServerError,
    )
    return "unavailable" if isinstance(exc, down) else "error"


@contextlib.contextmanager
def provider_errors(name: str) -> Iterator[None]:
    """pydantic-ai's failures (and a timeout) as ProviderError, with their kind."""
    from pydantic_ai import exceptions

    try:
        yield
    except exceptions.ModelHTTPError as exc:
        raise ProviderError(
            f"{name} HTTP {exc.status_code}: {exc.body!r:.300}",
            kind=http_error_kind(exc.status_code),
            retry_after=getattr(exc, "retry_after", None),
        ) from exc
    except exceptions.UsageLimitExceeded as exc:
        raise ProviderError(f"{name}: too many tool rounds ({exc})") from exc
    except (exceptions.AgentRunError, exceptions.UserError) as exc:
        raise ProviderError(f"{name}: {exc}", kind=run_error_kind(exc)) from exc
    except TimeoutError as exc:
        raise ProviderError(f"{name}: request timed out", kind="timeout") from exc


def first_request(
    instructions: str | list[Any] | None, user_prompt: str | list[Any] | None
) -> tuple[ModelRequest, ModelRequestParameters]:
    """The request a run's first step sends after the history (the user's prompt and the
    instructions), and its parameters before any tools are added."""
    from pydantic_ai.messages import InstructionPart, ModelRequest, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters

    parts = [UserPromptPart(user_prompt)] if user_prompt is not None else []
    if isinstance(instructions, list):  # Anthropic: the stable prefix, then the turn's part
        given = [p if isinstance(p, InstructionPart) else InstructionPart(p) for p in instructions]
        request = ModelRequest(parts=parts, instructions=InstructionPart.join(given))
        return request, ModelRequestParameters(instruction_parts=given)
    return ModelRequest(parts=parts, instructions=instructions), ModelRequestParameters()


async def send(
    name: str,
    model: Model,
    messages: list[ModelMessage],
    settings: ModelSettings,
    parameters: ModelRequestParameters,
) -> ModelResponse:
    """One model request, no agent graph; its cost filled in as the agent graph fills it."""
    from pydantic_ai.direct import model_request

    with provider_errors(name):  # one request that failed was billed nothing
        response = await model_request(
            model, messages, model_settings=settings, model_request_parameters=parameters
        )
    if response.usage.cost is None:  # the agent graph prices each response it receives
        price(response)
    return response


# The models genai-prices does not list, by provider and model: looked up once, not for every
# response (a miss scans the whole list, about half a millisecond of a warm reply's CPU).
_UNPRICED: set[tuple[str | None, str | None, str | None]] = set()


def price(response: ModelResponse) -> None:
    """Fill in the response's cost from genai-prices, as the agent graph does; a model it does
    not list keeps no cost (and is not looked up again)."""
    unlisted = (response.provider_name, response.provider_url, response.model_name)
    if unlisted in _UNPRICED:
        return
    try:
        response.usage.cost = response.cost().total_price
    except LookupError:
        _UNPRICED.add(unlisted)
    except Exception:  # no usage reported, or a price that cannot be computed: no cost
        log.debug("no price for %s", response.model_name, exc_info=True)


def final_text(response: ModelResponse) -> str | None:
    """The answer in a response the agent would end its run with (text, no tool call; its text
    parts joined as the agent joins them); None for one it would act on or ask again."""
    from pydantic_ai.messages import TextPart, ThinkingPart

    if response.tool_calls or response.state == "suspended":
        return None
    if not all(isinstance(part, TextPart | ThinkingPart) for part in response.parts):
        return None
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    return text or None


def reply_of(
    name: str, model_name: str, response: ModelResponse, started: float, text: str | None = None
) -> Reply:
    """A response that answered in one request as Omega's reply (`text`: the response's own)."""
    usage = response.usage
    text = response.text if text is None else text
    return Reply(
        text=text.strip() if text else "",
        provider=name,
        model=response.model_name or model_name,
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=prices.total_cost([response]),
            cached_tokens=usage.cache_read_tokens,
        ),
        elapsed_ms=int((time.perf_counter() - started) * 1000),
    )


async def request_once(
    name: str,
    model: Model,
    model_name: str,
    history: list[ModelMessage],
    settings: ModelSettings,
    instructions: str | list[Any] | None,
    user_prompt: str | list[Any] | None,
) -> Reply:
    """One model request, no agent graph: for a call that offers no tools."""
    request, parameters = first_request(instructions, user_prompt)
    started = time.perf_counter()
    response = await send(name, model, [*history, request], settings, parameters)
    return reply_of(name, model_name, response, started)
