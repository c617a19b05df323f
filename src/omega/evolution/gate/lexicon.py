"""The names the content signal looks for: sensitive files, APIs, endpoints, and the verbs and
nouns of the forbidden acts in English, Spanish, French, German and Portuguese.

Patterns run over folded text (normalize.fold: accents stripped, look-alikes mapped), so they
are written without accents ("contrasena", "uberweisen").
"""

from __future__ import annotations

import re


def any_of(*patterns: str) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of `patterns`."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_any = any_of


# label -> where a credential or private store is named (paths, file names, products).
SECRET_FILES: dict[str, re.Pattern[str]] = {
    "credentials: browser saved logins": _any(
        r"logins\.json",
        r"key[34]\.db",
        r"signons\.sqlite",
        r"login[\s_]data\b",
        r"cert9\.db",
        r"local[\s_]state\b.{0,40}(chrome|edge|brave)",
    ),
    "credentials: browser cookies": _any(
        r"cookies\.sqlite", r"(chrome|edge|brave|firefox)\W{0,20}cookies"
    ),
    "credentials: ssh keys": _any(
        r"~?/?\.ssh\b", r"\bid_(rsa|dsa|ecdsa|ed25519)\b", r"authorized_keys", r"ssh-agent"
    ),
    "credentials: .env and token files": _any(
        r"(?<![\w.])\.env\b",
        r"\.netrc\b",
        r"\.pgpass\b",
        r"\.git-credentials",
        r"\.aws/credentials",
        r"\.docker/config\.json",
        r"\.kube/config",
        r"\.npmrc\b",
        r"\.pypirc\b",
        r"application_default_credentials",
        r"\bsecrets\.(ya?ml|json|toml)\b",
    ),
    "credentials: keychain or keyring": _any(
        r"\bkeychains?\b",
        r"login\.keychain",
        r"security\s+(find|dump)-(generic|internet)-password",
        r"\bkeyring\b",
        r"\bkwallet",
        r"gnome-keyring",
        r"credential\s+manager",
        r"\blsass\b",
        r"/etc/shadow",
    ),
    "credentials: crypto wallet": _any(
        r"wallet\.dat", r"\bkeystore\b", r"\.electrum\b", r"\bmetamask\b", r"seed[\s_-]?phrase"
    ),
    "private: message stores": _any(
        r"\bchat\.db\b", r"msgstore\.db", r"\btdata\b", r"signal\W{0,3}(desktop|config\.json)"
    ),
    "private: shell history": _any(r"\.(bash|zsh)_history", r"\bhistory\.sqlite"),
    "private: omega memory": _any(r"memory\.db\b"),
    "private: contacts and photos": _any(
        r"address\s?book", r"contacts\.(vcf|db|csv)", r"photos\s?library"
    ),
}

