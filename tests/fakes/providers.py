"""In-process provider doubles for tests that drive the pipeline without a wire: an echo and a
scripted provider that answers from a list and records every context it was given. (Tests of
the real providers use the wire fakes: openai_server, anthropic_server, gemini_server.)"""

from __future__ import annotations

import asyncio

from omega.gateway.routing import PLANNER_TAG
from omega.types import Context, Reply, Usage

DIRECT = '{"kind": "direct"}'  # the planning call's answer: no plan, answer directly

Answer = str | BaseException


class FakeProvider:
    """What every double shares: a name, always available, nothing to prepare, and the
    contexts it was asked with, in order."""

    def __init__(self, name: str) -> None:
        self.name = name  # as on its replies
        self.contexts: list[Context] = []

    def availability(self) -> tuple[bool, str]:
        """Always available."""
        return True, "test"

    async def prepare(self) -> None:
        """Nothing to load."""
        return None

    async def complete(self, context: Context) -> Reply:
        """Record the context; the subclass answers it."""
        self.contexts.append(context)
        return await self.answer(context)

    async def answer(self, context: Context) -> Reply:
        """The reply to one context."""
        raise NotImplementedError

    @property
    def prompts(self) -> list[str]:
        """The prompt (the last user message) of every call, planning calls included."""
        return [c.prompt for c in self.contexts]

    @property
    def system_prompts(self) -> list[str]:
        """The system prompt of every call, planning calls included."""
        return [c.system_prompt for c in self.contexts]

    @property
    def answered(self) -> list[Context]:
        """The calls that were not Omega's planning calls."""
        return [c for c in self.contexts if PLANNER_TAG not in c.prompt]


class EchoProvider(FakeProvider):
    """Answers "echo: <prompt><suffix>"; planning calls get a direct route."""

    def __init__(self, name: str = "echo", suffix: str = "") -> None:
        super().__init__(name)
        self.suffix = suffix

    async def answer(self, context: Context) -> Reply:
        """Echo the prompt back."""
        if PLANNER_TAG in context.prompt:
            return Reply(text=DIRECT, provider=self.name)
        return Reply(text=f"echo: {context.prompt}{self.suffix}", provider=self.name)


class ScriptedProvider(FakeProvider):
    """Answers from `answers` in order, then `default` for ever; an exception among them is
    raised instead. Planning calls get `plan` where one is given (without using up an answer),
    else they take the next answer like any call. `model` is the model on the replies (None:
    the one asked for); `delay` seconds pass before each answer."""

    def __init__(
        self,
        *answers: Answer,
        default: Answer = "ok",
        plan: str | None = None,
        name: str = "scripted",
        model: str | None = "m",
        usage: Usage | None = None,
        delay: float = 0.0,
    ) -> None:
        super().__init__(name)
        self.answers = list(answers)
        self.default = default
        self.plan = plan
        self.model = model
        self.usage = usage or Usage()
        self.delay = delay

    async def answer(self, context: Context) -> Reply:
        """The next scripted answer (or the plan, for a planning call)."""
        if self.delay:
            await asyncio.sleep(self.delay)
        model = (context.model or "") if self.model is None else self.model
        if self.plan is not None and PLANNER_TAG in context.prompt:
            return Reply(text=self.plan, provider=self.name, model=model)
        answer = self.answers.pop(0) if self.answers else self.default
        if isinstance(answer, BaseException):
            raise answer
        return Reply(text=answer, provider=self.name, model=model, usage=self.usage)
