"""Proposal text as the gate's content signals read it, with the usual disguises undone.

NFKC (full-width letters), zero-width and soft-hyphen characters removed, Cyrillic and Greek
look-alikes mapped to Latin letters, accents stripped (so "contraseña" reads "contrasena"),
"hooks[.]example[.]com" and "hooks dot example dot com" read as host names, and runs of
spaced-out letters ("l o g i n s . j s o n") joined. The joined reading is added beside the
original, never instead of it, so nothing the plain text says is lost.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\u2061\ufeff"))
# Cyrillic and Greek letters drawn like Latin ones (the confusables that matter for words).
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏкмнтвАЕОРСУХІЈЅКМНТВαεορικντυχΑΕΟΡΙΚΝΤΥΧΒΜΖ",
    "aeopcyxijsdhlkmhtbAEOPCYXIJSKMHTBaeopikvtuxAEOPIKNTYXBMZ",
)
_DOT = re.compile(r"\s*(\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\s+dot\s+)\s*", re.IGNORECASE)
_AT = re.compile(r"\s*(\[at\]|\(at\)|\[@\])\s*", re.IGNORECASE)
# Three or more single characters separated by single spaces: "k e y 4 . d b".
_SPACED = re.compile(r"(?<!\S)(?:\S[ \t]){2,}\S(?!\S)")


def fold(text: str) -> str:
    """One reading of `text`: compatibility-normalized, look-alikes and accents folded."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES)
    decomposed = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in decomposed if not unicodedata.combining(c))
    text = text.replace("ß", "ss")
    return _AT.sub("@", _DOT.sub(".", text))


def despaced(text: str) -> str:
    """The spaced-out runs of `text` joined ("s e n d" -> "send"); other text as it is."""
    return _SPACED.sub(lambda m: m.group(0).replace(" ", "").replace("\t", ""), text)


def readings(text: str) -> str:
    """What the content signals search: the folded text, plus its de-spaced form if it differs."""
    folded = fold(text)
    joined = despaced(folded)
    return folded if joined == folded else f"{folded}\n{joined}"
