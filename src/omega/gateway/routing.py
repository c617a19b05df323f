"""Classify and route: a cheap planning call decides between a direct answer, a multi-step
plan (each step naming only tools or skills that exist), or an honest 'I need a new skill'.

The model proposes the plan; this code validates it. Anything unparseable is a direct answer;
a plan whose step names a tool or skill that does not exist stops there and becomes a gap
(`requires_new_skill`, recorded with source "planner"), never a plain answer as if done.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from omega.types import ChatMessage

# First line of the planner's instructions; test fakes recognise planning calls by it.
PLANNER_TAG = "You are the planner that routes requests for Omega."
MAX_STEPS = 20  # run in one go; the rest of a longer plan is listed, never silently dropped
MAX_PLANNED = 200  # steps read from a plan at all
HISTORY_CHARS = 80

PLANNER_INSTRUCTIONS = f"""{PLANNER_TAG}
Decide how to handle the request. Answer with JSON only, one of:
{{"kind": "direct"}}  - a single answer is enough (most requests)
{{"kind": "steps", "steps": [{{"do": "<step>", "uses": ["<tool or skill>"]}}, ...]}}
  - the request needs several distinct actions in sequence (2 or more steps)
{{"kind": "requires_new_skill", "missing_capability": "<what>", "reason": "<why>"}}
  - nothing available can do it
Only name tools and skills from the lists below; never invent one."""

PlanKind = Literal["direct", "steps", "requires_new_skill"]


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan and the tools/skills it says it uses."""

    do: str
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """A validated routing decision."""

    kind: PlanKind = "direct"
    steps: tuple[PlanStep, ...] = ()
    missing_capability: str = ""
    reason: str = ""
    notes: tuple[str, ...] = field(default=())  # why a proposal was turned into 'direct'
    # Steps past MAX_STEPS: not run now; the person is told which, and may ask to continue.
    held_back: tuple[PlanStep, ...] = ()


DIRECT = Plan()


def planning_prompt(
    request: str,
    *,
    active_project: str = "",
    recent: Sequence[ChatMessage] = (),
    skills: Sequence[str] = (),
    tools: Sequence[str] = (),
) -> str:
    """The planner's instructions plus ~100 tokens of context and the request."""
    lines = [PLANNER_INSTRUCTIONS, ""]
    if active_project:
        lines.append(f"Active project: {active_project}")
    if recent:
        lines.append("Recent messages:")
        for turn in list(recent)[-3:]:
            text = " ".join(turn.content.split())
            if len(text) > HISTORY_CHARS:
                text = text[: HISTORY_CHARS - 1] + "…"
            lines.append(f"- {turn.role}: {text}")
    lines.append(f"Skills: {', '.join(skills) if skills else '(none)'}")
    lines.append(f"Tools: {', '.join(tools) if tools else '(none)'}")
    lines += ["", f"Request: {request}"]
    return "\n".join(lines)


_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+(.+?)\s*$")


def _numbered_steps(text: str) -> list[str]:
    """The items of a numbered list anywhere in the text (preamble lines ignored)."""
    return [m.group(2) for m in map(_NUMBERED.match, text.splitlines()) if m]


