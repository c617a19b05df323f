"""The words of a gap text that say nothing of it, and the phrases that name one thing, per
language, for similarity_words.py: folded (lower case, no accents, `ß` as `ss`).

Stop words are each language's function words and the words every gap says ("cannot",
"keeps failing", "tool", "integration", "user"); the languages are those with a Snowball
stemmer the lexicon is written for. A word is dropped when it is a stop word in any of them,
so a word that is a stop word in one language and means a thing in another ("door" in Dutch
and English) is left out of the lists. Phrases are joined into one word before the text is
split (`mot de passe` -> `motdepasse`), or replaced by the words that say them in the lexicon
("stop doing X": `dejar de`, `deixar de`, `smettere di`, `stoppen met` -> `stop`, an undoing).
Russian's stop words are similarity_russian.py's (a text with a Cyrillic word is Russian).
"""

from __future__ import annotations

from omega.evolution.meaning.similarity_russian import RUSSIAN_STOP

__all__ = ["LANGUAGES", "PHRASES", "STOP", "STOP_WORDS"]

LANGUAGES = ("english", "spanish", "french", "german", "portuguese", "italian", "dutch")
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
        anyone somebody anybody nearby near nearest problem problems incoming integration
        integrations asked ask asks asking service services later whether tomorrow smart""",
        "spanish": """el la los las un una unos unas de del al a en con por para sin y o u e que
        no puedo puede pueden podemos poder pude es son esta estan estoy ser mi mis tu tus su sus
        se lo le les nos me te tengo tiene tienen hay este esta estos estas ese esa eso como
        cuando donde cual muy mas ya todavia aun tambien solo siempre nunca otra otro otros todo
        todos toda todas nada algo herramienta herramientas funciona funcionar falla fallo fallan
        error errores posible imposible disponible soportado compatible manera forma ninguna
        ningun ni desde hasta sobre entre capaz nuevo nueva nuevos nuevas vez veces usar nadie
        alguien gente cerca cercano cercana problema problemas falta faltan incapaz capacidad
        usuario usuarios integracion pidio servicio servicios soporte manana
        inteligente inteligentes""",
        "french": """le la les un une des du de d l au aux en et ou pas ne n je j peux peut
        peuvent pouvoir pu est sont suis etre mon ma mes ton ta tes son sa ses notre nos votre
        vos leur leurs ce cet cette ces qu que qui il elle ils elles on nous vous me te se s y sur
        pour par avec sans dans plus impossible possible outil outils fonctionne fonctionner
        marche echoue echec erreur erreurs toujours jamais disponible nouveau
        nouvelle nouveaux nouvel autre autres tout tous toute toutes rien fois moyen aucun aucune
        encore deja aussi seulement c ca utiliser personne quelqu gens proche pres probleme
        problemes vers manque manquent incapable capacite utilisateur utilisateurs integration
        demande fonction fonctionnalite va vont demain intelligent intelligente
        intelligents""",
        "german": """der die das den dem des ein eine einen einem einer eines und oder nicht
        kein keine keinen keinem keiner ich kann kannst konnen koennen konnte ist sind bin war im
        am zum zur mit fur fuer von vom auf aus bei nach zu als wie mein meine meinen meinem
        meiner dein sein seine ihr ihre unser es er sie wir du man sich werkzeug werkzeuge
        funktioniert funktionieren geht moglich moeglich unmoglich unterstutzt verfugbar
        verfuegbar fehler fehlgeschlagen schlagt schlaegt fehl immer wieder nie neue neuen neu
        noch schon auch nur mehr andere anderen alle jede jeden etwas nichts mal leider dass uber
        ueber durch um bis gibt habe hat haben wird werden nutzen niemanden niemand
        jemanden jemand leute nahe nahegelegen nachste naechste problem
        probleme mir mich dir uns fehlt fehlen moglichkeit moeglichkeit unfahig unfaehig
        nutzer nutzers benutzer integration integrationen dienst dienste spater spaeter morgen
        fehlende fehlender funktion fahigkeit faehigkeit unterstutzung unterstuetzung""",
        "portuguese": """o a os as um uma uns umas de do da dos das em no na nos nas ao aos
        pelo pela pelos pelas por para com sem e ou que nao posso pode podem consigo consegue
        conseguir conseguimos ha tem tenho ter meu minha meus minhas seu sua seus suas se me te
        lhe eu ele ela eles elas voce isso isto esse essa este esta estes estas como quando onde
        mais muito ja ainda tambem so apenas sempre nunca outro outra outros outras todo todos
        toda todas nada algo ferramenta ferramentas funciona funcionar falha falhou erro erros
        possivel impossivel disponivel suportado maneira forma nenhum nenhuma nem desde ate
        sobre entre capaz incapaz capacidade novo nova novos novas vez vezes usar usuario
        utilizador alguem ninguem pessoa pessoas perto problema problemas falta faltam
        integracao pediu pedi servico servicos suporte amanha""",
        "italian": """il lo la i gli le un uno una di del dello della dei degli delle al
        allo alla ai agli alle da dal dallo dalla dai dagli dalle nel nello nella nei negli
        nelle con sul sullo sulla sui sugli sulle per tra fra e ed o ma che non posso puo
        possono riesco riesce riusciamo riuscire ho hai ha abbiamo hanno mio mia miei mie tuo
        tua suo sua suoi sue si mi ti ci vi io lui lei noi voi loro questo questa questi queste
        quello quella come quando dove piu molto gia ancora anche solo sempre mai altro altra
        altri altre tutto tutti tutta tutte niente nulla qualcosa strumento strumenti funziona
        funzionare errore errori possibile impossibile disponibile supportato modo nessun
        nessuno nessuna capace incapace capacita nuovo nuova nuovi nuove volta volte usare
        utente utenti qualcuno vicino problema problemi manca mancano integrazione sono essere
        chiesto servizio servizi funzione supporto domani intelligenti""",
        "dutch": """de het een van aan te met voor naar bij uit om en of maar dat die dit deze
        niet geen kan kun kunt kunnen kon ik jij je u hij zij ze wij we mijn jouw zijn haar hun
        ons onze er is was waren wordt worden heb hebt heeft hebben al nog ook alleen altijd
        nooit ander andere alle iets niets hulpmiddel functie werkt werken fout fouten mogelijk
        onmogelijk beschikbaar manier nieuw nieuwe keer gebruiken gebruiker iemand niemand
        mensen probleem problemen ontbreekt ontbreken mis zo wel meer heel veel als hoe wat wie
        waar wanneer integratie vroeg mogelijkheid koppeling ontbrekende ondersteuning
        slimme""",
    }.items()
}
STOP_WORDS = frozenset().union(*STOP.values(), RUSSIAN_STOP)
# Words that name one thing together, joined before the text is split (folded, as one line).
PHRASES = {
    # "stop doing X": the lexicon's `stop`, an undoing (similarity_conflicts.UNDOING)
    "dejar de": "stop",
    "deje de": "stop",
    "deixar de": "stop",
    "parar de": "stop",
    "cesser de": "stop",
    "arreter de": "stop",
    "smettere di": "stop",
    "smettere": "stop",
    "stoppen met": "stop",
    "ophouden met": "stop",
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
    "video call": "videocall",
    "video calls": "videocall",
    "video calling": "videocall",
    "appel video": "videocall",
    "appels video": "videocall",
    "en ligne": "online",
    "en linea": "online",
    "on line": "online",
    "voice recognition": "speechtotext",
    "speech recognition": "speechtotext",
    "reconocimiento de voz": "speechtotext",
    "reconhecimento de voz": "speechtotext",
    "riconoscimento vocale": "speechtotext",
    "spraakherkenning": "speechtotext",
    "sintesi vocale": "texttospeech",
    "mensagem de texto": "textmessage",
    "mensagens de texto": "textmessage",
    "messaggio di testo": "textmessage",
    "messaggi di testo": "textmessage",
    "posta elettronica": "email",
    "correio eletronico": "email",
    "copia di sicurezza": "backup",
    "copia de seguranca": "backup",
    "fuso horario": "timezone",
    "fuso orario": "timezone",
    "lista de compras": "shoppinglist",
    "lista della spesa": "shoppinglist",
    "boodschappenlijst": "shoppinglist",
    "foglio di calcolo": "spreadsheet",
    "fogli di calcolo": "spreadsheet",
    "ligar para": "chamada",
    "des courses": "epicerie",
    "les courses": "epicerie",
    "de courses": "epicerie",
    "a domicilio": "entrega",
    "regler une facture": "payer facture",
    "regler la facture": "payer facture",
    "regler les factures": "payer factures",
    "regler des factures": "payer factures",
    "sum up": "summarize",
    "sum it up": "summarize",
    "sums up": "summarize",
    "hard copy": "print",
    "hard copies": "print",
    "wake up": "wake",
    "laufen lassen": "ausfuhren",
    "laufen zu lassen": "ausfuhren",
    "casa intelligente": "smarthome",
    "codice qr": "qrcode",
    "e post": "email",
    "a partir de": "de",
    "a partire da": "da",
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
    "умный дом": "smarthome",
    "умным домом": "smarthome",
    "умного дома": "smarthome",
    "умном доме": "smarthome",
    "умному дому": "smarthome",
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
