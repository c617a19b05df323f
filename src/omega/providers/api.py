"""API providers through pydantic-ai v2: OpenAI-compatible (openai, ollama, openrouter),
Anthropic and Gemini. pydantic-ai is imported lazily so CLI start-up stays fast."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omega.logs import redact_url
from omega.providers import lean_api, prices
from omega.providers.api_models import OPENAI_COMPATIBLE, Endpoint, build_model, missing_sdk
from omega.providers.base import ProviderError, salvage_tool_calls, salvage_usage
from omega.providers.direct import (
    final_text,
    first_request,
    provider_errors,
    reply_of,
    request_once,
    send,
    split_context,
)
from omega.providers.sdk import SDK_LOCK, load_sdk, sdk_loaded
from omega.providers.vision import model_sees_images
from omega.tools import ToolDeps
from omega.types import Context, Reply, Usage

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.models import Model

    from omega.providers.price_memo import PriceMemo
    from omega.sandbox import Sandbox
    from omega.tools import ToolRegistry
    from omega.tools.wrappers import RecordingToolset

log = logging.getLogger(__name__)

# Rounds of tool calls one answer may take before further calls are refused.
MAX_TOOL_ROUNDS = 6
# The share of an answer's time (the provider's timeout) one tool call may take: a tool that
# hangs is stopped and told to the model as a failure while there is time left to answer.
TOOL_TIME_SHARE = 0.75


@dataclass(frozen=True)
class ApiSettings:
    """What an API provider needs; secrets are plain strings here and never logged."""

    name: str
    model: str
    api_key: str = ""
    base_url: str = ""
    model_complex: str = ""
    timeout_secs: float = 120.0
    # Retries of the provider's SDK client: none, so a 429 (and its retry-after) reaches
    # Omega's limiter at once and a down member its fallback breaker (issue 38).
    max_retries: int = 0
    vision: bool | None = None  # None: by provider, endpoint and model (`sees_images`)
    # Sockets this provider opens at most: one pool shared by all its models and calls.
    max_connections: int = 64
    # Tool calls one model response may ask for ([limits] max_tool_calls_per_round).
    max_tool_calls_per_round: int = 16


class ApiProvider:
    """A hosted or local HTTP model reached through pydantic-ai."""

    def __init__(
        self,
        settings: ApiSettings,
        tools: ToolRegistry | None = None,
        sandbox: Sandbox | None = None,
        memo: PriceMemo | None = None,
    ) -> None:
        self.settings = settings
        self.memo = memo  # list prices the lean first request looked up before
        self.tools = tools  # Omega's own tools, offered when a context allows tools
        self.sandbox = sandbox  # MCP servers run under it (None: the default mode)
        self._models: dict[str, Model] = {}
        self._http: Any = None  # the provider's one connection pool (httpx2.AsyncClient)
        # The event loop the pool serves: a pool's sockets belong to one loop, so another loop
        # (tests, `omega ask`) gets a fresh pool and models bound to it.
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._cached_agent: Agent[ToolDeps, str] | None = None

    @property
    def name(self) -> str:
        return self.settings.name

    def sees_images(self) -> bool:
        """Whether images are sent to the model as images (see ApiProviderConfig.vision)."""
        s = self.settings
        if s.vision is not None:
            return s.vision
        if s.name in ("anthropic", "gemini", "openrouter") or "api.openai.com" in s.base_url:
            return True
        return model_sees_images(s.model)  # any OpenAI-compatible server, Ollama's too

    def tool_names(self, context: Context | None = None) -> list[str]:
        """Omega's own tools this provider offers; with a context, only those the person
        being answered may use."""
        names = list(self.tools.names()) if self.tools is not None else []
        if context is not None and context.allowed_tools is not None:
            names = [name for name in names if name in context.allowed_tools]
        return names

    def availability(self) -> tuple[bool, str]:
        s = self.settings
        if hint := missing_sdk(s.name):
            return False, hint
        needs_key = s.name in ("anthropic", "gemini", "openrouter") or (
            s.name == "openai" and "api.openai.com" in s.base_url
        )
        if needs_key and not s.api_key:
            return False, f"no API key for {s.name} (set it in config.toml or the environment)"
        where = (
            f" at {redact_url(s.base_url)}" if s.base_url and s.name in OPENAI_COMPATIBLE else ""
        )
        return True, f"model {s.model}{where}"

    def http_client(self) -> Any:
        """The provider's one HTTP client: every model and call shares its pool of at most
        `max_connections` sockets (pydantic-ai's own default allows 1,000)."""
        if self._http is None:
            # Made without pydantic-ai for a lean request; pydantic-ai's own hook (a request's
            # timeout never lengthens the client's connect and pool timeouts) once it is loaded.
            self._http = lean_api.http_client(self.settings.max_connections)
        if sdk_loaded.is_set() and not self._http.event_hooks["request"]:
            from pydantic_ai._http import ConnectPoolTimeoutCap

            cap = ConnectPoolTimeoutCap(connect=lean_api.CONNECT_SECS, pool=lean_api.CLIENT_SECS)
            self._http.event_hooks = {**self._http.event_hooks, "request": [cap]}
        return self._http

    def bind_to_running_loop(self) -> None:
        """Keep the pool on the loop that first used it; on another loop start a fresh one."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop() is not loop:
            self._models.clear()
            self._http = None
        self._loop = weakref.ref(loop)

    def _model(self, model_name: str) -> Model:
        cached = self._models.get(model_name)
        if cached is None:
            with SDK_LOCK:  # a model's first use imports its SDK module
                load_sdk()
                s = self.settings
                endpoint = Endpoint(s.name, s.api_key, s.base_url, s.max_retries)
                cached = build_model(endpoint, model_name, self.http_client)
                self._models[model_name] = cached
        return cached

    async def _loaded_model(self, model_name: str) -> Model:
        """The model, its imports made off the event loop the first time (one thread at a time)."""
        cached = self._models.get(model_name)
        return cached if cached is not None else await asyncio.to_thread(self._model, model_name)

    async def prepare(self) -> None:
        if lean_api.serves(self):  # pydantic-ai is loaded by the first answer that needs it
            return

        def load() -> None:
            self._model(self.settings.model)
            if self.tools is not None:
                self.tools.toolset()  # tool schemas are built once, off the event loop

        await asyncio.to_thread(load)

    def _agent(self) -> Agent[ToolDeps, str]:
        if self._cached_agent is None:
            from pydantic_ai import Agent

            self._cached_agent = Agent(output_type=str, deps_type=ToolDeps, name="omega")
        return self._cached_agent

    def _instructions(self, context: Context) -> str | list[Any] | None:
        """The system prompt; for Anthropic its stable prefix and the turn's part as separate
        blocks, so the cache point falls after the prefix (others get the same text whole)."""
        prompt, prefix = context.system_prompt, context.stable_prefix
        if self.settings.name != "anthropic" or not prefix or not prompt.startswith(prefix):
            return prompt or None
        from pydantic_ai.messages import InstructionPart

        rest = prompt[len(prefix) :].lstrip("\n")
        return [prefix, InstructionPart(rest, dynamic=True)] if rest else [prefix]

    def offers_tools(self, context: Context) -> bool:
        """Whether this call may use a tool (then it needs the agent's tool loop)."""
        if not context.use_tools:
            return False
        if context.mcp_servers:
            return True
        if self.tools is None or not len(self.tools):
            return False
        return context.allowed_tools is None or bool(context.allowed_tools)

    async def complete(self, context: Context) -> Reply:
        lean = await lean_api.answer(self, context)  # the first request without pydantic-ai
        if isinstance(lean, Reply):
            return lean
        if not sdk_loaded.is_set():  # off the event loop, never beside `prepare`'s import
            await asyncio.to_thread(load_sdk)
        from pydantic_ai import RunContext
        from pydantic_ai.messages import ModelMessage, ModelResponse
        from pydantic_ai.settings import ModelSettings
        from pydantic_ai.toolsets import AbstractToolset, CombinedToolset
        from pydantic_ai.usage import RunUsage, UsageLimits

        from omega.sandbox.folders import UnsafeFolderError, confined_folder
        from omega.tools.mcp import default_sandbox, start_servers
        from omega.tools.wrappers import RecordingToolset

        self.bind_to_running_loop()
        model_name = context.model or self.settings.model
        model = await self._loaded_model(model_name)
        settings: ModelSettings = {
            "timeout": self.settings.timeout_secs,
            # pydantic-ai would prepend ~250 tokens explaining its <system> tags to every
            # request for some models; Omega's prompts use none, so that is pure cost.
            "framing_announcement": "never",
        }
        if context.max_tokens:
            settings["max_tokens"] = context.max_tokens
        # A per-request max_retries makes pydantic-ai copy the SDK client for every request
        # (and the copy looks up the platform on a worker thread): only when the client differs.
        if (
            getattr(getattr(model, "client", None), "max_retries", None)
            != self.settings.max_retries
        ):
            settings["max_retries"] = self.settings.max_retries
        if self.settings.name == "anthropic":
            # Cache points after the tool schemas and after the stable prefix of the prompt.
            settings["anthropic_cache_tool_definitions"] = True  # type: ignore[typeddict-unknown-key]
            settings["anthropic_cache_instructions"] = True  # type: ignore[typeddict-unknown-key]
        history, prompt = split_context(context)
        user_prompt: str | list[Any] | None = prompt
        if context.images and self.sees_images():
            from pydantic_ai.messages import BinaryContent

            user_prompt = [
                prompt or "",
                *(BinaryContent(data=i.data, media_type=i.mime_type) for i in context.images),
            ]
        if not self.offers_tools(context):
            if lean is not None:  # its answer, read by the model
                response = lean_api.adopt(self.name, model, lean)
                return reply_of(self.name, model_name, response, lean.started)
            instructions = self._instructions(context)
            return await request_once(
                self.name, model, model_name, history, settings, instructions, user_prompt
            )
        started = lean.started if lean is not None else time.perf_counter()
        deadline = self.settings.timeout_secs * TOOL_TIME_SHARE  # for one tool call
        # The run adds every request's usage to this one (as for a delegate agent's run), so
        # what was billed is known when the run fails too.
        spent = RunUsage()
        instructions = self._instructions(context)
        deps = ToolDeps(
            sender_id=context.sender_id,
            channel=context.channel,
            workspace=context.workspace,
            thread=context.thread,
            group=context.group,
        )
        with provider_errors(self.name):
            async with AsyncExitStack() as stack:
                # What the requests made so far were billed for, when the answer fails (a tool
                # loop that errs, a provider error after some requests, a timeout): recorded.
                stack.push(
                    lambda failed, *_: (
                        None
                        if failed is None
                        else salvage_usage(self.name, model_name, prices.run_usage(spent))
                    )
                )
                toolsets: list[AbstractToolset[Any]] = []
                if context.use_tools:
                    if self.tools is not None and len(self.tools):
                        own = self.tools.toolset()
                        allowed = context.allowed_tools
                        if allowed is not None:  # not the owner: only the tools they may use
                            own = own.filtered(lambda _ctx, tool: tool.name in allowed)
                        toolsets.append(own)
                    # A matching skill's MCP servers, watched, for this call only, in the
                    # person's own real folder (cwd, workspace; `people/x -> ..` is refused).
                    sandbox = self.sandbox or default_sandbox()
                    if context.workspace and context.mcp_servers:
                        folder = Path(context.workspace)
                        try:
                            folder = confined_folder(sandbox.workspace, folder)
                        except UnsafeFolderError as exc:
                            raise ProviderError(f"{self.name}: {exc}") from None
                        sandbox = sandbox.for_workspace(folder)
                    toolsets += await start_servers(stack, context.mcp_servers, sandbox, deadline)
                recorder = RecordingToolset(
                    CombinedToolset(toolsets),
                    max_rounds=MAX_TOOL_ROUNDS,
                    timeout_secs=deadline,
                    max_calls_per_round=self.settings.max_tool_calls_per_round,
                )
                # The tools that ran are recorded even when the answer then fails (times out).
                stack.push(lambda failed, *_: None if failed is None else _salvage(recorder))
                # The first request goes to the model directly, with the tools the agent would
                # offer; most answers need no tool, and then no agent run (issue 40).
                request, parameters = first_request(instructions, user_prompt)
                sent = [*history, request]
                offered = await recorder.definitions(
                    RunContext(
                        deps=deps,
                        model=model,
                        usage=spent,
                        prompt=user_prompt,
                        messages=sent,
                        run_step=1,
                    )
                )
                first: ModelResponse | None = None
                if lean is not None:  # sent already, with the same tools (lean_api)
                    first = lean_api.adopt(self.name, model, lean)
                elif offered is not None:
                    parameters = replace(parameters, function_tools=offered)
                    first = await send(self.name, model, sent, settings, parameters)
                if first is not None:
                    # The agent counts each response it commits so (the request limit and
                    # the recorder's rounds count this one too).
                    spent.requests += 1
                    spent.incr(first.usage)
                    text = final_text(first)
                    if text is not None:
                        return reply_of(self.name, model_name, first, started, text)
                # A response that asks for tools: the agent runs its calls and goes on from it.
                adopted = first if first is not None and first.tool_calls else None
                result = await self._agent().run(
                    None if adopted else user_prompt,
                    message_history=[*sent, adopted] if adopted else history or None,
                    instructions=instructions,
                    model=model,
                    deps=deps,
                    model_settings=settings,
                    # The hard stop (the first request counts). After MAX_TOOL_ROUNDS the
                    # recorder refuses further calls; two more requests give the model room
                    # to answer instead.
                    usage_limits=UsageLimits(request_limit=MAX_TOOL_ROUNDS + 2),
                    toolsets=[recorder] if toolsets else None,
                    infer_name=False,
                    usage=spent,
                )
        messages: list[ModelMessage] = [request, adopted] if adopted else []
        messages += result.new_messages()
        responses = [m for m in messages if isinstance(m, ModelResponse)]
        # A first answer with neither text nor a tool call is asked again by a whole run (the
        # agent would ask again too); it was billed all the same.
        billed = responses if adopted or first is None else [first, *responses]
        usage = result.usage
        return Reply(
            text=str(result.output).strip(),
            provider=self.name,
            model=(responses[-1].model_name if responses else "") or model_name,
            usage=Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost_usd=prices.total_cost(billed),
                cached_tokens=usage.cache_read_tokens,
            ),
            tool_calls=recorder.tool_calls(messages),
            elapsed_ms=int((time.perf_counter() - started) * 1000),
        )


def _salvage(recorder: RecordingToolset) -> None:
    """Hand the calls a failing answer ran to whoever asked (providers.base.salvaged)."""
    salvage_tool_calls(recorder.recorded())
