"""The share of messages answered with one provider call (no planning call) on a multilingual
sample of everyday chat: greetings, thanks and plain questions in the eight welcome languages,
beside requests that must still be planned. Figures per language and overall, and the time one
`obviously_direct` check takes.

Run: .venv/bin/python bench/one_call_share.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from omega.gateway.routing import obviously_direct  # noqa: E402

# (language, text, whether one call is right: small talk or a plain question)
SAMPLE: tuple[tuple[str, str, bool], ...] = (
    ("en", "hi", True),
    ("en", "good morning!", True),
    ("en", "thanks, that helped", True),
    ("en", "what is the capital of Peru?", True),
    ("en", "search flights to Lima and compare prices", False),
    ("es", "hola", True),
    ("es", "buenas noches", True),
    ("es", "¿qué es un agujero negro?", True),
    ("es", "busca vuelos a Lima y compara precios", False),
    ("pt", "olá", True),
    ("pt", "bom dia, tudo bem?", True),
    ("pt", "muito obrigado", True),
    ("pt", "o que é um buraco negro?", True),
    ("pt", "procura voos para Lima e compara preços", False),
    ("fr", "bonjour", True),
    ("fr", "salut, ça va ?", True),
    ("fr", "merci beaucoup", True),
    ("fr", "qu'est-ce qu'un trou noir ?", True),
    ("fr", "cherche des vols pour Lima et compare les prix", False),
    ("de", "hallo", True),
    ("de", "guten Morgen", True),
    ("de", "vielen Dank", True),
    ("de", "was ist ein schwarzes Loch?", True),
    ("de", "suche Flüge nach Lima und vergleiche die Preise", False),
    ("it", "ciao", True),
    ("it", "buonasera", True),
    ("it", "grazie mille", True),
    ("it", "che cos'è un buco nero?", True),
    ("it", "cerca voli per Lima e confronta i prezzi", False),
    ("nl", "hoi", True),
    ("nl", "goedemorgen", True),
    ("nl", "dank je wel", True),
    ("nl", "wat is een zwart gat?", True),
    ("nl", "zoek vluchten naar Lima en vergelijk de prijzen", False),
    ("ru", "привет", True),
    ("ru", "добрый вечер", True),
    ("ru", "спасибо большое", True),
    ("ru", "что такое чёрная дыра?", True),
    ("ru", "найди билеты в Лиму и сравни цены", False),
)


def commit() -> str:
    """The commit these figures are of."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main() -> None:
    """Print the one-call share per language and overall, and wrong routings."""
    print(f"commit {commit()}")
    languages = sorted({lang for lang, _, _ in SAMPLE})
    wrong = []
    for lang in languages:
        rows = [(text, one) for code, text, one in SAMPLE if code == lang]
        direct = [obviously_direct(text) for text, _ in rows]
        share = sum(direct) / len(rows)
        chat = [d for d, (_, one) in zip(direct, rows, strict=True) if one]
        print(f"  {lang}: one call for {share:.0%} of {len(rows)}, {sum(chat)}/{len(chat)} chat")
        wrong += [t for d, (t, one) in zip(direct, rows, strict=True) if d != one]
    chat_total = [obviously_direct(t) for _, t, one in SAMPLE if one]
    print(f"one-call share of everyday chat: {sum(chat_total) / len(chat_total):.0%}")
    print(f"misrouted: {wrong or 'none'}")
    started = time.perf_counter()
    for _ in range(200):
        for _, text, _ in SAMPLE:
            obviously_direct(text)
    per = (time.perf_counter() - started) / (200 * len(SAMPLE)) * 1e6
    print(f"obviously_direct: {per:.1f} us a message")


if __name__ == "__main__":
    main()