def parse_plan(text: str, known: Sequence[str]) -> Plan:
    """Validate the planner's answer against the tools and skills that exist.

    Unparseable or single-step: a direct answer. A step naming something that does not
    exist: the gap (`requires_new_skill`), whatever the other steps say.
    """
    known_names = {name.casefold() for name in known}
    stripped = text.strip()
    if re.fullmatch(r"[\W_]*direct[\W_]*", stripped, re.I):
        return DIRECT
    # The first "{" to the last "}" (a greedy regex search was quadratic in a run of "{").
    start, end = stripped.find("{"), stripped.rfind("}")
    data: object = None
    if 0 <= start < end:
        try:
            data = json.loads(stripped[start : end + 1])
        except json.JSONDecodeError:
            data = None
    if not isinstance(data, dict):
        listed = _numbered_steps(stripped)
        if len(listed) >= 2:
            return _steps_plan([PlanStep(s[:500]) for s in listed[:MAX_PLANNED]])
        return DIRECT
    kind = data.get("kind")
    if kind == "requires_new_skill":
        missing = data.get("missing_capability")
        reason = data.get("reason", "")
        if not isinstance(missing, str) or not missing.strip() or not isinstance(reason, str):
            return Plan(notes=("requires_new_skill without a missing_capability",))
        return Plan(
            kind="requires_new_skill",
            missing_capability=missing.strip()[:200],
            reason=reason.strip()[:500],
        )
    if kind != "steps":
        return DIRECT
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list):
        return Plan(notes=("steps is not a list",))
    steps: list[PlanStep] = []
    for raw in raw_steps[:MAX_PLANNED]:
        if isinstance(raw, str):
            raw = {"do": raw}
        if not isinstance(raw, dict) or not isinstance(raw.get("do"), str) or not raw["do"].strip():
            return Plan(notes=("a step has no description",))
        uses = raw.get("uses", [])
        if isinstance(uses, str):
            uses = [uses]
        if not isinstance(uses, list) or not all(isinstance(u, str) for u in uses):
            return Plan(notes=("a step's 'uses' is not a list of names",))
        unknown = [u for u in uses if u.casefold() not in known_names]
        if unknown:  # never invented, never glossed over: planning stops at a missing tool
            return _missing(raw["do"].strip(), unknown)
        steps.append(PlanStep(raw["do"].strip()[:500], tuple(uses)))
    if len(steps) < 2:
        return DIRECT
    return _steps_plan(steps)


def _missing(step: str, unknown: list[str]) -> Plan:
    """A plan that needs tools or skills that do not exist stops there (spec 004 §3.1, hard
    rule 3): it becomes a gap, recorded and told, never a plain answer as if it were done."""
    names = ", ".join(u.strip()[:60] for u in unknown[:5])
    return Plan(
        kind="requires_new_skill",
        missing_capability=f"the tool {names}"[:200],
        reason=f"The plan needs it for {step[:200]!r}; no available tool or skill does that.",
        notes=(f"plan named unknown tools or skills: {names}",),
    )


def _steps_plan(steps: list[PlanStep]) -> Plan:
    """A steps plan: the first MAX_STEPS run now, the rest held back (and said so)."""
    return Plan(kind="steps", steps=tuple(steps[:MAX_STEPS]), held_back=tuple(steps[MAX_STEPS:]))