# label -> how a broker, payment or messaging API shows up (names, SDKs, endpoints, env vars).
API_SIGNS: dict[str, re.Pattern[str]] = {
    "broker: interactive brokers": _any(
        r"interactive\s*brokers?",
        r"\bibkr\b",
        r"\bib[\s_-]?(api|gateway|insync|async|client)\b",
        r"\bib_(insync|async)\b",
        r"\bibapi\b",
        r"\btws\b",
        r"\bvia\s+(the\s+)?ib\b",
    ),
    "broker: alpaca": _any(r"\balpaca\b", r"APCA_API"),
    "broker: retail brokers": _any(
        r"robinhood",
        r"td\s?ameritrade",
        r"\bschwab\b",
        r"e\*?trade",
        r"\bdegiro\b",
        r"trading\s?212",
        r"\btradier\b",
        r"\boanda\b",
        r"metatrader|\bmt[45]\b",
        r"\bsaxo\b",
    ),
    "broker: crypto exchanges": _any(
        r"\bbinance\b",
        r"\bcoinbase\b",
        r"\bkraken\b",
        r"\bbitstamp\b",
        r"\bccxt\b",
        r"\bbybit\b",
        r"\bokx\b",
    ),
    "payment: card and transfer APIs": _any(
        r"\bstripe\b",
        r"\bpaypal\b",
        r"\bbraintree\b",
        r"\badyen\b",
        r"transferwise",
        r"api\.wise\.com",
        r"\bvenmo\b",
        r"\bzelle\b",
        r"\brevolut\b",
        r"\bmollie\b",
        r"\bklarna\b",
        r"\bsepa\b",
        r"\bswift\s+transfer",
        r"\bplaid\b",
        r"\bbizum\b",
        r"\bpix\b",
        r"\bcash\s?app\b",
    ),
    "payment: on-chain transfer": _any(
        r"sendtransaction", r"eth_send", r"\bweb3\b", r"\bsolana\b.{0,30}transfer"
    ),
    "messaging: e-mail sending": _any(
        r"\bsmtp",
        r"smtplib",
        r"\bsendmail\b",
        r"\bmailgun\b",
        r"\bsendgrid\b",
        r"amazon\s?ses\b",
        r"\bses\.send",
        r"\bpostmark\b",
        r"gmail\.send|users\.messages\.send",
        r"\bmailto:",
    ),
    "messaging: sms and phone": _any(
        r"\btwilio\b", r"\bvonage\b", r"\bnexmo\b", r"messagebird", r"\bplivo\b"
    ),
    "messaging: chat APIs": _any(
        r"api\.telegram\.org",
        r"\bsend_?message\b",
        r"chat\.postmessage",
        r"hooks\.slack\.com",
        r"\bslack\s?(api|bot|sdk|webhook)",
        r"SLACK_BOT_TOKEN",
        r"server-slack",
        r"discord(app)?\.com/api",
        r"\bdiscord\s?(bot|webhook)",
        r"whatsapp\s?(business\s?)?(api|cloud)",
        r"graph\.facebook\.com/.{0,30}messages",
        r"signal-cli",
        r"\btweepy\b|create_tweet|statuses/update",
    ),
}

# Drop sites whose top-level domain the host pattern does not take bare (.sh, .st).
DROP_SITES = _any(r"\btransfer\.sh\b", r"\binteract\.sh\b", r"\b0x0\.st\b", r"\bix\.io\b")
# Hosts built to receive whatever is sent to them.
WEBHOOK_HOSTS: dict[str, re.Pattern[str]] = {
    "hook": _any(r"^(web)?hooks?\.", r"webhook", r"\bhook\."),
    "bin": _any(
        r"requestbin", r"pipedream", r"beeceptor", r"hookbin", r"webhook\.site", r"postb\.in"
    ),
    "tunnel": _any(r"ngrok", r"trycloudflare", r"localtunnel", r"serveo", r"loca\.lt"),
    "drop": _any(r"pastebin", r"transfer\.sh", r"file\.io", r"0x0\.st", r"anonfiles", r"termbin"),
    "oast": _any(r"burpcollaborator", r"interact\.sh", r"oast\.", r"canarytokens"),
}

