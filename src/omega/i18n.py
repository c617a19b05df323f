"""User-facing fixed messages in Omega's eight languages (English is the fallback)."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "done": {
        "English": "Done.",
        "Spanish": "Hecho.",
        "Portuguese": "Feito.",
        "French": "C'est fait.",
        "German": "Erledigt.",
        "Italian": "Fatto.",
        "Dutch": "Klaar.",
        "Russian": "Готово.",
    },
    "voice_unavailable": {
        "English": "I can't listen to voice messages yet: no transcription service is set up. "
        "Could you type it? I've told my owner.",
        "Spanish": "Todavía no puedo escuchar mensajes de voz: no hay un servicio de "
        "transcripción configurado. ¿Podrías escribirlo? Ya se lo he dicho a mi dueño.",
        "Portuguese": "Ainda não consigo ouvir mensagens de voz: não há um serviço de "
        "transcrição configurado. Podes escrever? Já avisei o meu dono.",
        "French": "Je ne peux pas encore écouter les messages vocaux : aucun service de "
        "transcription n'est configuré. Pourrais-tu l'écrire ? J'ai prévenu mon propriétaire.",
        "German": "Sprachnachrichten kann ich noch nicht anhören: Es ist kein "
        "Transkriptionsdienst eingerichtet. Kannst du es tippen? Ich habe meinem Besitzer "
        "Bescheid gegeben.",
        "Italian": "Non posso ancora ascoltare i messaggi vocali: nessun servizio di "
        "trascrizione è configurato. Puoi scriverlo? Ho avvisato il mio proprietario.",
        "Dutch": "Ik kan nog geen spraakberichten beluisteren: er is geen "
        "transcriptiedienst ingesteld. Kun je het typen? Ik heb mijn eigenaar ingelicht.",
        "Russian": "Я пока не умею слушать голосовые сообщения: сервис расшифровки не "
        "настроен. Можешь написать текстом? Я сообщил владельцу.",
    },
    "voice_failed": {
        "English": "Sorry, I couldn't make out that voice message. Could you try again or type it?",
        "Spanish": "Lo siento, no pude entender ese mensaje de voz. ¿Lo intentas de nuevo o "
        "lo escribes?",
        "Portuguese": "Desculpa, não consegui perceber essa mensagem de voz. Tentas de novo ou "
        "escreves?",
        "French": "Désolé, je n'ai pas compris ce message vocal. Tu peux réessayer ou l'écrire ?",
        "German": "Entschuldige, ich konnte die Sprachnachricht nicht verstehen. Versuch es "
        "noch einmal oder tippe es.",
        "Italian": "Scusa, non sono riuscito a capire quel messaggio vocale. Riprovi o lo scrivi?",
        "Dutch": "Sorry, ik kon dat spraakbericht niet verstaan. Probeer het opnieuw of typ het.",
        "Russian": "Извини, я не разобрал это голосовое сообщение. Попробуй ещё раз или "
        "напиши текстом.",
    },
    "status_first": {
        "English": "Taking a moment...",
        "Spanish": "Dame un momento...",
        "Portuguese": "Só um momento...",
        "French": "Un instant...",
        "German": "Einen Moment...",
        "Italian": "Un momento...",
        "Dutch": "Even geduld...",
        "Russian": "Минутку...",
    },
    "status_repeat": {
        "English": "Still working...",
        "Spanish": "Sigo trabajando...",
        "Portuguese": "Ainda a trabalhar...",
        "French": "Je travaille encore...",
        "German": "Ich arbeite noch daran...",
        "Italian": "Ci sto ancora lavorando...",
        "Dutch": "Nog bezig...",
        "Russian": "Всё ещё работаю...",
    },
    "plan_header": {
        "English": "Plan:",
        "Spanish": "Plan:",
        "Portuguese": "Plano:",
        "French": "Plan :",
        "German": "Plan:",
        "Italian": "Piano:",
        "Dutch": "Plan:",
        "Russian": "План:",
    },
    "plan_step_done": {
        "English": "✓ Step {index}/{total}: {step}",
        "Spanish": "✓ Paso {index}/{total}: {step}",
        "Portuguese": "✓ Passo {index}/{total}: {step}",
        "French": "✓ Étape {index}/{total} : {step}",
        "German": "✓ Schritt {index}/{total}: {step}",
        "Italian": "✓ Passo {index}/{total}: {step}",
        "Dutch": "✓ Stap {index}/{total}: {step}",
        "Russian": "✓ Шаг {index}/{total}: {step}",
    },
    "plan_step_failed": {
        "English": "✗ Step {index}/{total} failed: {step}",
        "Spanish": "✗ Falló el paso {index}/{total}: {step}",
        "Portuguese": "✗ Falhou o passo {index}/{total}: {step}",
        "French": "✗ Échec de l'étape {index}/{total} : {step}",
        "German": "✗ Schritt {index}/{total} fehlgeschlagen: {step}",
        "Italian": "✗ Passo {index}/{total} non riuscito: {step}",
        "Dutch": "✗ Stap {index}/{total} mislukt: {step}",
        "Russian": "✗ Шаг {index}/{total} не удался: {step}",
    },
    "plan_held_back": {
        "English": "This needs {last} steps; I carry out at most {limit} at a time, so steps "
        "{first}-{last} are not done yet. Ask me to continue and I will do them:",
        "Spanish": "Esto requiere {last} pasos; hago como máximo {limit} de una vez, así que los "
        "pasos {first}-{last} aún no están hechos. Pídeme que continúe y los haré:",
        "Portuguese": "Isto precisa de {last} passos; faço no máximo {limit} de cada vez, por "
        "isso os passos {first}-{last} ainda não estão feitos. Pede-me para continuar e faço-os:",
        "French": "Cela demande {last} étapes ; j'en fais au plus {limit} à la fois, donc les "
        "étapes {first}-{last} ne sont pas encore faites. Demande-moi de continuer et je les "
        "ferai :",
        "German": "Das braucht {last} Schritte; ich erledige höchstens {limit} auf einmal, daher "
        "sind die Schritte {first}-{last} noch offen. Sag mir, dass ich weitermachen soll, dann "
        "erledige ich sie:",
        "Italian": "Servono {last} passi; ne eseguo al massimo {limit} alla volta, quindi i passi "
        "{first}-{last} non sono ancora fatti. Chiedimi di continuare e li farò:",
        "Dutch": "Dit vraagt {last} stappen; ik voer er hoogstens {limit} tegelijk uit, dus "
        "stappen {first}-{last} zijn nog niet gedaan. Vraag me door te gaan en ik doe ze:",
        "Russian": "Для этого нужно {last} шагов; за раз я выполняю не больше {limit}, поэтому "
        "шаги {first}-{last} ещё не сделаны. Попроси продолжить, и я их выполню:",
    },
    "marker_failed_schedule": {
        "English": "⚠ Not scheduled: “{what}”. I could not use that time; tell me the date and "
        "time again (for example “tomorrow at 9:00”).",
        "Spanish": "⚠ No programado: «{what}». No pude usar esa hora; dime otra vez la fecha y "
        "la hora (por ejemplo «mañana a las 9:00»).",
        "Portuguese": "⚠ Não agendado: «{what}». Não consegui usar essa hora; diz-me de novo a "
        "data e a hora (por exemplo «amanhã às 9:00»).",
        "French": "⚠ Non programmé : « {what} ». Je n'ai pas pu utiliser cette heure ; "
        "redonne-moi la date et l'heure (par exemple « demain à 9:00 »).",
        "German": "⚠ Nicht geplant: „{what}“. Mit dieser Zeitangabe konnte ich nichts anfangen; "
        "nenn mir Datum und Uhrzeit bitte noch einmal (zum Beispiel „morgen um 9:00“).",
        "Italian": "⚠ Non programmato: «{what}». Non ho potuto usare quell'orario; dimmi di "
        "nuovo data e ora (per esempio «domani alle 9:00»).",
        "Dutch": "⚠ Niet ingepland: „{what}”. Met die tijd kon ik niets; geef me de datum en "
        "tijd nog eens (bijvoorbeeld „morgen om 9:00”).",
        "Russian": "⚠ Не запланировано: «{what}». Я не смог использовать это время; назови "
        "дату и время ещё раз (например, «завтра в 9:00»).",
    },
    "marker_failed_task": {
        "English": "⚠ The task “{what}” was not changed.",
        "Spanish": "⚠ La tarea «{what}» no se ha cambiado.",
        "Portuguese": "⚠ A tarefa «{what}» não foi alterada.",
        "French": "⚠ La tâche « {what} » n'a pas été modifiée.",
        "German": "⚠ Die Aufgabe „{what}“ wurde nicht geändert.",
        "Italian": "⚠ L'attività «{what}» non è stata modificata.",
        "Dutch": "⚠ De taak „{what}” is niet gewijzigd.",
        "Russian": "⚠ Задача «{what}» не изменена.",
    },
    "marker_failed_other": {
        "English": "⚠ Something I meant to do did not happen: {what}.",
        "Spanish": "⚠ Algo que quería hacer no se ha hecho: {what}.",
        "Portuguese": "⚠ Algo que eu queria fazer não aconteceu: {what}.",
        "French": "⚠ Une chose que je voulais faire n'a pas eu lieu : {what}.",
        "German": "⚠ Etwas, das ich tun wollte, ist nicht passiert: {what}.",
        "Italian": "⚠ Una cosa che volevo fare non è avvenuta: {what}.",
        "Dutch": "⚠ Iets wat ik wilde doen is niet gebeurd: {what}.",
        "Russian": "⚠ Кое-что, что я собирался сделать, не произошло: {what}.",
    },
    "images_unseen": {
        "English": "(Note: the model I use now cannot see images, so I could not look at your "
        "picture; I kept it as a file for my tools.)",
        "Spanish": "(Nota: el modelo que uso ahora no puede ver imágenes, así que no he podido "
        "mirar tu foto; la he guardado como archivo para mis herramientas.)",
        "Portuguese": "(Nota: o modelo que uso agora não consegue ver imagens, por isso não "
        "pude olhar para a tua foto; guardei-a como ficheiro para as minhas ferramentas.)",
        "French": "(Note : le modèle que j'utilise ne voit pas les images, je n'ai donc pas pu "
        "regarder ta photo ; je l'ai gardée comme fichier pour mes outils.)",
        "German": "(Hinweis: Das Modell, das ich gerade nutze, kann keine Bilder sehen, daher "
        "konnte ich dein Bild nicht ansehen; ich habe es als Datei für meine Werkzeuge "
        "behalten.)",
        "Italian": "(Nota: il modello che uso ora non vede le immagini, quindi non ho potuto "
        "guardare la tua foto; l'ho tenuta come file per i miei strumenti.)",
        "Dutch": "(Let op: het model dat ik nu gebruik kan geen afbeeldingen zien, dus ik kon "
        "je foto niet bekijken; ik heb hem als bestand bewaard voor mijn hulpmiddelen.)",
        "Russian": "(Примечание: модель, которую я сейчас использую, не видит изображения, "
        "поэтому я не смог посмотреть твою картинку; я сохранил её как файл для своих "
        "инструментов.)",
    },
    "busy_ack": {
        "English": "Got it, I'll get to this next.",
        "Spanish": "Entendido, me ocupo de esto a continuación.",
        "Portuguese": "Entendido, trato disto a seguir.",
        "French": "Bien reçu, je m'en occupe juste après.",
        "German": "Verstanden, ich kümmere mich als Nächstes darum.",
        "Italian": "Ricevuto, me ne occupo subito dopo.",
        "Dutch": "Begrepen, ik pak dit hierna op.",
        "Russian": "Понял, займусь этим следующим.",
    },
    "error_timeout": {
        "English": "Sorry, that took too long and I had to stop. Please try again.",
        "Spanish": "Lo siento, tardó demasiado y tuve que parar. Inténtalo de nuevo.",
        "Portuguese": "Desculpe, demorou demasiado e tive de parar. Tente novamente.",
        "French": "Désolé, cela a pris trop de temps et j'ai dû arrêter. Réessayez.",
        "German": "Entschuldige, das hat zu lange gedauert. Bitte versuch es noch einmal.",
        "Italian": "Scusa, ci è voluto troppo e ho dovuto fermarmi. Riprova.",
        "Dutch": "Sorry, dat duurde te lang en ik moest stoppen. Probeer het opnieuw.",
        "Russian": "Извини, это заняло слишком много времени. Попробуй ещё раз.",
    },
    "error_generic": {
        "English": "Something went wrong on my side. Please try again.",
        "Spanish": "Algo salió mal por mi parte. Inténtalo de nuevo.",
        "Portuguese": "Algo correu mal do meu lado. Tente novamente.",
        "French": "Un problème est survenu de mon côté. Réessayez.",
        "German": "Bei mir ist etwas schiefgelaufen. Bitte versuch es noch einmal.",
        "Italian": "Qualcosa è andato storto da parte mia. Riprova.",
        "Dutch": "Er ging iets mis aan mijn kant. Probeer het opnieuw.",
        "Russian": "Что-то пошло не так с моей стороны. Попробуй ещё раз.",
    },
    "error_unavailable": {
        "English": "My AI provider is not available right now. Please try again later.",
        "Spanish": "Mi proveedor de IA no está disponible ahora mismo.",
        "Portuguese": "O meu fornecedor de IA não está disponível neste momento.",
        "French": "Mon fournisseur d'IA n'est pas disponible pour le moment.",
        "German": "Mein KI-Anbieter ist gerade nicht erreichbar.",
        "Italian": "Il mio fornitore di IA non è disponibile al momento.",
        "Dutch": "Mijn AI-aanbieder is nu niet beschikbaar.",
        "Russian": "Мой ИИ-провайдер сейчас недоступен.",
    },
    "error_rate_limit": {
        "English": "I'm being rate-limited right now. Please try again in a minute.",
        "Spanish": "Estoy limitado por exceso de peticiones. Inténtalo en un minuto.",
        "Portuguese": "Estou limitado por excesso de pedidos. Tente daqui a um minuto.",
        "French": "Je suis limité en débit pour le moment. Réessayez dans une minute.",
        "German": "Ich werde gerade gedrosselt. Bitte versuch es in einer Minute erneut.",
        "Italian": "Sono limitato al momento. Riprova tra un minuto.",
        "Dutch": "Ik word nu beperkt. Probeer het over een minuut opnieuw.",
        "Russian": "Сейчас слишком много запросов. Попробуй через минуту.",
    },
    # Replies stop when today's spending cap ([limits] daily_usd) is reached.
    "error_spending_cap": {
        "English": "I've reached the daily spending limit my owner set for my AI use, so I "
        "can't answer right now. I can again after midnight UTC.",
        "Spanish": "He alcanzado el límite diario de gasto que mi dueño fijó para mi uso de IA, "
        "así que ahora no puedo responder. Podré de nuevo después de la medianoche UTC.",
        "Portuguese": "Atingi o limite diário de gastos que o meu dono definiu para o meu uso de "
        "IA, por isso não posso responder agora. Poderei de novo depois da meia-noite UTC.",
        "French": "J'ai atteint la limite de dépenses quotidienne que mon propriétaire a fixée "
        "pour mon usage de l'IA : je ne peux pas répondre pour l'instant. Ce sera de nouveau "
        "possible après minuit UTC.",
        "German": "Ich habe das tägliche Ausgabenlimit erreicht, das mein Besitzer für meine "
        "KI-Nutzung festgelegt hat, und kann gerade nicht antworten. Nach Mitternacht UTC "
        "geht es wieder.",
        "Italian": "Ho raggiunto il limite di spesa giornaliero che il mio proprietario ha "
        "fissato per il mio uso dell'IA, quindi ora non posso rispondere. Potrò di nuovo dopo "
        "la mezzanotte UTC.",
        "Dutch": "Ik heb de dagelijkse uitgavenlimiet bereikt die mijn eigenaar voor mijn "
        "AI-gebruik heeft ingesteld, dus ik kan nu niet antwoorden. Na middernacht UTC kan het "
        "weer.",
        "Russian": "Я достиг дневного лимита расходов на ИИ, который установил мой владелец, "
        "поэтому сейчас не могу ответить. Смогу снова после полуночи по UTC.",
    },
    # Refused only because the calls in flight may still reach the cap: they settle soon.
    "error_spending_cap_settling": {
        "English": "The requests I'm working on right now may use up the daily spending limit "
        "my owner set, so I can't take yours yet. Please try again in a moment.",
        "Spanish": "Las peticiones que estoy atendiendo ahora podrían agotar el límite diario "
        "de gasto que fijó mi dueño, así que aún no puedo con la tuya. Inténtalo en un momento.",
        "Portuguese": "Os pedidos que estou a tratar agora podem esgotar o limite diário de "
        "gastos definido pelo meu dono, por isso ainda não posso tratar o teu. Tenta daqui a "
        "um momento.",
        "French": "Les demandes que je traite en ce moment pourraient épuiser la limite de "
        "dépenses quotidienne fixée par mon propriétaire : je ne peux pas encore prendre la "
        "tienne. Réessaie dans un instant.",
        "German": "Die Anfragen, an denen ich gerade arbeite, könnten das tägliche "
        "Ausgabenlimit meines Besitzers aufbrauchen, daher kann ich deine noch nicht annehmen. "
        "Bitte versuch es gleich noch einmal.",
        "Italian": "Le richieste che sto gestendo ora potrebbero esaurire il limite di spesa "
        "giornaliero fissato dal mio proprietario, quindi non posso ancora prendere la tua. "
        "Riprova tra un momento.",
        "Dutch": "De verzoeken waar ik nu mee bezig ben kunnen de dagelijkse uitgavenlimiet "
        "van mijn eigenaar opmaken, dus ik kan het jouwe nog niet aannemen. Probeer het zo "
        "meteen opnieuw.",
        "Russian": "Запросы, которые я сейчас обрабатываю, могут исчерпать дневной лимит "
        "расходов, установленный владельцем, поэтому твой я пока не могу взять. Попробуй "
        "через минутку.",
    },
    "error_poison": {
        "English": "Sorry, I couldn't handle your message: it kept making me fail. "
        "My owner has been told. Could you rephrase it?",
        "Spanish": "Lo siento, no pude procesar tu mensaje: me hacía fallar una y otra vez. "
        "Mi dueño ya lo sabe. ¿Puedes decirlo de otra forma?",
        "Portuguese": "Desculpe, não consegui tratar a sua mensagem: fazia-me falhar "
        "repetidamente. O meu dono já foi avisado. Pode reformulá-la?",
        "French": "Désolé, je n'ai pas pu traiter votre message : il me faisait échouer à "
        "chaque fois. Mon propriétaire est prévenu. Pouvez-vous le reformuler ?",
        "German": "Entschuldige, ich konnte deine Nachricht nicht verarbeiten: Sie hat mich "
        "immer wieder abstürzen lassen. Mein Besitzer weiß Bescheid. Magst du sie umformulieren?",
        "Italian": "Scusa, non sono riuscito a gestire il tuo messaggio: mi faceva fallire ogni "
        "volta. Il mio proprietario è stato avvisato. Puoi riformularlo?",
        "Dutch": "Sorry, ik kon je bericht niet verwerken: het liet me steeds vastlopen. "
        "Mijn eigenaar is ingelicht. Kun je het anders formuleren?",
        "Russian": "Извини, я не смог обработать твоё сообщение: оно снова и снова вызывало "
        "сбой. Мой владелец уже знает. Можешь сформулировать иначе?",
    },
    # {kept} and {total}: character counts.
    "message_cut": {
        "English": "Your message was too long: I read only its first {kept} of {total} "
        "characters. Please send the rest in smaller parts.",
        "Spanish": "Tu mensaje era demasiado largo: solo leí los primeros {kept} de {total} "
        "caracteres. Envía el resto en partes más pequeñas.",
        "Portuguese": "A sua mensagem era demasiado longa: li apenas os primeiros {kept} de "
        "{total} caracteres. Envie o resto em partes mais pequenas.",
        "French": "Votre message était trop long : je n'en ai lu que les {kept} premiers "
        "caractères sur {total}. Envoyez la suite en plusieurs parties.",
        "German": "Deine Nachricht war zu lang: Ich habe nur die ersten {kept} von {total} "
        "Zeichen gelesen. Schick den Rest bitte in kleineren Teilen.",
        "Italian": "Il tuo messaggio era troppo lungo: ho letto solo i primi {kept} di {total} "
        "caratteri. Invia il resto in parti più piccole.",
        "Dutch": "Je bericht was te lang: ik heb alleen de eerste {kept} van {total} tekens "
        "gelezen. Stuur de rest in kleinere delen.",
        "Russian": "Сообщение слишком длинное: я прочитал только первые {kept} из {total} "
        "символов. Пришли остальное частями.",
    },
    # {name}: the file's name (or kind); {size} and {limit}: sizes such as "12.3 MB".
    "attachment_refused": {
        "English": "I did not take your file {name}: it is {size}, and the limit is {limit}.",
        "Spanish": "No acepté tu archivo {name}: ocupa {size} y el límite es {limit}.",
        "Portuguese": "Não aceitei o seu ficheiro {name}: tem {size} e o limite é {limit}.",
        "French": "Je n'ai pas pris votre fichier {name} : il fait {size}, la limite est {limit}.",
        "German": "Deine Datei {name} habe ich nicht angenommen: Sie ist {size} groß, die "
        "Grenze liegt bei {limit}.",
        "Italian": "Non ho accettato il tuo file {name}: è di {size} e il limite è {limit}.",
        "Dutch": "Ik heb je bestand {name} niet aangenomen: het is {size} en de grens is {limit}.",
        "Russian": "Я не принял твой файл {name}: его размер {size}, а предел — {limit}.",
    },
    "pairing_code": {
        "English": "I only talk with people my owner approved. Your code is {code}: send it to "
        "my owner, who can let you in. It is valid for one hour.",
        "Spanish": "Solo hablo con personas que mi dueño ha aprobado. Tu código es {code}: "
        "envíaselo a mi dueño, que puede darte acceso. Vale durante una hora.",
        "Portuguese": "Só falo com pessoas aprovadas pelo meu dono. O teu código é {code}: "
        "envia-o ao meu dono, que te pode deixar entrar. É válido durante uma hora.",
        "French": "Je ne parle qu'aux personnes que mon propriétaire a approuvées. Ton code est "
        "{code} : envoie-le à mon propriétaire, qui peut te donner accès. Il est valable une "
        "heure.",
        "German": "Ich spreche nur mit Menschen, die mein Besitzer freigegeben hat. Dein Code "
        "ist {code}: Schick ihn meinem Besitzer, der dich freischalten kann. Er gilt eine Stunde.",
        "Italian": "Parlo solo con persone approvate dal mio proprietario. Il tuo codice è "
        "{code}: mandalo al mio proprietario, che può farti entrare. Vale un'ora.",
        "Dutch": "Ik praat alleen met mensen die mijn eigenaar heeft goedgekeurd. Je code is "
        "{code}: stuur hem naar mijn eigenaar, die je kan toelaten. Hij is een uur geldig.",
        "Russian": "Я общаюсь только с теми, кого одобрил мой владелец. Твой код: {code}. "
        "Отправь его моему владельцу, он может тебя допустить. Код действует один час.",
    },
    "pairing_waiting": {
        "English": "Your request is waiting for my owner: send them the code you were given.",
        "Spanish": "Tu solicitud espera a mi dueño: envíale el código que recibiste.",
        "Portuguese": "O teu pedido está à espera do meu dono: envia-lhe o código que recebeste.",
        "French": "Ta demande attend mon propriétaire : envoie-lui le code que tu as reçu.",
        "German": "Deine Anfrage wartet auf meinen Besitzer: Schick ihm den Code, den du "
        "bekommen hast.",
        "Italian": "La tua richiesta aspetta il mio proprietario: mandagli il codice che hai "
        "ricevuto.",
        "Dutch": "Je verzoek wacht op mijn eigenaar: stuur hem de code die je kreeg.",
        "Russian": "Твой запрос ждёт моего владельца: отправь ему полученный код.",
    },
    "pairing_approved": {
        "English": "Good news: my owner approved you. You can talk to me now.",
        "Spanish": "Buenas noticias: mi dueño te ha aprobado. Ya puedes hablar conmigo.",
        "Portuguese": "Boas notícias: o meu dono aprovou-te. Já podes falar comigo.",
        "French": "Bonne nouvelle : mon propriétaire t'a approuvé. Tu peux me parler maintenant.",
        "German": "Gute Nachricht: Mein Besitzer hat dich freigegeben. Du kannst jetzt mit mir "
        "sprechen.",
        "Italian": "Buone notizie: il mio proprietario ti ha approvato. Ora puoi parlarmi.",
        "Dutch": "Goed nieuws: mijn eigenaar heeft je goedgekeurd. Je kunt nu met me praten.",
        "Russian": "Хорошие новости: владелец тебя одобрил. Теперь можешь писать мне.",
    },
}


def message(key: str, language: str = "English", **values: object) -> str:
    """A fixed message in `language`, falling back to English; `values` fill its {fields}."""
    table = MESSAGES[key]
    text = table.get(language) or table["English"]
    return text.format(**values) if values else text
