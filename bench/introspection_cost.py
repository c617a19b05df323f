"""What one introspection cycle costs in tokens: the evaluation prompt for `introspect_interval`
(10) recorded tool calls plus a typical valid answer, counted with SmolLM2's tokenizer.

Run: .venv/bin/python bench/introspection_cost.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.prompt_tokens import token_counter  # noqa: E402
from omega.evolution.reflection.introspection import EVALUATION_PROMPT, timeline  # noqa: E402

ANSWER = {
    "learnings": ["Read the file before editing it", "Re-run the tests after each fix"],
    "repeated_pattern": True,
    "pattern_description": "read, fix, test, verify",
    "suggested_skill": {
        "operation": "create",
        "name": "test-fix-verify",
        "category": "other",
        "description": "A read-fix-test-verify loop for failing tests.",
        "trigger_phrases": ["fix and test"],
        "content": "1. Read the failing test\n2. Fix\n3. Run tests\n4. Verify",
    },
    "satisfaction": 0.8,
    "summary": "10 calls, 2 failures fixed by re-running tests",
}


def sample_calls(count: int = 10) -> list[dict[str, Any]]:
    """A realistic mix of file and shell calls, some failing."""
    rows = []
    for i in range(count):
        failing = i % 4 == 1
        rows.append(
            {
                "ok": 0 if failing else 1,
                "tool": ("read_file", "run_shell", "write_file")[i % 3],
                "arguments": json.dumps(
                    {"path": f"src/module_{i}.py"}
                    if i % 3 != 1
                    else {"command": "pytest -q tests/"}
                ),
                "result_preview": "x" * 120,
                "error": "FAILED: 3 tests failed",
            }
        )
    return rows


def main() -> None:
    count = token_counter()
    prompt = EVALUATION_PROMPT.format(timeline=timeline(sample_calls()))
    answer = json.dumps(ANSWER)
    tokens_in, tokens_out = count(prompt), count(answer)
    print(
        f"one introspection cycle (10 tool calls, first answer valid): "
        f"{tokens_in} prompt + {tokens_out} answer = {tokens_in + tokens_out} tokens; "
        f"each retry adds about {tokens_in + tokens_out + 40}"
    )


if __name__ == "__main__":
    main()
