"""More names the content signal looks for: the owner's private data, channels that carry data
out without "sending" it, skills that document a public API, and the words of explaining (not
doing) and of owning a secret, in English, Spanish, French, German and Portuguese.

Patterns run over folded text (normalize.fold), so they are written without accents.
"""

from __future__ import annotations

from omega.evolution.gate.lexicon import any_of as _any

# The owner's private data: what must not leave, whatever carries it.
PRIVATE_DATA = _any(
    r"\b(private|personal|owner'?s|my|our|the\s+user'?s)\s+(messages?|chats?|conversations?|"
    r"notes|files|documents|photos|contacts|history|data|e-?mails?|diary|journal|memor(y|ies))\b",
    r"\b(the\s+)?(chat|conversation|browsing|search|call|message)\s+(transcripts?|history|logs?)\b",
    r"\btranscripts?\b|\bconversation\s+log|\bomega'?s\s+memory\b|\bmemory\s+of\s+omega\b",
    r"\b(mensajes|conversaciones|historial|notas)\s+(privad|personal)\w*",
    r"\b(messages|conversations|historique|notes)\s+(prive|personnel)\w*",
    r"\b(private|personliche|privaten?)\s+(nachrichten|unterhaltungen|notizen|daten)\b",
    r"\b(mensagens|conversas|historico|notas)\s+(privad|pesso)\w*",
)
# Channels that carry data off the machine without "sending" it.
OUTWARD_CHANNELS = _any(
    r"\b(web\s+)?search\s+(query|queries|request|terms?)\b",
    r"\bquery\s+(string|parameters?)\b|\burl\s+(parameters?|fragment|path)\b",
    r"\b(image|img|pixel|avatar)\s+(url|link|address|source|src)\b|\btracking\s+pixel\b",
    r"\balt\s+text\b|\bmarkdown\s+image\b|\bdns\s+(lookup|query|queries|request)\b",
    r"\bsubdomains?\b|\buser[\s-]agent\b|\breferr?er\b",
    r"\b(consulta|busqueda|requete|recherche|suchanfrage|pesquisa)\b",
)
# A skill that says the host it calls is a documented public API (read with no credentials).
PUBLIC_API = _any(
    r"\b(documented\s+|free\s+|open\s+)?public\s+([\w-]+\s+){0,2}(api|endpoint|web\s+service)\b",
    r"\bopen[\s-]data\s+api\b|\bno\s+(api\s+)?key\s+(is\s+)?(needed|required)\b",
    r"\bapi\s+publi(que|ca)\b|\boffentliche[n]?\s+api\b|\bapi\s+aberta\b",
)
# Explaining is not doing: a skill that teaches, answers or describes.
EXPLAIN_VERBS = _any(
    r"\b(explain|explains|explaining|describe|describes|teach|teaches|define|defines|"
    r"clarify|what\s+(is|are|an?)\b|how\s+to\s+(choose|pick|recognise|recognize|spot|avoid)|"
    r"tips\s+(for|on)|advice\s+on|quiz|glossary|learn\s+about)\b",
    r"\b(explicar|explica|describir|ensenar|que\s+es)\b",
    r"\b(expliquer|explique|decrire|enseigner|qu'est-ce\s+qu)\b",
    r"\b(erklaren|erklare|erklart|beschreiben|was\s+ist)\b",
    r"\b(explicar|explique|descrever|ensinar|o\s+que\s+e)\b",
)
# Whose secrets: "my saved passwords" is a thing to take, "a strong password" an idea.
OWNED_SECRET = _any(
    r"\b(my|your|our|their|his|her|the\s+owner'?s|the\s+user'?s|saved|stored|existing|current|"
    r"all)\s+(\w+\s+)?(passw(or)?ds?|credentials?|keys?|tokens?|cookies?|secrets?|logins?)\b",
)
# "no API key needed", "without credentials": a secret named to say it is not used.
NEGATED_SECRET = _any(
    r"\b(no|without|never\s+(any|a)|not\s+(any|a))\s+(api[\s_-]?)?(keys?|credentials?|tokens?|"
    r"passwords?|logins?|sign[\s-]?in)(\s+(is\s+|are\s+)?(needed|required|used|sent))?\b",
)


def unnegated(text: str) -> str:
    """`text` without the secrets it names only to say they are not used."""
    return NEGATED_SECRET.sub(" ", text)
