"""Concepts that, named together, name another, for similarity_words.py (issue 39): what a
word-by-word reading misses when a gap is said in other words. Each rule is one a speaker of
the domain would give, whatever the language, as the concepts are language-free:

- converting or recognizing speech, audio or a recording into text, and speech-to-text, is
  transcribing (speech, audio, a recording or a memo then all the one thing transcribed:
  "transcribe voice messages", "turn audio notes into text"); text into audio is not;
- buying a ticket (a flight, a train, a bus, a hotel) is booking it ("book flights", "buy plane
  tickets");
- scanning a QR code or a barcode is reading it;
- creating an archive is compressing ("create zip archives", "compress files into a zip");
- drawing (pictures, when nothing else is named), or creating an image, is generating one
  ("generate images", "draw pictures"; "draw diagrams" is left as it is);
- scheduling or configuring a reminder, an alarm, a timer or an event is setting (creating)
  it, and a reminder's notification is the reminder;
- text to a phone or as a message, with no other action than sending, is an SMS sent ("text a
  phone number", "messaggi di testo").
"""

from __future__ import annotations

__all__ = ["combined"]

SPEECH = frozenset({"audio", "voice", "record", "note"})
TRAVEL = frozenset({"flight", "train", "bus", "hotel", "ticket"})
CODES = frozenset({"qr", "barcode"})
TIMED = frozenset({"reminder", "alarm", "timer", "event"})
# Concepts that name no thing drawn ("draw from a description", "from a text").
PLAIN = frozenset({"get", "make", "describe", "text"})
# Actions a text may name beside texting someone ("send a text message to a phone").
TEXTING = frozenset({"send"})


def _transcribing(ordered: list[str]) -> bool:
    """Speech into text: a conversion or recognition, and some speech named before the text."""
    found = set(ordered)
    if "stt" in found:
        return True
    if "text" not in found or not found & {"convert", "recognize"}:
        return False
    first_text = ordered.index("text")
    return any(c in SPEECH for c in ordered[:first_text])


def combined(ordered: list[str], actions: frozenset[str]) -> frozenset[str]:
    """The concepts of a text (`ordered` as its words name them) with the rules of this
    module's docstring applied; `actions` are the lexicon's action concepts."""
    found = set(ordered)
    if _transcribing(ordered):
        if "stt" in found:
            found.add("voice")  # speech-to-text: the speech is what is transcribed
        found -= {"convert", "recognize", "text", "stt"}
        found.add("transcribe")
    if "transcribe" in found and found & SPEECH:
        found = found - SPEECH | {"voice"}
    if "buy" in found and found & TRAVEL:
        found = found - {"buy"} | {"book"}
    if "scan" in found and found & CODES:
        found = found - {"scan"} | {"read"}
    if "archive" in found and "create" in found:
        found = found - {"create"} | {"compress"}
    if "draw" in found and not found - actions - PLAIN:
        found.add("image")  # drawing, and no other thing named: drawing pictures
    if "image" in found and found & {"draw", "create"}:
        found = found - {"draw", "create"} | {"generate"}
    if found & TIMED and found & {"schedule", "configure"}:
        found = found - {"schedule", "configure"} | {"create"}
    if "reminder" in found:
        found.discard("notification")
    texted = found & {"phone", "message"} and not found & (SPEECH | {"voice"})
    if "text" in found and texted and not (found & actions) - TEXTING:
        found = found - {"text", "phone", "number", "message"} | {"sms", "send"}
    return frozenset(found)