# When routing is obvious no planning call is made (issue 27: one call for a "hi"). Obvious:
# one short line, no attachment, no link or path, no word that asks for a tool, a sequence of
# actions or something only a skill could do, nothing naming a tool or skill; and either small
# talk (every word a greeting or acknowledgement) or a plain question. Anything else is planned.
OBVIOUS_MAX_CHARS = 120
OBVIOUS_MAX_WORDS = 12
# Words that may need a tool, a plan of several steps or a new skill, in the eight languages
# Omega welcomes people in (English, Spanish, Portuguese, French, German, Italian, Dutch,
# Russian); a message in another language is planned unless it is small talk or a question.
ACTION_WORDS = frozenset(
    """search find look lookup browse google web internet online site website url link
    download upload fetch open read write edit save delete remove rename move copy create make
    build generate draw image picture photo screenshot file files folder directory document pdf
    run execute shell terminal command script code install deploy schedule remind reminder
    remember forget alarm timer every daily weekly monthly tomorrow tonight later calendar
    email mail inbox send message call book buy order pay weather news price prices stock
    latest current today then after afterwards first next finally steps step plan compare
    summarize summarise list check memory notes note project projects task tasks skill skills
    tool tools heartbeat watch monitor track
    busca buscar encuentra encontrar descarga descargar envía envia enviar manda mandar correo
    archivo archivos carpeta abre abrir lee leer escribe escribir guarda guardar borra borrar
    crea crear programa programar recuérdame recuerdame recordatorio luego después despues
    compara comparar precio precios noticias tiempo clima mañana hoy
    procura procurar pesquisa pesquisar baixa baixar envia envie arquivo arquivos pasta
    abra escreve escrever salva salvar apaga apagar cria criar lembra lembre lembrete depois
    amanhã amanha hoje notícias noticias preço preços previsão
    cherche chercher trouve trouver télécharge telecharge télécharger envoie envoyer fichier
    fichiers dossier ouvre ouvrir lis lire écris ecris écrire ecrire enregistre supprime
    supprimer crée cree créer creer rappelle rappel demain aujourd hui ensuite après apres
    compare comparer prix actualités actualites météo meteo courriel
    suche suchen finde finden lade herunterladen sende senden schick schicke datei dateien
    ordner öffne oeffne öffnen lies lesen schreib schreibe schreiben speichere speichern
    lösche loesche löschen erstelle erstellen erinnere erinnerung heute dann danach
    vergleiche vergleichen preis preise nachrichten wetter
    cerca cercare trova trovare scarica scaricare invia inviare manda mandare documento
    cartella apri aprire leggi leggere scrivi scrivere salva salvare cancella cancellare
    crea creare ricordami promemoria domani oggi poi dopo confronta confrontare prezzo prezzi
    notizie meteo
    zoek zoeken vind vinden download downloaden stuur sturen verstuur bestand bestanden map
    open openen lees lezen schrijf schrijven bewaar opslaan verwijder verwijderen maak maken
    herinner herinnering vandaag dan daarna vergelijk vergelijken prijs prijzen nieuws
    weer
    найди найти поищи поиск ищи скачай скачать отправь отправить пошли файл файлы папку
    папка открой открыть прочитай прочитать напиши написать сохрани сохранить удали удалить
    создай создать напомни напоминание завтра сегодня потом после сравни сравнить цена цены
    новости погода""".split()
)
SMALL_TALK = frozenset(
    """hi hello hey heya hiya yo howdy greetings morning afternoon evening night good day
    gm gn thanks thank you thx ty cheers ok okay k kk cool great nice awesome perfect fine a lot
    yes yeah yep no nope sure bye goodbye later see ya lol haha hehe wow oh ah hmm how are
    what's whats what s up sup doing there all everyone omega again much very so too
    hola buenas buenos días dias tardes noches gracias muchas vale sí si adiós adios qué que
    tal cómo como estás estas bien
    olá ola oi bom boa dia tarde noite obrigado obrigada muito valeu tchau tudo beleza sim não nao
    bonjour bonsoir salut coucou merci beaucoup oui non d accord ça ca va bien bonne journée
    journee soirée soiree au revoir
    hallo guten morgen tag abend gute nacht danke schön schoen vielen dank ja nein tschüss
    tschuess servus moin wie geht's gehts es dir gut
    ciao buongiorno buonasera buonanotte grazie mille sì no va bene arrivederci salve come
    stai tutto
    hoi hallo goedemorgen goedemiddag goedenavond dag dank je wel bedankt dankjewel ja nee
    doei hoe gaat het goed prima
    привет здравствуй здравствуйте добрый доброе утро день вечер спокойной ночи спасибо
    большое да нет пока хорошо ок как дела""".split()
)
_LINKISH = re.compile(r"://|www\.|[/\\~`@#$%{}<>\[\]|]")
_WORDS = re.compile(r"\w+", re.U)


def obviously_direct(text: str, *, attachments: int = 0, names: Sequence[str] = ()) -> bool:
    """Whether a message needs no planning call: a greeting or a short plain question that
    asks for no tool, no steps and no skill (`names`: the tools and skills that exist)."""
    line = text.strip()
    if attachments or not line or len(line) > OBVIOUS_MAX_CHARS or "\n" in line:
        return False
    if _LINKISH.search(line):
        return False
    words = [w.casefold() for w in _WORDS.findall(line)]
    if len(words) > OBVIOUS_MAX_WORDS or any(w in ACTION_WORDS for w in words):
        return False
    folded = " ".join(words)
    for name in names:
        spoken = " ".join(_WORDS.findall(name.replace("_", " ").replace("-", " ").casefold()))
        if spoken and re.search(rf"\b{re.escape(spoken)}\b", folded):
            return False
    if all(w in SMALL_TALK for w in words):
        return True
    return line.endswith(("?", "？")) or line.startswith("¿")
