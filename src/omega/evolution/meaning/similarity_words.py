"""A short text as the concepts it names, for similarity.py: folded, split into
words, stop words dropped, each word mapped to a concept of the lexicon (similarity_actions.py,
similarity_things.py) or, when the lexicon does not know it, to its Snowball stem in the text's
language (`snowballstemmer`, pure Python, loaded on first use).

The language is told by the stop words the text uses (`puedo` -> Spanish, `keine` -> German):
the languages with the most are the text's, tried in that order; a text with none ("Restaurant
reservations") is tried in all four. A word is looked up as it is, then as its stem in each of the
text's languages, then by the longest known stem it starts with; a German compound is split
into two known parts first when they explain more of it (`Sprachnachrichten` -> voice, message).
An unknown word keeps its whole stem, spelled the same across languages (ph -> f, th -> t,
k -> c, y -> i, doubled letters once), so `telepathy` is not `teleport` and `Thermostat`,
`thermostat` and `termostato` are one word.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from omega.evolution.meaning.similarity_actions import ACTIONS, GENERIC_ACTIONS
from omega.evolution.meaning.similarity_things import BRANDS, THINGS

LANGUAGES = ("english", "spanish", "french", "german")
COMPOUND_MIN = 3  # letters of the shorter part of a German compound

STOP: dict[str, frozenset[str]] = {
    language: frozenset(words.split())
    for language, words in {
        "english": """a an the to of in on at for from with by and or but as into over via is
        are was were be been being it its this that these those there their them they he she his
        her we our you your i me my mine not no nor cannot cant can could t s don doesn didn isn
        aren won wasn unable able way any some all each per own yet still also only just again
        anymore new given such possible impossible supported unsupported available unavailable
        missing lack lacks lacking support supports fail fails failed failing failure keeps keep
        kept repeatedly time times tool tools skill skills capability capabilities omega owner
        owners behalf person user users has have had having does do did done doing here which
        what when how who whose through using use used uses work works working worked properly
        correctly feature features function functionality option ability allow allows allowed
        let lets want wants need needs needed please help would should will every always never
        error errors something anything nothing now currently up down out off about more other
        another than then so very too much many instead yet either neither people someone
        anyone somebody anybody nearby near nearest problem problems incoming""",
        "spanish": """el la los las un una unos unas de del al a en con por para sin y o u e que
        no puedo puede pueden podemos poder pude es son esta estan estoy ser mi mis tu tus su sus
        se lo le les nos me te tengo tiene tienen hay este esta estos estas ese esa eso como
        cuando donde cual muy mas ya todavia aun tambien solo siempre nunca otra otro otros todo
        todos toda todas nada algo herramienta herramientas funciona funcionar falla fallo fallan
        error errores posible imposible disponible soportado compatible manera forma ninguna
        ningun ni desde hasta sobre entre capaz nuevo nueva nuevos nuevas vez veces usar nadie
        alguien gente cerca cercano cercana problema problemas""",
        "french": """le la les un une des du de d l au aux en et ou pas ne n je j peux peut
        peuvent pouvoir pu est sont suis etre mon ma mes ton ta tes son sa ses notre nos votre
        vos leur leurs ce cet cette ces qu que qui il elle ils elles on nous vous me te se s y sur
        pour par avec sans dans plus impossible possible outil outils fonctionne fonctionner
        marche echoue echec erreur erreurs toujours jamais disponible nouveau
        nouvelle nouveaux nouvel autre autres tout tous toute toutes rien fois moyen aucun aucune
        encore deja aussi seulement c ca utiliser personne quelqu gens proche pres probleme
        problemes""",
        "german": """der die das den dem des ein eine einen einem einer eines und oder nicht
        kein keine keinen keinem keiner ich kann kannst konnen koennen konnte ist sind bin war im
        am zum zur mit fur fuer von vom auf aus bei nach zu als wie mein meine meinen meinem
        meiner dein sein seine ihr ihre unser es er sie wir du man sich werkzeug werkzeuge
        funktioniert funktionieren geht moglich moeglich unmoglich unterstutzt verfugbar
        verfuegbar fehler fehlgeschlagen schlagt schlaegt fehl immer wieder nie neue neuen neu
        noch schon auch nur mehr andere anderen alle jede jeden etwas nichts mal leider dass uber
        ueber durch um bis gibt habe hat haben wird werden nutzen niemanden niemand
        jemanden jemand leute nahe nahegelegen nachste naechste problem
        probleme""",
    }.items()
}
STOP_WORDS = frozenset().union(*STOP.values())
# Words that name one thing together, joined before the text is split (folded, as one line).
PHRASES = {
    "e mail": "email",
    "e mails": "email",
    "text message": "textmessage",
    "text messages": "textmessage",
    "mensaje de texto": "textmessage",
    "mensajes de texto": "textmessage",
    "message texte": "textmessage",
    "messages texte": "textmessage",
    "log out": "logout",
    "log off": "logout",
    "sign out": "logout",
    "sign in": "signin",
    "log in": "login",
    "log into": "login",
    "back up": "backup",
    "set up": "setup",
    "look up": "lookup",
    "backing up": "backup",
    "backed up": "backup",
    "backs up": "backup",
    "to do": "todolist",
    "to dos": "todolist",
    "to do list": "todolist",
    "to do lists": "todolist",
    "phone call": "call",
    "phone calls": "call",
    "voice call": "call",
    "voice calls": "call",
    "turn into": "convert",
    "turns into": "convert",
    "turned into": "convert",
    "turning into": "convert",
    "llamada telefonica": "llamada",
    "llamadas telefonicas": "llamada",
    "appel telephonique": "appel",
    "appels telephoniques": "appel",
    "mettre a jour": "update",
    "mise a jour": "update",
    "copia de seguridad": "backup",
    "smart home": "smarthome",
    "home assistant": "homeassistant",
    "casa inteligente": "smarthome",
    "hogar inteligente": "smarthome",
    "maison connectee": "smarthome",
    "real time": "realtime",
    "tiempo real": "realtime",
    "temps reel": "realtime",
    "time zone": "timezone",
    "time zones": "timezone",
    "zona horaria": "timezone",
    "exchange rate": "exchangerate",
    "exchange rates": "exchangerate",
    "tipo de cambio": "exchangerate",
    "taux de change": "exchangerate",
    "text to speech": "texttospeech",
    "texto a voz": "texttospeech",
    "synthese vocale": "texttospeech",
    "sprachausgabe": "texttospeech",
    "speech to text": "speechtotext",
    "voz a texto": "speechtotext",
    "reconnaissance vocale": "speechtotext",
    "spracherkennung": "speechtotext",
    "piece jointe": "piecejointe",
    "pieces jointes": "piecejointe",
    "mot de passe": "motdepasse",
    "mots de passe": "motdepasse",
    "base de datos": "database",
    "base de donnees": "database",
    "hoja de calculo": "spreadsheet",
    "hojas de calculo": "spreadsheet",
    "codigo de barras": "barcode",
    "code barres": "barcode",
    "qr code": "qrcode",
    "qr codes": "qrcode",
    "codigo qr": "qrcode",
    "codigos qr": "qrcode",
    "wi fi": "wifi",
    "address book": "addressbook",
    "pull request": "pullrequest",
    "sous titres": "soustitre",
    "sous titre": "soustitre",
    "rendez vous": "rdv",
    "red social": "social",
    "redes sociales": "social",
    "reseaux sociaux": "social",
    "prise en charge": "supported",
    "pris en charge": "supported",
    "cuenta atras": "countdown",
    "compte a rebours": "countdown",
    "cover letter": "coverletter",
    "cover letters": "coverletter",
    "lettre de motivation": "coverletter",
    "carta de presentacion": "coverletter",
    "fond d ecran": "wallpaper",
    "fonds d ecran": "wallpaper",
    "fondo de pantalla": "wallpaper",
    "pick up": "answer",
    "picking up": "answer",
    "shopping list": "shoppinglist",
    "shopping lists": "shoppinglist",
    "grocery list": "shoppinglist",
    "grocery lists": "shoppinglist",
    "lista de la compra": "shoppinglist",
    "liste de courses": "shoppinglist",
    "einkaufsliste": "shoppinglist",
    "einkaufslisten": "shoppinglist",
    "front door": "door",
    "cambiar el nombre": "rename",
    "changer le nom": "rename",
    "lave linge": "lavadora",
    "lave vaisselle": "lavadora",
}
_PHRASE = re.compile(r"\b(?:" + "|".join(map(re.escape, PHRASES)) + r")\b")


def _table(groups: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    exact: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for concept, forms in groups.items():
        for form in forms.split():
            if form.endswith("*"):
                prefixes.setdefault(form[:-1], concept)
            else:
                exact.setdefault(form, concept)
    return exact, prefixes


EXACT, PREFIXES = _table({**ACTIONS, **GENERIC_ACTIONS, **THINGS})
for _brand in BRANDS:  # each its own concept, unless the lexicon names it (YouTube -> video)
    EXACT.setdefault(_brand, _brand)
_SHORTEST = min(map(len, PREFIXES))


def fold(text: str) -> str:
    """Lower case, accents and punctuation gone, snake_case split, known phrases joined."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss"))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    spaced = " ".join(re.findall(r"[a-z0-9]+", plain))
    return _PHRASE.sub(lambda match: PHRASES[match.group(0)], spaced)


