"""Concepts that, named together, name another, for similarity_words.py (issue 39): what a
word-by-word reading misses when a gap is said in other words. Each rule is one a speaker of
the domain would give, whatever the language, as the concepts are language-free:

- converting or recognizing speech, audio or a recording into text, and speech-to-text, is
  transcribing (speech, audio, a recording or a memo then all the one thing transcribed:
  "transcribe voice messages", "turn audio notes into text"); text into audio is not;
- buying a ticket (a flight, a train, a bus, a hotel) is booking it ("book flights", "buy plane
  tickets");
- scanning a QR code or a barcode is reading it;
- opening or extracting an archive (a zip, compressed files) is unpacking it, and what is
  unpacked is an archive, compressed, so neither is named beside it;
- making, taking or recording a picture is the camera's (`take photos`, `Fotos aufnehmen`,
  `scattare foto`, `use the camera`);
- a screen's picture or capture is a screenshot;
- food or groceries delivered are bought; money sent or moved, or translated (Russian
  `перевести деньги`), is a transfer, whose money, bank or account goes unsaid; a taxi called
  or ordered is booked;
- an audio message is a voice message; a weather forecast is the weather; a contact list is
  the contacts;
- creating an archive is compressing ("create zip archives", "compress files into a zip");
- drawing (pictures, when nothing else is named), or creating an image, is generating one
  ("generate images", "draw pictures"; "draw diagrams" is left as it is);
- translating money (Russian `перевести деньги`) is transferring it;
- scheduling, configuring or installing a reminder, an alarm, a timer or an event is setting
  (creating) it, and a reminder's notification is the reminder;
- text to a phone or as a message, with no other action than sending, or text sent and nothing
  else, is an SMS sent ("text a phone number", "messaggi di testo", "envoyer des textos").
"""

from __future__ import annotations

__all__ = ["combined"]

SPEECH = frozenset({"audio", "voice", "record", "note"})
TRAVEL = frozenset({"flight", "train", "bus", "hotel", "ticket"})
CODES = frozenset({"qr", "barcode"})
TIMED = frozenset({"reminder", "alarm", "timer", "event"})
MONEY = frozenset({"money", "bank", "account"})
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
    if "archive" in found and "read" in found:  # opening or extracting an archive
        found = found - {"read"} | {"unpack"}
    if "unpack" in found:  # what is unpacked is an archive, compressed
        found -= {"compress", "archive"}
    if "screen" in found and found & {"image", "screenshot"}:  # a picture of the screen
        found = found - {"screen", "image", "camera"} | {"screenshot"}
    if "image" in found and found & {"make", "record"}:  # taking a photo: the camera's
        found = found - {"make", "record"} | {"camera"}
    if found & {"food", "grocery"} and "package" in found:  # delivered: bought
        found = found - {"package"} | {"buy"}
    if "money" in found and found & {"send", "move"}:  # money sent: a transfer
        found = found - {"send", "move"} | {"transfer"}
    if "taxi" in found and found & {"call", "buy"}:  # a taxi called or ordered: booked
        found = found - {"call", "buy"} | {"book"}
    if "audio" in found and "message" in found:  # an audio message is a voice message
        found = found - {"audio"} | {"voice"}
    if "weather" in found:  # a forecast is the weather's
        found.discard("forecast")
    if "contact" in found:  # a contact list, an address book: the contacts
        found.discard("list")
    if "archive" in found and "create" in found:
        found = found - {"create"} | {"compress"}
    if "draw" in found and not found - actions - PLAIN:
        found.add("image")  # drawing, and no other thing named: drawing pictures
    if "image" in found and found & {"draw", "create"}:
        found = found - {"draw", "create"} | {"generate"}
    if found & TIMED and found & {"schedule", "configure", "install"}:
        found = found - {"schedule", "configure", "install"} | {"create"}
    if "translate" in found and found & MONEY:  # "перевести деньги": a transfer
        found = found - {"translate"} | {"transfer"}
    if "transfer" in found:
        found -= MONEY
    if "reminder" in found:
        found.discard("notification")
    texted = found & {"phone", "message"} and not found & (SPEECH | {"voice"})
    if "text" in found and texted and not (found & actions) - TEXTING:
        found = found - {"text", "phone", "number", "message"} | {"sms", "send"}
    if found == {"send", "text"}:  # "send a text", "envoyer des textos": an SMS
        found = {"send", "sms"}
    return frozenset(found)
