"""Held-out pairs for gap similarity, the third blind set (written 2026-11-29, not yet measured).
Written blind to the method and to the earlier sets. Do not tune on it: measure once, with the
method frozen, and record the figures. Labelling rule: True when both gaps name the same missing
capability (the same action on the same kind of thing), whatever the wording, language,
register, length or typos. False when the action differs (send vs delete, upload vs download,
lock vs unlock) or the object differs (camera vs microphone, lights vs heating). Pairs a careful
reviewer could argue either way (providers of one service, text vs speech translation) are out."""

HELD_OUT_V3: list[tuple[str, str, bool]] = [
    # --- English: same ---
    (
        "No tool to convert currencies",
        "Cannot tell how many euros a given amount of dollars is worth",
        True,
    ),
    ("Can't print documents", "Unable to produce hard copies of files", True),
    ("No ability to make phone calls", "Cannot dial a number and ring someone", True),
    ("I cannot set alarms", "Missing a way to wake the user up at a chosen time", True),
    ("Can't send text messages", "No SMS integration", True),
    ("Cannot read handwriting in scanned notes", "No OCR for handwritten pages", True),
    (
        "No tool to check the weather forecast",
        "I can't tell the user whether it will rain tomorrow",
        True,
    ),
    ("Unable to order groceries", "No integration with supermarket home delivery", True),
    (
        "The user asked me to pay the electricity bill but there is no payments integration",
        "Cannot pay utility bills",
        True,
    ),
    ("Can't unzip archives", "No ability to extract compressed .zip files", True),
    ("I have no access to the user's contacts list", "Cannot read the user's address book", True),
    ("No tool to track parcels", "Cannot tell where a shipped package currently is", True),
    (
        "Cannot schedule tweets",
        "Missing ability to queue posts on X/Twitter for later publication",
        True,
    ),
    ("cant acess the users email inbox", "No access to the user's mailbox", True),
    ("No text-to-speech", "I can't speak my answers out loud to the user", True),
    # --- English: different ---
    ("Cannot send emails", "Cannot delete emails", False),
    (
        "No tool to upload files to Google Drive",
        "No tool to download files from Google Drive",
        False,
    ),
    ("Can't subscribe to newsletters", "Can't unsubscribe from newsletters", False),
    ("Cannot crop images", "Cannot generate images", False),
    ("No access to the user's calendar", "No access to the user's camera", False),
    ("Can't book a table at a restaurant", "Can't book a hotel room", False),
    ("Cannot encrypt files", "Cannot decrypt files", False),
    ("I can't lock the front door remotely", "I can't unlock the front door remotely", False),
    ("No ability to play music", "No ability to compose music", False),
    ("Cannot read PDF files", "Cannot create PDF files", False),
    (
        "Missing tool to follow accounts on Instagram",
        "Missing tool to post photos on Instagram",
        False,
    ),
    ("Can't turn on the lights", "Can't turn on the heating", False),
    ("No integration to start a video call", "No integration to record a video call", False),
    ("Cannot convert currencies", "Cannot convert units of measurement", False),
    ("Cannot convert text to speech", "Cannot convert speech to text", False),
    # --- Spanish: same ---
    ("No puedo enviar correos electrónicos", "Falta herramienta para mandar emails", True),
    ("No puedo sacar fotos", "No tengo forma de tomar fotografías con la cámara", True),
    ("No puedo pedir un taxi", "Falta integración para llamar a un taxi desde la app", True),
    ("No puedo leer archivos de Excel", "Sin soporte para abrir hojas de cálculo .xlsx", True),
    (
        "No puedo hacer transferencias bancarias",
        "Falta la capacidad de mover dinero de una cuenta a otra",
        True,
    ),
    (
        "No sé convertir vídeos a otro formato",
        "Falta herramienta para cambiar el formato de archivos de vídeo, p. ej. de MOV a MP4",
        True,
    ),
    ("No puedo traducir documentos", "Incapaz de pasar un documento de un idioma a otro", True),
    (
        "No tengo aceso al calendario del usuario",
        "El usuario me pidió revisar sus citas de la semana, pero no tengo acceso a su calendario",
        True,
    ),
    ("No puedo escanear códigos QR", "Falta herramienta para leer códigos QR", True),
    # --- Spanish: different ---
    ("No puedo enviar correos electrónicos", "No puedo leer correos electrónicos", False),
    (
        "Falta herramienta para subir archivos a Dropbox",
        "Falta herramienta para descargar archivos de Dropbox",
        False,
    ),
    ("No puedo crear eventos en el calendario", "No puedo borrar eventos del calendario", False),
    ("No tengo acceso a los contactos", "No tengo acceso a las contraseñas guardadas", False),
    ("No puedo traducir documentos", "No puedo resumir documentos", False),
    (
        "No puedo reservar una mesa en un restaurante",
        "No puedo cancelar una reserva en un restaurante",
        False,
    ),
    ("No puedo seguir cuentas en Twitter", "No puedo dejar de seguir cuentas en Twitter", False),
    ("Incapaz de comprimir archivos", "Incapaz de descomprimir archivos", False),
    ("No puedo leer mensajes de voz", "No puedo enviar mensajes de voz", False),
    # --- German: same ---
    ("Kann keine E-Mails verschicken", "Mir fehlt ein Werkzeug zum Senden von Mails", True),
    (
        "Ich habe keinen Zugriff auf den Kalender des Nutzers",
        "Kein Zugang zum Terminkalender",
        True,
    ),
    ("Kann keine Fotos aufnehmen", "Keine Möglichkeit, mit der Kamera Bilder zu machen", True),
    (
        "Keine Integration zum Bestellen von Essen",
        "Der Nutzer wollte eine Pizza liefern lassen, "
        "aber ich kann keine Lieferdienste beauftragen",
        True,
    ),
    (
        "Kann keine Überweisungen tätigen",
        "Mir fehlt die Fähigkeit, Geld auf ein anderes Konto zu schicken",
        True,
    ),
    (
        "Kann keine Sprachnachrichten abspielen",
        "Audio-Nachrichten lassen sich nicht wiedergeben",
        True,
    ),
    (
        "Kann keine Erinnerungen setzen",
        "Fehlende Funktion: den Nutzer zu einem bestimmten Zeitpunkt an etwas erinnern",
        True,
    ),
    ("Kan keine PDF-Dateien lesen", "PDFs können nicht geöffnet und gelesen werden", True),
    (
        "Keine Möglichkeit, Webseiten in andere Sprachen zu übersetzen",
        "Ich kann Internetseiten nicht übersetzen",
        True,
    ),
    # --- German: different ---
    ("Kann keine E-Mails verschicken", "Kann keine E-Mails archivieren", False),
    ("Kann keine Dateien hochladen", "Kann keine Dateien herunterladen", False),
    (
        "Ich kann den Newsletter nicht abonnieren",
        "Ich kann den Newsletter nicht abbestellen",
        False,
    ),
    (
        "Kann keine Sprachnachrichten transkribieren",
        "Kann keine Sprachnachrichten aufnehmen",
        False,
    ),
    ("Kein Zugriff auf den Kalender", "Kein Zugriff auf das Adressbuch", False),
    ("Kann die Haustür nicht abschließen", "Kann die Haustür nicht aufschließen", False),
    ("Kann keine Termine vereinbaren", "Kann keine Termine absagen", False),
    ("Kann keine Bilder erzeugen", "Kann keine Bilder beschreiben", False),
    ("Kann keine Zugtickets kaufen", "Kann keine Zugtickets zurückgeben", False),
    # --- French: same ---
    ("Impossible d'envoyer des SMS", "Je ne peux pas expédier de textos", True),
    (
        "Pas d'accès au calendrier de l'utilisateur",
        "Je n'ai aucun moyen de consulter l'agenda de l'utilisateur",
        True,
    ),
    ("Je ne peux pas payer les factures", "Impossible de régler une facture en ligne", True),
    ("Impossible de lire les fichiers Word", "Pas de prise en charge des documents .docx", True),
    (
        "Je ne sais pas faire de captures d'écran",
        "Aucun outil pour photographier ce qui est affiché à l'écran",
        True,
    ),
    (
        "Impossible de suivre un colis",
        "L'utilisateur voulait savoir où en est la livraison de sa commande, "
        "mais je n'ai pas d'outil de suivi des envois",
        True,
    ),
    ("Pas d'outil pour traduire des pages web", "Je ne peux pas traduire un site internet", True),
    ("Je ne peux pas acceder a la caméra", "Aucun accès à la caméra de l'appareil", True),
    (
        "Impossible de régler le thermostat",
        "Je ne peux pas changer la température du chauffage",
        True,
    ),
    # --- French: different ---
    ("Impossible d'envoyer des SMS", "Impossible de lire les SMS", False),
    (
        "Je ne peux pas m'abonner à une chaîne YouTube",
        "Je ne peux pas me désabonner d'une chaîne YouTube",
        False,
    ),
    ("Impossible de chiffrer un fichier", "Impossible de déchiffrer un fichier", False),
    (
        "Je ne peux pas réserver une chambre d'hôtel",
        "Je ne peux pas annuler une chambre d'hôtel réservée",
        False,
    ),
    ("Pas d'accès aux photos de l'utilisateur", "Pas d'accès aux contacts de l'utilisateur", False),
    ("Impossible de transcrire une réunion", "Impossible de résumer une réunion", False),
    ("Je ne peux pas allumer la télévision", "Je ne peux pas allumer la radio", False),
    ("Aucun outil pour créer des présentations", "Aucun outil pour créer des sondages", False),
    ("Je ne peux pas lire les codes-barres", "Je ne peux pas générer de codes-barres", False),
    # --- Portuguese: same ---
    (
        "Não consigo enviar e-mails",
        "Falta ferramenta para mandar mensagens de correio eletrônico",
        True,
    ),
    (
        "Não tenho acesso ao calendário do utilizador",
        "Não consigo ver os compromissos marcados na agenda do utilizador",
        True,
    ),
    ("Não consigo pedir comida", "Sem integração com apps de entrega de refeições", True),
    ("Não consigo ligar para ninguém", "Falta a capacidade de fazer chamadas telefônicas", True),
    ("Não consigo abrir arquivos ZIP", "Incapaz de descompactar arquivos compactados", True),
    ("Não consigo ler QR codes", "Sem ferramenta para escanear códigos QR", True),
    ("Não consigo definir alarmes", "Não tenho como programar o despertador", True),
    (
        "Nao consigo traduzir documentos",
        "Falta ferramenta para traduzir um documento para outro idioma",
        True,
    ),
    (
        "O usuário pediu para agendar uma consulta no médico, "
        "mas não há integração para marcar consultas",
        "Não consigo marcar consultas médicas",
        True,
    ),
    # --- Portuguese: different ---
    ("Não consigo enviar e-mails", "Não consigo apagar e-mails", False),
    (
        "Não consigo seguir perfis no Instagram",
        "Não consigo deixar de seguir perfis no Instagram",
        False,
    ),
    (
        "Falta ferramenta para fazer upload de fotos",
        "Falta ferramenta para fazer download de fotos",
        False,
    ),
    ("Não consigo ligar o ar-condicionado", "Não consigo desligar o ar-condicionado", False),
    ("Não tenho acesso ao microfone", "Não tenho acesso ao GPS do dispositivo", False),
    ("Não consigo criar planilhas", "Não consigo criar apresentações", False),
    ("Não consigo marcar consultas médicas", "Não consigo cancelar consultas médicas", False),
    ("Não consigo gravar vídeos", "Não consigo editar vídeos", False),
    ("Não consigo ler arquivos PDF", "Não consigo assinar arquivos PDF", False),
    # --- Italian: same ---
    ("Non posso inviare email", "Manca uno strumento per spedire posta elettronica", True),
    (
        "Non ho accesso al calendario",
        "Impossibile consultare gli impegni in agenda dell'utente",
        True,
    ),
    ("Non riesco a scattare foto", "Nessun modo di usare la fotocamera per fare immagini", True),
    (
        "Non posso prenotare un tavolo al ristorante",
        "Manca un'integrazione per riservare un tavolo in un locale per cena",
        True,
    ),
    ("Non posso pagare le bollette", "Non ho modo di saldare le fatture di luce e gas", True),
    ("Non riesco a leggere file Excel", "Nessun supporto per aprire fogli di calcolo .xlsx", True),
    (
        "Non posso impostare promemoria",
        "Manca la funzione per ricordare qualcosa all'utente a un'ora stabilita",
        True,
    ),
    ("Non riesco a tradure messaggi vocali", "Impossibile tradurre le note audio", True),
    (
        "Non posso chiamare un taxi",
        "L'utente ha chiesto un taxi per la stazione, ma non c'è integrazione per prenotarne uno",
        True,
    ),
    # --- Italian: different ---
    ("Non posso inviare email", "Non posso leggere email", False),
    (
        "Non riesco a caricare file su Google Drive",
        "Non riesco a scaricare file da Google Drive",
        False,
    ),
    ("Non posso iscrivermi alla newsletter", "Non posso disiscrivermi dalla newsletter", False),
    ("Non riesco a trascrivere i messaggi vocali", "Non riesco a inviare messaggi vocali", False),
    ("Non ho accesso alla fotocamera", "Non ho accesso al microfono", False),
    ("Non posso accendere il riscaldamento", "Non posso accendere le luci", False),
    (
        "Non posso prenotare un tavolo al ristorante",
        "Non posso cancellare la prenotazione al ristorante",
        False,
    ),
    ("Non riesco a ruotare le immagini", "Non riesco a generare immagini", False),
    ("Non posso firmare documenti", "Non posso stampare documenti", False),
    # --- Dutch: same ---
    ("Kan geen e-mails versturen", "Geen tool om mails te verzenden", True),
    (
        "Ik heb geen toegang tot de agenda van de gebruiker",
        "Kan de kalender van de gebruiker niet inzien",
        True,
    ),
    ("Kan geen foto's maken", "Geen mogelijkheid om met de camera een kiekje te nemen", True),
    (
        "Kan geen boodschappen bestellen",
        "Geen koppeling met een supermarkt om levensmiddelen thuis te laten bezorgen",
        True,
    ),
    ("Kan geen geld overmaken", "Ontbrekende functie voor bankoverschrijvingen", True),
    ("Kan geen herinneringen instelen", "Geen mogelijkheid om herinneringen te zetten", True),
    # --- Dutch: different ---
    ("Kan geen e-mails versturen", "Kan geen e-mails verwijderen", False),
    ("Kan geen bestanden uploaden", "Kan geen bestanden downloaden", False),
    (
        "Kan me niet aanmelden voor de nieuwsbrief",
        "Kan me niet afmelden voor de nieuwsbrief",
        False,
    ),
    ("Geen toegang tot de camera", "Geen toegang tot de contactpersonen", False),
    ("Kan de verwarming niet aanzetten", "Kan de verwarming niet uitzetten", False),
    ("Kan geen spraakberichten transcriberen", "Kan geen spraakberichten opnemen", False),
    # --- Cross-language: same ---
    ("Cannot send emails", "No puedo enviar correos electrónicos", True),  # en-es
    (
        "No access to the user's calendar",
        "Ich habe keinen Zugriff auf den Kalender des Nutzers",
        True,
    ),  # en-de
    ("Unable to pay bills", "Impossible de payer les factures", True),  # en-fr
    ("Can't take photos", "Não consigo tirar fotos", True),  # en-pt
    ("No tool to call a taxi", "Non posso chiamare un taxi", True),  # en-it
    ("Cannot set reminders", "Kan geen herinneringen instellen", True),  # en-nl
    ("No puedo hacer transferencias bancarias", "Kann keine Überweisungen tätigen", True),  # es-de
    (
        "Falta herramienta para escanear códigos QR",
        "Je ne peux pas lire les codes QR",
        True,
    ),  # es-fr
    ("No puedo pedir comida a domicilio", "Não consigo pedir entrega de comida", True),  # es-pt
    ("No tengo acceso al micrófono", "Non ho accesso al microfono", True),  # es-it
    ("Kann keine Word-Dokumente öffnen", "Impossible de lire les fichiers Word", True),  # de-fr
    ("Kann keine Erinnerungen setzen", "Non posso impostare promemoria", True),  # de-it
    ("Kann keine Dateien hochladen", "Kan geen bestanden uploaden", True),  # de-nl
    ("Je ne peux pas traduire de documents", "Não consigo traduzir documentos", True),  # fr-pt
    ("Impossible de suivre un colis", "Non riesco a tracciare le spedizioni", True),  # fr-it
    ("Não consigo definir alarmes", "Non posso impostare la sveglia", True),  # pt-it
    ("I can't make phone calls", "Ich kann niemanden anrufen", True),  # en-de
    ("No puedo comprimir archivos en ZIP", "Kan geen bestanden zippen", True),  # es-nl
    ("Non riesco a leggere i file PDF", "Kan geen pdf-bestanden lezen", True),  # it-nl
    ("Je ne peux pas envoyer de SMS", "No puedo mandar mensajes de texto", True),  # fr-es
    # --- Cross-language: different ---
    ("Cannot send emails", "No puedo leer correos electrónicos", False),  # en-es
    ("Cannot upload files", "Kann keine Dateien herunterladen", False),  # en-de
    (
        "Can't subscribe to newsletters",
        "Je ne peux pas me désabonner des newsletters",
        False,
    ),  # en-fr
    ("No access to the camera", "Não tenho acesso ao microfone", False),  # en-pt
    (
        "Cannot book a restaurant table",
        "Non posso cancellare la prenotazione al ristorante",
        False,
    ),  # en-it
    ("Cannot turn on the heating", "Kan de verwarming niet uitzetten", False),  # en-nl
    (
        "No puedo transcribir mensajes de voz",
        "Kann keine Sprachnachrichten übersetzen",
        False,
    ),  # es-de
    ("No tengo acceso a los contactos", "Pas d'accès au calendrier", False),  # es-fr
    ("No puedo crear hojas de cálculo", "Não consigo criar apresentações", False),  # es-pt
    ("No puedo encender las luces", "Non posso accendere il riscaldamento", False),  # es-it
    ("Kann keine Dateien verschlüsseln", "Impossible de déchiffrer un fichier", False),  # de-fr
    ("Kann keine Bilder erzeugen", "Non riesco a ruotare le immagini", False),  # de-it
    ("Kann keine E-Mails versenden", "Kan geen e-mails verwijderen", False),  # de-nl
    ("Impossible de lire les codes-barres", "Não consigo gerar códigos de barras", False),  # fr-pt
    ("Je ne peux pas imprimer de documents", "Non posso firmare documenti", False),  # fr-it
    ("Não consigo gravar vídeos", "Non riesco a modificare video", False),  # pt-it
    ("Não consigo seguir perfis", "Kan geen profielen ontvolgen", False),  # pt-nl
    ("Je ne peux pas prendre de photos", "Kan geen foto's bewerken", False),  # fr-nl
    ("Kann keine Termine absagen", "Não consigo marcar compromissos", False),  # de-pt
    ("No tool to download attachments", "Falta herramienta para adjuntar archivos", False),  # en-es
]