SEND_VERBS = _any(
    r"\b(send|sends|sending|sent|forward|forwards|forwarding|upload|uploads|uploading|post|"
    r"posts|posting|transmit|transmits|exfiltrat\w*|leak|leaks|beam|relay|relays|ship|ships|"
    r"mirror|mirrors|sync|syncs|push|pushes|share|shares|sharing|copy|copies|deliver|delivers|"
    r"publish|publishes|report\s+back|phone\s+home|hand\s+over|pass\s+along)\b",
    r"\b(enviar|envia|envie|envio|reenviar|reenvia|subir|sube|mandar|manda|compartir|comparte|"
    r"transmitir|filtrar|remitir|remite)\b",
    r"\b(envoyer|envoie|envoyez|transferer|transfere|transmettre|transmet|televerser|partager|"
    r"partage|expedier|faire\s+suivre|remonter)\b",
    r"\b(senden|sende|sendet|schicken|schicke|schickt|weiterleiten|leite\w*\s+weiter|hochladen|"
    r"lade\w*\s+hoch|ubertragen|ubertrage|ubermitteln|ubermittle|teilen|teile)\b",
    r"\b(encaminhar|encaminha|carregar|compartilhar|compartilha|transmita|envie)\b",
)
# Narrower than SEND_VERBS: what one does with a message to a person.
MESSAGE_VERBS = _any(
    r"\b(send|sends|sending|forward|forwards|deliver|delivers|blast|broadcast|reply|replies|"
    r"dm|write\s+to|post\s+to|notify)\b",
    # A noun used as a verb only with a person after it ("email my boss", not "read my email").
    r"\b(e-?mail|mail|text|sms|message|ping)\s+(my|all|every|everyone|everybody|them|him|her|"
    r"the\s+(team|customers|clients|list))\b",
    r"\b(enviar|envia|envie|mandar|manda|reenviar|responder|escribir\s+a)\b",
    r"\b(envoyer|envoie|envoyez|transferer|repondre|ecrire\s+a)\b",
    r"\b(senden|sende|sendet|schicken|schicke|weiterleiten|antworten|schreiben\s+an)\b",
    r"\b(encaminhar|encaminha|responder|escrever\s+para)\b",
)
TRADE_VERBS = _any(
    r"\b(buy|buys|buying|bought|sell|sells|selling|sold|purchase|purchases|purchasing|acquire|"
    r"acquires|acquiring|trade|trades|trading|pay|pays|paying|wire|wires|charge|charges|"
    r"invest|invests|investing|short|shorting|liquidate|rebalance|transfer|transfers|settle|"
    r"settles|move|moves|pick\s+up|picks\s+up|top\s+up)\b",
    r"\b(place|submit|send|execute)s?\s+(an?\s+|the\s+)?(\w+\s+)?orders?\b",
    r"\b(comprar|compra|compre|vender|vende|venda|adquirir|adquiere|adquira|pagar|paga|pague|"
    r"transferir|transfiere|transfira|invertir|invierte|investir|invista|negociar|operar)\b",
    r"\b(acheter|achete|achetez|vendre|vends|vendez|acquerir|acquiers|payer|paye|payez|virer|"
    r"virement|investir|investis|passer\s+un\s+ordre)\b",
    r"\b(kaufen|kaufe|kauft|verkaufen|verkaufe|verkauft|erwerben|erwirb|bezahlen|bezahle|zahlen|"
    r"zahle|uberweisen|uberweise|uberweisung|investieren|investiere|handeln)\b",
)
MONEY_NOUNS = _any(
    r"\b(shares?|stocks?|units?\s+of|equit(y|ies)|options?\s+contracts?|futures|etfs?|"
    r"positions?|portfolio|funds|money|bitcoin|btc|ether(eum)?|crypto|usdt|invoice|bills?)\b",
    r"\b(acciones|accion|titulos|valores|dinero|fondos|cartera|factura)\b",
    r"\b(actions\s+(de|d')|titres|argent|fonds|portefeuille|facture)\b",
    r"\b(aktien|aktie|anteile|wertpapiere|geld|depot|rechnung)\b",
    r"\b(acoes|acao|cotas|dinheiro|carteira|fatura|boleto)\b",
)
MESSAGE_NOUNS = _any(
    r"\b(e-?mails?|mails?|sms|text\s+messages?|messages?(?!\s+(broker|queue|bus))|dms?|"
    r"direct\s+messages?|tweets?|whatsapp|telegram|slack|imessage|newsletters?)\b",
    r"\b(correos?|mensajes?|correo\s+electronico)\b",
    r"\b(courriels?|messages?|textos)\b",
    r"\b(nachrichten|nachricht|e-mail|rundmail)\b",
    r"\b(mensagens?|torpedos?)\b",
)
THIRD_PARTIES = _any(
    r"\b(my|all|every|the\s+owner'?s)\s+(contacts|friends|colleagues|coworkers|clients|customers|"
    r"followers|family|address\s?book|mailing\s+list)\b",
    r"\b(everyone|everybody|third[\s-]part(y|ies)|recipients?|strangers|other\s+people|"
    r"on\s+(my|the\s+owner'?s)\s+behalf)\b",
    r"\b(mis|todos\s+mis|sus)\s+(contactos|amigos|clientes|colegas)\b",
    r"\b(mes|tous\s+mes)\s+(contacts|amis|clients|collegues)\b",
    r"\ban\s+(alle|meine)\s+(kontakte|freunde|kunden|kollegen)\b|\ballen\s+kontakten\b",
    r"\b(meus|todos\s+os\s+meus)\s+(contatos|amigos|clientes|colegas)\b",
)
SECRET_WORDS = _any(
    r"passw(or)?ds?|\bcredentials?\b|sign[\s-]?in\s+(material|data|details|info)|"
    r"log[\s-]?in\s+(material|data|details|info)|saved\s+logins|\bsecrets?\b|"
    r"api[\s_-]?keys?|(access|auth|bearer|session)[\s_-]?tokens?|private[\s_-]?keys?|"
    r"browser\s+profiles?|\bcookies?\b|2fa\s+codes?|\botp\b|recovery\s+codes?",
    r"contrasenas?|credenciales|claves|datos\s+de\s+(acceso|inicio)|inicio\s+de\s+sesion",
    r"mots?\s+de\s+passe|identifiants|donnees\s+de\s+connexion|\bcles\b",
    r"passwort|passworter|kennwort|zugangsdaten|anmeldedaten|schlussel",
    r"\bsenhas?\b|credenciais|chaves|dados\s+de\s+(login|acesso)",
)
WEAKEN_VERBS = _any(
    r"\b(disable|disables|disabling|bypass|bypasses|skip|skips|turn\s+off|switch\s+off|remove|"
    r"removes|relax|relaxes|loosen|loosens|patch|patches|edit|edits|modify|modifies|rewrite|"
    r"rewrites|override|overrides|neuter|weaken|allowlist|whitelist|empty|clear)\b",
    r"\b(desactivar|desactiva|omitir|saltar|eliminar|quitar|modificar|modifica|relajar)\b",
    r"\b(desactiver|desactive|contourner|contourne|supprimer|supprime|modifier|modifie|"
    r"assouplir|neutraliser)\b",
    r"\b(deaktivieren|deaktiviere|umgehen|umgehe|entfernen|entferne|andern|andere|lockern|"
    r"abschalten|ausschalten)\b",
    r"\b(desativar|desativa|contornar|remover|modificar|alterar|altera|afrouxar)\b",
)
GATE_NOUNS = _any(
    r"\b(omega'?s\s+)?(skill\s+)?gate\b",
    r"\bsandbox(es|ing)?\b|\blandlock\b|\bbwrap\b|\bbubblewrap\b|\bseatbelt\b",
    r"manual\s+(approval|review)|owner'?s\s+approval|approval\s+step",
    r"forbidden\s+categor(y|ies)|risk\s+(check|level\s+check)",
    r"\b(puerta|compuerta|caja\s+de\s+arena|aprobacion\s+manual|categorias\s+prohibidas)\b",
    r"\b(garde-fou|bac\s+a\s+sable|approbation\s+manuelle|categories\s+interdites)\b",
    r"\b(schranke|torwachter|manuelle\s+(genehmigung|freigabe)|verbotene\s+kategorien)\b",
    r"\b(portao|porteiro|caixa\s+de\s+areia|aprovacao\s+manual|categorias\s+proibidas)\b",
)
# Omega's own gate and policy by name: changing these is self-modification, whatever the verb.
GATE_TARGETS = _any(
    r"evolution/(gate|assess|signals|judge|lexicon|normalize)\.py",
    r"\b(gate|assess)\.py\b",
    r"forbidden_categories",
    r"require_manual_approval",
    r"autonomy_mode",
    r"max_risk_level",
    r"omega/sandbox/",
    r"\$omega_home/config\.toml|\.omega/config\.toml",
    r"gate_judgements",
)
DESTRUCTIVE_ACTS = _any(
    r"rm\s+-[a-z]*(rf|fr)[a-z]*\s+(/|~|\$home)",
    r"\bmkfs\b",
    r"\bdd\s+if=.{0,40}of=/dev/",
    r":\(\)\s*\{\s*:\|:&\s*\};:",
    r"\b(borrar|effacer|loschen|apagar)\s+(todo|tout|alles|tudo)\b",
)