def languages(words: list[str]) -> tuple[str, ...]:
    """The text's languages by its stop words, most first; all four when it has none."""
    counts = {lang: sum(word in STOP[lang] for word in words) for lang in LANGUAGES}
    best = max(counts.values())
    if best == 0:
        return LANGUAGES
    return tuple(lang for lang in LANGUAGES if counts[lang] == best)


@lru_cache(maxsize=4)
def _stemmer(language: str) -> Any:
    import snowballstemmer  # 13 ms to import: only once a text is compared

    return snowballstemmer.stemmer(language)


@lru_cache(maxsize=16384)
def stem(language: str, word: str) -> str:
    """The Snowball stem of a folded word in one of LANGUAGES."""
    return str(_stemmer(language).stemWord(word))


def spelled(word: str) -> str:
    """One spelling across languages: ph -> f, th -> t, k -> c, y -> i, doubled letters once."""
    plain = word.replace("ph", "f").replace("th", "t").replace("k", "c").replace("y", "i")
    return re.sub(r"(.)\1+", r"\1", plain)


def _prefixed(word: str) -> tuple[str, int]:
    """The concept of the longest known stem `word` starts with, and that stem's length."""
    for end in range(len(word), _SHORTEST - 1, -1):
        if word[:end] in PREFIXES:
            return PREFIXES[word[:end]], end
    return "", 0


