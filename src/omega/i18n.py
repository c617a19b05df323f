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
}


def message(key: str, language: str = "English") -> str:
    """A fixed message in `language`, falling back to English."""
    table = MESSAGES[key]
    return table.get(language) or table["English"]
