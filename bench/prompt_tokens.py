"""Prompt size of the classification call and of a direct reply to "hi", as sent on the wire.

Counts characters and tokens (SmolLM2's tokenizer from the bundled GGUF, vocabulary only; GPT-
style tokenizers land within ~10%). Run: .venv/bin/python bench/prompt_tokens.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI, RecordedRequest  # noqa: E402

OMEGA = str(Path(sys.executable).with_name("omega"))


def wire_text(request: RecordedRequest) -> str:
    """What the model reads: every message's content plus the tool schemas."""
    parts: list[Any] = [m.get("content", "") for m in request.messages]
    parts += [json.dumps(tool) for tool in request.body.get("tools", [])]
    return "\n".join(str(p) for p in parts)


def token_counter() -> Any:
    """A tokenizer from the bundled model's vocabulary (no weights loaded)."""
    from llama_cpp import Llama

    from omega.providers.local import bundled_model_path

    llama = Llama(model_path=str(bundled_model_path()), vocab_only=True, verbose=False)
    return lambda text: len(llama.tokenize(text.encode("utf-8"), add_bos=False))


def main() -> None:
    count = token_counter()
    with tempfile.TemporaryDirectory() as home, FakeOpenAI() as server:
        env = dict(
            os.environ,
            OMEGA_HOME=home,
            OMEGA_ALLOW_ROOT="1",
            OMEGA_PROVIDER__DEFAULT="openai",
            OMEGA_PROVIDER__OPENAI__API_KEY="bench",
            OMEGA_PROVIDER__OPENAI__BASE_URL=server.base_url,
        )
        subprocess.run(
            [OMEGA, "chat", "--jsonl"],
            input='{"text": "hi"}\n',
            text=True,
            env=env,
            capture_output=True,
            check=True,
        )
        for label, request in (
            ("classification call", server.planner_requests[0]),
            ('direct reply to "hi"', server.requests[0]),
        ):
            text = wire_text(request)
            tools = len(request.body.get("tools", []))
            print(f"{label:<24} {count(text):>6} tokens  {len(text):>6} chars  {tools} tools")


if __name__ == "__main__":
    main()
