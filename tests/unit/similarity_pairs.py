"""A labelled set for `omega.evolution.meaning.similarity`: pairs of limitation titles, limitation
descriptions and proposal descriptions, each marked SAME (the same gap or idea in other words,
other languages included) or DIFFERENT (a related but different gap, or an unrelated one).

Written before the method was tuned, from the kinds of text Omega records: the planner's
`missing_capability`, a LIMITATION marker's title and description, the critic's
"Tool X keeps failing", the analysis' proposal descriptions. HELD_OUT was written after the
method was tuned on PAIRS and not tuned on until issue 39, which tuned on both: the figures of
text the method has not seen now come from the blind set in similarity_held_out.py, written by
someone else and never tuned on. Used by tests/unit/test_similarity.py (floors) and
bench/similarity.py (the figures).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Kind = Literal["paraphrase", "translation", "related", "unrelated"]


class Pair(NamedTuple):
    """Two texts and whether they say the same thing."""

    a: str
    b: str
    same: bool
    kind: Kind


def same(a: str, b: str, kind: Kind = "paraphrase") -> Pair:
    return Pair(a, b, True, kind)


def different(a: str, b: str, kind: Kind = "related") -> Pair:
    return Pair(a, b, False, kind)


PAIRS: tuple[Pair, ...] = (
    # ---- the same gap in other words (English) ---------------------------------------------
    same("Cannot send emails", "Unable to send an email on the owner's behalf"),
    same("No way to send e-mail", "Omega cannot send email messages"),
    same("Cannot read PDF files", "Reading PDF documents is not supported"),
    same("Cannot check the weather", "No access to weather forecasts"),
    same("Can't access the owner's calendar", "No calendar access: cannot read calendar events"),
    same("Cannot translate text between languages", "Translation of text is not possible yet"),
    same("Cannot transcribe voice messages", "Voice message transcription is missing"),
    same("Unable to browse web pages", "Cannot open and read a web page"),
    same("Cannot set reminders", "There is no way to create a reminder"),
    same("Cannot search the web", "Web search is not available"),
    same("Cannot generate images", "Image generation is not supported"),
    same("Cannot read Excel spreadsheets", "Opening .xlsx spreadsheet files fails"),
    same("Cannot download files from a URL", "Downloading a file from a link is not possible"),
    same("Cannot take screenshots", "Taking a screenshot of the screen is unsupported"),
    same("Cannot play music", "Music playback is not available"),
    same("Tool fetch_url keeps failing", "The fetch_url tool fails again and again"),
    same("Cannot compress files into a zip archive", "Creating zip archives is not supported"),
    same("Cannot summarize YouTube videos", "No way to summarize a YouTube video"),
    same("Cannot convert currencies", "Currency conversion is unavailable"),
    same("Cannot print documents", "Printing a document is not possible"),
    same(
        "A skill that sends an email through the owner's SMTP account",
        "Send email messages using the configured SMTP server",
    ),
    same(
        "Extract the text of a PDF file with pdftotext",
        "A tool that reads PDF files and returns their text",
    ),
    same(
        "Fetch the weather forecast for a city from a weather API",
        "Get the weather forecast of a given city",
    ),
    same(
        "Add events to the owner's calendar",
        "A skill that creates calendar events for the owner",
    ),
    same("Cannot read text from images (OCR)", "No OCR: extracting text from a photo fails"),
    same("Cannot track packages", "Package tracking for deliveries is not available"),
    # ---- the same gap in another language --------------------------------------------------
    same("Cannot send emails", "No puedo enviar correos electrónicos", "translation"),
    same("Cannot send emails", "Impossible d'envoyer des e-mails", "translation"),
    same("Cannot send emails", "Kann keine E-Mails senden", "translation"),
    same("Cannot read PDF files", "No puedo leer archivos PDF", "translation"),
    same("Cannot read PDF files", "Impossible de lire les fichiers PDF", "translation"),
    same("Cannot read PDF files", "Kann keine PDF-Dateien lesen", "translation"),
    same("Cannot check the weather", "No puedo consultar el tiempo", "translation"),
    same("Cannot check the weather", "Impossible de consulter la météo", "translation"),
    same("Cannot check the weather", "Kann das Wetter nicht abrufen", "translation"),
    same("Cannot access the calendar", "No tengo acceso al calendario", "translation"),
    same("Cannot access the calendar", "Pas d'accès au calendrier", "translation"),
    same("Cannot access the calendar", "Kein Zugriff auf den Kalender", "translation"),
    same("Cannot set reminders", "No puedo crear recordatorios", "translation"),
    same("Cannot set reminders", "Impossible de créer des rappels", "translation"),
    same("Cannot set reminders", "Kann keine Erinnerungen erstellen", "translation"),
    same("Cannot translate text", "No puedo traducir textos", "translation"),
    same("Cannot translate text", "Je ne peux pas traduire de texte", "translation"),
    same("Cannot translate text", "Kann keinen Text übersetzen", "translation"),
    same("Cannot search the web", "No puedo buscar en internet", "translation"),
    same("Cannot search the web", "Impossible de rechercher sur le web", "translation"),
    same("Cannot search the web", "Kann nicht im Internet suchen", "translation"),
    same("Cannot transcribe voice messages", "No puedo transcribir mensajes de voz", "translation"),
    same(
        "Cannot transcribe voice messages",
        "Impossible de transcrire les messages vocaux",
        "translation",
    ),
    same(
        "Cannot transcribe voice messages",
        "Kann Sprachnachrichten nicht transkribieren",
        "translation",
    ),
    same("Cannot download files", "No puedo descargar archivos", "translation"),
    same("Cannot download files", "Impossible de télécharger des fichiers", "translation"),
    same("Cannot download files", "Kann keine Dateien herunterladen", "translation"),
    same("Cannot generate images", "No puedo generar imágenes", "translation"),
    same("Cannot print documents", "Impossible d'imprimer des documents", "translation"),
    # ---- related but different gaps (a false merge here hides a gap) -----------------------
    different("Cannot send emails", "Cannot read emails"),
    different("Cannot send emails", "Cannot send SMS text messages"),
    different("Cannot send emails", "Cannot delete emails"),
    different("Cannot read PDF files", "Cannot create PDF files"),
    different("Cannot read PDF files", "Cannot read Word documents"),
    different("Cannot read PDF files", "Cannot sign PDF files"),
    different("Cannot check the weather", "Cannot check the news"),
    different("Cannot check the weather", "Cannot check stock prices"),
    different("Cannot access the calendar", "Cannot access the owner's contacts"),
    different("Cannot add calendar events", "Cannot delete calendar events"),
    different("Cannot set reminders", "Cannot set alarms on the phone"),
    different("Cannot translate text", "Cannot translate voice messages in real time"),
    different("Cannot transcribe voice messages", "Cannot reply with voice messages"),
    different("Cannot search the web", "Cannot search the owner's files"),
    different("Cannot download files", "Cannot upload files to cloud storage"),
    different("Cannot generate images", "Cannot edit images"),
    different("Cannot generate images", "Cannot generate videos"),
    different("Cannot play music", "Cannot play videos"),
    different("Cannot read Excel spreadsheets", "Cannot write Excel spreadsheets"),
    different("Tool fetch_url keeps failing", "Tool read_file keeps failing"),
    different("Tool run_shell keeps failing", "Tool write_file keeps failing"),
    different("Cannot compress files into a zip archive", "Cannot extract zip archives"),
    different("Cannot print documents", "Cannot scan documents"),
    different("Cannot take screenshots", "Cannot record the screen"),
    different(
        "A skill that sends an email through the owner's SMTP account",
        "A skill that reads the owner's inbox over IMAP",
    ),
    different(
        "Extract the text of a PDF file with pdftotext",
        "Merge several PDF files into one",
    ),
    different(
        "Fetch the weather forecast for a city from a weather API",
        "Fetch the air quality index for a city",
    ),
    different(
        "Add events to the owner's calendar",
        "Share the owner's calendar with another person",
    ),
    different("Cannot send emails", "No puedo leer correos electrónicos"),
    different("Cannot read PDF files", "Impossible de créer des fichiers PDF"),
    different("Cannot download files", "Kann keine Dateien hochladen"),
    different("Cannot check the weather", "No puedo consultar las noticias"),
    # ---- unrelated -------------------------------------------------------------------------
    different("Cannot send emails", "Cannot check the weather", "unrelated"),
    different("Cannot read PDF files", "Cannot play music", "unrelated"),
    different("Cannot access the calendar", "Cannot generate images", "unrelated"),
    different("Cannot translate text", "Cannot track packages", "unrelated"),
    different("Tool fetch_url keeps failing", "Cannot set reminders", "unrelated"),
    different("Cannot search the web", "Cannot print documents", "unrelated"),
    different("Cannot transcribe voice messages", "Cannot convert currencies", "unrelated"),
    different("Cannot take screenshots", "No puedo enviar correos electrónicos", "unrelated"),
    different("Cannot download files", "Impossible de consulter la météo", "unrelated"),
    different("Cannot set reminders", "Kann keine PDF-Dateien lesen", "unrelated"),
    different(
        "A skill that sends an email through the owner's SMTP account",
        "Fetch the weather forecast for a city from a weather API",
        "unrelated",
    ),
    different(
        "Extract the text of a PDF file with pdftotext",
        "Add events to the owner's calendar",
        "unrelated",
    ),
)

# Written after the method was tuned on PAIRS, and not tuned on (see the module docstring).
HELD_OUT: tuple[Pair, ...] = (
    same("Cannot order groceries online", "No way to place an online grocery order"),
    same("Cannot book a restaurant table", "Restaurant reservations are not possible"),
    same("Cannot control the smart lights", "Turning the smart home lights on or off fails"),
    same("Cannot read QR codes", "Scanning a QR code from a photo does not work"),
    same("Cannot look up train times", "No access to train timetables"),
    same("Cannot post to Mastodon", "Publishing a post on Mastodon is not supported"),
    same("Cannot read RSS feeds", "Reading an RSS feed is unavailable"),
    same("Tool run_shell keeps failing", "run_shell fails every time"),
    same("Cannot send WhatsApp messages", "No puedo enviar mensajes de WhatsApp", "translation"),
    same("Cannot read RSS feeds", "Impossible de lire les flux RSS", "translation"),
    same(
        "Cannot book a restaurant table",
        "Kann keinen Tisch im Restaurant reservieren",
        "translation",
    ),
    same("Cannot create invoices", "No puedo crear facturas", "translation"),
    same("Cannot create invoices", "Impossible de créer des factures", "translation"),
    same("Cannot export contacts", "Kann keine Kontakte exportieren", "translation"),
    different("Cannot order groceries online", "Cannot track grocery deliveries"),
    different("Cannot book a restaurant table", "Cannot read restaurant reviews"),
    different("Cannot control the smart lights", "Cannot control the thermostat"),
    different("Cannot read QR codes", "Cannot generate QR codes"),
    different("Cannot look up train times", "Cannot buy train tickets"),
    different("Cannot post to Mastodon", "Cannot read Mastodon notifications"),
    different("Cannot send WhatsApp messages", "Cannot send Telegram stickers"),
    different("Cannot create invoices", "Cannot pay invoices"),
    different("Cannot export contacts", "Cannot import contacts"),
    different("Tool run_shell keeps failing", "Tool fetch_url keeps failing"),
    different("Cannot read RSS feeds", "No puedo leer códigos QR"),
    different("Cannot create invoices", "Impossible de payer les factures"),
    different("Cannot order groceries online", "Cannot control the smart lights", "unrelated"),
    different("Cannot read QR codes", "Kann keinen Tisch im Restaurant reservieren", "unrelated"),
    different("Cannot post to Mastodon", "Cannot look up train times", "unrelated"),
    different("Cannot export contacts", "Impossible de lire les flux RSS", "unrelated"),
)