def _known(word: str) -> str:
    return EXACT.get(word) or _prefixed(word)[0]


def _compound(word: str, shortest_head: int) -> tuple[str, ...]:
    """A German compound as two known parts (`sprachnachrichten` -> voice, message), the
    head at least `shortest_head` letters long."""
    for cut in range(len(word) - COMPOUND_MIN, max(shortest_head, COMPOUND_MIN) - 1, -1):
        head = word[:cut]
        tail = _known(word[cut:]) or _known(word[cut + 1 :])
        if tail and head not in STOP_WORDS and (known := _known(head)):
            return (known, tail)
    return ()


@lru_cache(maxsize=16384)
def concept_of(word: str, langs: tuple[str, ...]) -> tuple[str, ...]:
    """The concepts of one folded word (not a stop word) in a text of languages `langs`."""
    if word in EXACT:
        return (EXACT[word],)
    known, length = _prefixed(word)
    if len(word) >= 2 * COMPOUND_MIN + 2 and (parts := _compound(word, length)):
        return parts
    if known:
        return (known,)
    for language in langs:  # stemmed only now: most words are known as they are
        if (found := EXACT.get(stem(language, word))) is not None:
            return (found,)
    return (spelled(stem(langs[0], word)),)


@lru_cache(maxsize=4096)
def concepts(text: str) -> frozenset[str]:
    """The concepts a text names, stop words dropped (see the module's docstring)."""
    words = fold(text).split()
    langs = languages(words)
    found: set[str] = set()
    for word in words:
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        found.update(concept_of(word, langs))
    return frozenset(found)
