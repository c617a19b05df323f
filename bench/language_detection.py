"""Language detection of short chat messages: the stop-word heuristic, py3langid restricted to
Omega's welcome languages, and their combinations; accuracy per language and microseconds per
call on tests/unit/language_sample.py (and on its held-out part, not used to tune anything).

Run: PYTHONPATH=src .venv/bin/python bench/language_detection.py [-v: list the misses]
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.unit.language_sample import HELD_OUT, SAMPLE  # noqa: E402

from omega.gateway import language  # noqa: E402
from omega.prompts import LANGUAGES  # noqa: E402

Method = Callable[[str], str]
ENGLISH = "English"
# The heuristic as it was before py3langid (issue 41), from git; None outside a checkout.
BEFORE_COMMIT = "d152817"


def _before() -> Method | None:
    try:
        source = subprocess.run(
            ["git", "show", f"{BEFORE_COMMIT}:src/omega/gateway/language.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    spec = importlib.util.spec_from_loader("language_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "language_before.py", "exec"), module.__dict__)
    detect: Method = module.detect_language
    return detect


def heuristic_alone(text: str) -> str:
    """The heuristic on the prose; English when it is unsure."""
    prose = language.prose_of(text)
    words = language._WORD_RE.findall(prose)
    if 2 * len(language._CYRILLIC_RE.findall(prose)) > sum(len(word) for word in words):
        return "Russian"
    return language.heuristic(words, prose) or ENGLISH


def langid_alone(minimum: float) -> Method:
    """py3langid on the prose, English below `minimum`."""

    def detect(text: str) -> str:
        prose = language.prose_of(text)
        if not prose.strip():
            return ENGLISH
        name, probability = language.identify(prose)
        return name if probability >= minimum else ENGLISH

    return detect


def langid_first(minimum: float) -> Method:
    """py3langid when at least `minimum` sure, else the heuristic."""

    def detect(text: str) -> str:
        prose = language.prose_of(text)
        if not prose.strip():
            return ENGLISH
        name, probability = language.identify(prose)
        return name if probability >= minimum else heuristic_alone(text)

    return detect


def short_heuristic(minimum: float) -> Method:
    """The heuristic for one or two words (greetings), py3langid (>= `minimum`) otherwise."""

    def detect(text: str) -> str:
        prose = language.prose_of(text)
        if len(language._WORD_RE.findall(prose)) <= 2:
            return heuristic_alone(text)
        name, probability = language.identify(prose)
        return name if probability >= minimum else ENGLISH

    return detect


def shipped(minimum: float, also_english: bool = False) -> Method:
    """detect_language with py3langid's threshold at `minimum`; `also_english`: py3langid is
    asked when the heuristic finds English too, not only when it is unsure."""

    def detect(text: str) -> str:
        language.MIN_CONFIDENCE = minimum
        if not also_english:
            return language.detect_language(text)
        prose = language.prose_of(text)
        guess = heuristic_alone(text)
        if guess != ENGLISH or not prose.strip():
            return guess
        name, probability = language.identify(prose)
        return name if probability >= minimum else ENGLISH

    return detect


def measure(
    method: Method, sample: dict[str, tuple[str, ...]]
) -> tuple[dict[str, float], float, list[str]]:
    """Accuracy per language, overall, and the misses."""
    per: dict[str, float] = {}
    misses: list[str] = []
    for lang, messages in sample.items():
        got = [method(text) for text in messages]
        per[lang] = sum(g == lang for g in got) / len(messages)
        misses += [f"{lang}: {t!r} -> {g}" for t, g in zip(messages, got, strict=True) if g != lang]
    total = sum(len(m) for m in sample.values())
    return per, sum(per[k] * len(sample[k]) for k in sample) / total, misses


def micros(method: Method) -> float:
    """Microseconds per call over the whole sample, the best of seven rounds."""
    texts = [t for messages in SAMPLE.values() for t in messages]
    best = float("inf")
    for _ in range(7):
        started = time.perf_counter()
        for text in texts:
            method(text)
        best = min(best, time.perf_counter() - started)
    return best / len(texts) * 1e6


def main() -> None:
    """Print one row per method: accuracy per language on the sample, overall, on the held-out
    messages, and the cost of a call."""
    assert set(SAMPLE) == set(LANGUAGES) == set(HELD_OUT)
    started = time.perf_counter()
    language.identify("warm up")
    elapsed = (time.perf_counter() - started) * 1000
    print(f"py3langid import + model load + restriction: {elapsed:.0f} ms")
    methods: dict[str, Method] = {}
    if (before := _before()) is not None:
        methods["stop-word heuristic (before)"] = before
    methods["heuristic on the prose (new vocabulary)"] = heuristic_alone
    for minimum in (0.0, 0.5, 0.8, 0.9):
        methods[f"py3langid alone, English below {minimum}"] = langid_alone(minimum)
    for minimum in (0.5, 0.8, 0.99):
        methods[f"py3langid >= {minimum}, else heuristic"] = langid_first(minimum)
    for minimum in (0.0, 0.8):
        methods[f"heuristic for <= 2 words, else py3langid >= {minimum}"] = short_heuristic(minimum)
    for minimum in (0.0, 0.5, 0.8, 0.9):
        methods[f"heuristic, py3langid >= {minimum} for the rest"] = shipped(minimum, True)
    for minimum in (0.0, 0.5, 0.7, 0.8, 0.9):
        methods[f"heuristic, py3langid >= {minimum} when unsure"] = shipped(minimum)
    default = language.MIN_CONFIDENCE
    codes = [language.CODES[name] for name in SAMPLE]
    print("| method | " + " | ".join(codes) + " | all | held out | wrong non-English | µs/call |")
    print("|---|" + "---:|" * (len(codes) + 4))
    for label, method in methods.items():
        per, overall, misses = measure(method, SAMPLE)
        _, held, held_misses = measure(method, HELD_OUT)
        cells = " | ".join(f"{per[name]:.0%}" for name in SAMPLE)
        # The costly mistake: a language that is not the person's, and not the English default.
        costly = sum(not miss.endswith(f"-> {ENGLISH}") for miss in misses + held_misses)
        row = f"{overall:.1%} | {held:.1%} | {costly} | {micros(method):.0f}"
        print(f"| {label} | {cells} | {row} |")
        if "-v" in sys.argv:
            print("\n".join("    " + miss for miss in misses + held_misses))
        language.MIN_CONFIDENCE = default


if __name__ == "__main__":
    main()
