"""Held-out evaluation set for deciding whether two gap texts describe the same gap.

Omega records limitations (things it cannot do yet) and proposals (skill ideas), and has to
decide whether two such short texts name the SAME gap (merge them) or DIFFERENT gaps (keep
both). ``BLIND`` is a fixed set of labelled pairs for measuring that decision.

It was written blind on 2026-11-29: its author did not read the similarity rules, their
tuning pairs, their tests or their benchmark, and labelled each pair by what a careful person
would say, not by what any method gets right. Keep it fixed: never edit, relabel, add or drop
a pair to suit the method. If the method disagrees with a pair, that is a measured error. A
pair found to be truly mislabelled may only be corrected in its own commit saying why, never
together with a change to the method.

Fields of each pair:

- ``same``: True when both texts describe one gap, False when they are different gaps.
- ``kind``: "paraphrase" (same gap, same language, other words, word order or number),
  "translation" (same gap written in another language), "related" (different gaps in one
  domain, one action on different objects, or near-spelled words with related meanings) or
  "unrelated" (different gaps with nothing in common but, at times, their spelling).
- ``lang``: the language of both texts ("en", "es", "fr", "de"), or "xx-yy" when ``a`` is in
  language xx and ``b`` in language yy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BlindPair:
    """Two gap texts and whether a careful person would merge them."""

    a: str
    b: str
    same: bool
    kind: str
    lang: str

    def __post_init__(self) -> None:
        if self.kind not in {"paraphrase", "translation", "related", "unrelated"}:
            raise ValueError(f"unknown kind {self.kind!r}")
        if self.same != (self.kind in {"paraphrase", "translation"}):
            raise ValueError(f"kind {self.kind!r} does not fit same={self.same}")
        if self.same and (self.kind == "translation") != ("-" in self.lang):
            raise ValueError(f"kind {self.kind!r} does not fit lang {self.lang!r}")


BLIND: tuple[BlindPair, ...] = (
    # ---- same gap, English paraphrases ----
    BlindPair(
        "No tool to read PDF attachments",
        "Cannot open PDF files that arrive attached to an e-mail",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot book a table at a restaurant",
        "No way to make restaurant reservations",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot check the weather forecast",
        "No access to weather forecasts",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot send SMS",
        "Unable to text a phone number",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "No access to the user's calendar",
        "Cannot read the events in the user's calendar",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot transcribe voice messages",
        "Audio notes can't be turned into text",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot generate images",
        "No image generation tool: unable to draw a picture when asked",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot turn the lights on or off",
        "No control over the smart light bulbs in the house",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot print documents",
        "No printer access, so documents can't be printed",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot run Python code",
        "No sandbox to execute Python scripts",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot book flights",
        "Unable to reserve plane tickets",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot get driving directions",
        "No route planning for trips by car",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot pay bills online",
        "Online bill payment is not supported",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot order groceries",
        "No way to buy food from a supermarket delivery service",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot summarize YouTube videos",
        "No tool to get what a YouTube video says so I can sum it up",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot set reminders",
        "Reminder creation is missing",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot track packages",
        "Unable to follow the delivery status of a parcel",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot convert currencies",
        "No exchange-rate conversion between currencies",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot browse websites",
        "No web browsing: cannot open a URL and read the page",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "No access to the step count from the user's fitness tracker",
        "Cannot read fitness tracker data such as daily steps",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot resize a photo",
        "Resizing photos is not supported",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot attach files to outgoing e-mails",
        "Sending e-mail attachments isn't possible",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot make phone calls",
        "No ability to place a voice call",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "No text-to-speech: cannot answer with audio",
        "Unable to send replies as voice messages",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot see images the user sends",
        "No vision: photos sent in the chat can't be described",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    BlindPair(
        "Cannot access the user's location",
        "Does not know where the user is (no GPS)",
        same=True,
        kind="paraphrase",
        lang="en",
    ),
    # ---- same gap, Spanish, French and German paraphrases ----
    BlindPair(
        "No puedo enviar SMS",
        "No tengo forma de mandar mensajes de texto",
        same=True,
        kind="paraphrase",
        lang="es",
    ),
    BlindPair(
        "No puedo reservar hoteles",
        "Falta una herramienta para hacer reservas de alojamiento",
        same=True,
        kind="paraphrase",
        lang="es",
    ),
    BlindPair(
        "No puedo leer archivos PDF",
        "Los documentos en PDF no se pueden abrir",
        same=True,
        kind="paraphrase",
        lang="es",
    ),
    BlindPair(
        "Impossible de consulter la météo",
        "Pas d'accès aux prévisions météorologiques",
        same=True,
        kind="paraphrase",
        lang="fr",
    ),
    BlindPair(
        "Je ne peux pas imprimer de documents",
        "Aucun accès à l'imprimante pour sortir un document sur papier",
        same=True,
        kind="paraphrase",
        lang="fr",
    ),
    BlindPair(
        "Impossible de réserver un train",
        "Pas d'outil pour acheter des billets de train",
        same=True,
        kind="paraphrase",
        lang="fr",
    ),
    BlindPair(
        "Kein Zugriff auf den Kalender",
        "Ich kann die Termine im Kalender nicht lesen",
        same=True,
        kind="paraphrase",
        lang="de",
    ),
    BlindPair(
        "Kann keine Sprachnachrichten transkribieren",
        "Audioaufnahmen lassen sich nicht in Text umwandeln",
        same=True,
        kind="paraphrase",
        lang="de",
    ),
    BlindPair(
        "Kann die Heizung nicht steuern",
        "Keine Steuerung des Thermostats möglich",
        same=True,
        kind="paraphrase",
        lang="de",
    ),
    # ---- same gap, across languages ----
    BlindPair(
        "Cannot send SMS",
        "No puedo enviar SMS",
        same=True,
        kind="translation",
        lang="en-es",
    ),
    BlindPair(
        "Cannot book a table at a restaurant",
        "No puedo reservar mesa en un restaurante",
        same=True,
        kind="translation",
        lang="en-es",
    ),
    BlindPair(
        "Cannot control smart plugs",
        "No puedo encender ni apagar los enchufes inteligentes",
        same=True,
        kind="translation",
        lang="en-es",
    ),
    BlindPair(
        "Cannot check the weather forecast",
        "Impossible de consulter les prévisions météo",
        same=True,
        kind="translation",
        lang="en-fr",
    ),
    BlindPair(
        "Cannot translate documents",
        "Impossible de traduire des documents",
        same=True,
        kind="translation",
        lang="en-fr",
    ),
    BlindPair(
        "Cannot order groceries online",
        "Je ne peux pas commander de courses en ligne",
        same=True,
        kind="translation",
        lang="en-fr",
    ),
    BlindPair(
        "No access to the calendar",
        "Kein Zugriff auf den Kalender",
        same=True,
        kind="translation",
        lang="en-de",
    ),
    BlindPair(
        "Cannot generate images",
        "Kann keine Bilder erzeugen",
        same=True,
        kind="translation",
        lang="en-de",
    ),
    BlindPair(
        "Cannot transcribe audio recordings",
        "Kann keine Audiodateien transkribieren",
        same=True,
        kind="translation",
        lang="en-de",
    ),
    BlindPair(
        "No puedo pagar facturas",
        "Impossible de payer les factures",
        same=True,
        kind="translation",
        lang="es-fr",
    ),
    BlindPair(
        "Kann keine Flüge buchen",
        "No puedo reservar vuelos",
        same=True,
        kind="translation",
        lang="de-es",
    ),
    BlindPair(
        "Impossible de lire les pièces jointes PDF",
        "Kann keine PDF-Anhänge lesen",
        same=True,
        kind="translation",
        lang="fr-de",
    ),
    # ---- different gaps, English, same domain or same action ----
    BlindPair(
        "Cannot send e-mails",
        "Cannot read e-mails",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot delete files",
        "Cannot share files",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot generate images",
        "Cannot generate videos",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot transcribe voice messages",
        "Cannot translate voice messages",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot stream music",
        "Cannot store music files",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot book flights",
        "Cannot cancel flight bookings",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot send SMS",
        "Cannot receive SMS",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "No tool to read PDF attachments",
        "No tool to create PDF files",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot turn on the lights",
        "Cannot lock the front door",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot pay bills",
        "Cannot check the bank account balance",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot get driving directions",
        "Cannot find restaurants nearby",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot run Python code",
        "Cannot run JavaScript code",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot print documents",
        "Cannot scan documents",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot make phone calls",
        "Cannot make video calls",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot book hotels",
        "Cannot book rental cars",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot upload files to Google Drive",
        "Cannot download files from Google Drive",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot read the user's heart rate",
        "Cannot read the user's sleep data",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot buy items on Amazon",
        "Cannot return items bought on Amazon",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot translate web pages",
        "Cannot translate spoken conversations in real time",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot search the web",
        "Cannot search the user's mailbox",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot convert currencies",
        "Cannot convert units of measurement",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot recognize faces in photos",
        "Cannot recognize text in photos (OCR)",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot record audio",
        "Cannot play audio",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot invite people to a meeting",
        "Cannot cancel a meeting",
        same=False,
        kind="related",
        lang="en",
    ),
    BlindPair(
        "Cannot forward e-mails",
        "Cannot archive e-mails",
        same=False,
        kind="related",
        lang="en",
    ),
    # ---- different gaps, Spanish, French and German ----
    BlindPair(
        "No puedo enviar correos electrónicos",
        "No puedo leer correos electrónicos",
        same=False,
        kind="related",
        lang="es",
    ),
    BlindPair(
        "No puedo reservar vuelos",
        "No puedo reservar mesa en restaurantes",
        same=False,
        kind="related",
        lang="es",
    ),
    BlindPair(
        "No puedo grabar vídeos",
        "No puedo editar vídeos",
        same=False,
        kind="related",
        lang="es",
    ),
    BlindPair(
        "Impossible d'envoyer des SMS",
        "Impossible d'envoyer des e-mails",
        same=False,
        kind="related",
        lang="fr",
    ),
    BlindPair(
        "Je ne peux pas allumer les lumières",
        "Je ne peux pas allumer le chauffage",
        same=False,
        kind="related",
        lang="fr",
    ),
    BlindPair(
        "Impossible de traduire des documents",
        "Impossible de transcrire des enregistrements",
        same=False,
        kind="related",
        lang="fr",
    ),
    BlindPair(
        "Kann keine Dateien löschen",
        "Kann keine Dateien teilen",
        same=False,
        kind="related",
        lang="de",
    ),
    BlindPair(
        "Kann keine Bilder erzeugen",
        "Kann keine Videos erzeugen",
        same=False,
        kind="related",
        lang="de",
    ),
    BlindPair(
        "No puedo transcribir audios",
        "No puedo traducir audios",
        same=False,
        kind="related",
        lang="es",
    ),
    BlindPair(
        "Impossible de supprimer des fichiers",
        "Impossible de compresser des fichiers",
        same=False,
        kind="related",
        lang="fr",
    ),
    # ---- different gaps across languages ----
    BlindPair(
        "Cannot send e-mails",
        "No puedo leer correos electrónicos",
        same=False,
        kind="related",
        lang="en-es",
    ),
    BlindPair(
        "Cannot generate images",
        "Kann keine Videos erzeugen",
        same=False,
        kind="related",
        lang="en-de",
    ),
    BlindPair(
        "Cannot book hotels",
        "Impossible de réserver un vol",
        same=False,
        kind="related",
        lang="en-fr",
    ),
    BlindPair(
        "No puedo pagar con tarjeta",
        "Kann keine Überweisungen machen",
        same=False,
        kind="related",
        lang="es-de",
    ),
    BlindPair(
        "Impossible d'imprimer des documents",
        "No puedo escanear documentos",
        same=False,
        kind="related",
        lang="fr-es",
    ),
    # ---- different gaps, nothing in common (some only in spelling) ----
    BlindPair(
        "Kann keine Fotos bearbeiten",
        "Kann keine Fotokopien machen",
        same=False,
        kind="unrelated",
        lang="de",
    ),
    BlindPair(
        "Cannot edit photos",
        "Cannot make photocopies",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot open the calendar",
        "Cannot open the calculator",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot teleport",
        "Cannot use telepathy",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot check the weather forecast",
        "Cannot send e-mail attachments",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot order pizza",
        "Cannot run shell commands",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot play music on Spotify",
        "Cannot file tax returns",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot buy concert tickets",
        "Cannot debug a Rust program",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "Cannot stream live TV",
        "Cannot water the garden plants",
        same=False,
        kind="unrelated",
        lang="en",
    ),
    BlindPair(
        "No puedo enviar SMS",
        "No puedo ver la previsión del tiempo",
        same=False,
        kind="unrelated",
        lang="es",
    ),
    BlindPair(
        "Impossible de lire les PDF",
        "Impossible de régler le thermostat",
        same=False,
        kind="unrelated",
        lang="fr",
    ),
    BlindPair(
        "Kann keine Flüge buchen",
        "Kann keine Sprachnachrichten abspielen",
        same=False,
        kind="unrelated",
        lang="de",
    ),
    BlindPair(
        "Kein Zugriff auf den Kalender",
        "Kein Zugriff auf den Taschenrechner",
        same=False,
        kind="unrelated",
        lang="de",
    ),
    BlindPair(
        "Cannot print documents",
        "Kein Zugriff auf den Kalender",
        same=False,
        kind="unrelated",
        lang="en-de",
    ),
    BlindPair(
        "Cannot read the user's step count",
        "No puedo reservar mesa en un restaurante",
        same=False,
        kind="unrelated",
        lang="en-es",
    ),
    BlindPair(
        "Cannot track packages",
        "Impossible de prendre rendez-vous chez le médecin",
        same=False,
        kind="unrelated",
        lang="en-fr",
    ),
    BlindPair(
        "Kann keine Pakete verfolgen",
        "Kann keine Rezepte vorschlagen",
        same=False,
        kind="unrelated",
        lang="de",
    ),
    BlindPair(
        "No puedo comprar entradas de cine",
        "No puedo ejecutar código",
        same=False,
        kind="unrelated",
        lang="es",
    ),
)
