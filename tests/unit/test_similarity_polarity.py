"""Issue 39's last rules for `same_meaning`, each with sentences of its own (none from the
labelled or held-out sets): opposite actions told by a particle, a prefix or a polarity word
(similarity_polarity.py), "stop doing X" as an undoing, Russian, the concepts that named
together name another (similarity_combined.py), and the conflict that keeps the model from
judging an action the lexicon cannot read (similarity_conflicts.py)."""

from __future__ import annotations

import pytest

from omega.evolution.meaning import same_meaning
from omega.evolution.meaning.similarity_conflicts import conflict
from omega.evolution.meaning.similarity_polarity import polarity, reversed_action
from omega.evolution.meaning.similarity_words import concepts, fold

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def apart(one: str, other: str) -> bool:
    """Neither the lexical method nor the hybrid merges the two texts."""
    return not same_meaning(one, other, model=False) and not same_meaning(one, other)


def test_a_particle_or_prefix_that_reverses_the_verb_keeps_two_gaps_apart() -> None:
    for one, other in (
        ("Ik kan de ventilator niet inschakelen", "Ik kan de ventilator niet uitschakelen"),
        ("Ik kan de radio niet aandoen", "Ik kan de radio niet uitdoen"),
        ("Kann die Rollläden nicht aufmachen", "Kann die Rollläden nicht zumachen"),
        ("Kann das Geschenk nicht einpacken", "Kann das Geschenk nicht auspacken"),
        ("Не могу подключить принтер", "Не могу отключить принтер"),
        ("No puedo desinstalar la aplicación", "No puedo instalar la aplicación"),
        ("Non riesco a caricare le foto sul cloud", "Non riesco a scaricare le foto dal cloud"),
        ("Não consigo desativar as notificações", "Não consigo ativar as notificações"),
        ("Cannot disconnect the speaker", "Cannot connect the speaker"),
    ):
        assert reversed_action(one, other) and reversed_action(other, one), (one, other)
        assert apart(one, other), (one, other)
    # the same verb, or a word that only begins alike, is not reversed
    assert not reversed_action("Kann das Licht nicht anschalten", "Kann das Licht nicht steuern")
    assert not reversed_action("Cannot play videos", "Cannot post videos")
    assert same_meaning("Ik kan het licht niet inschakelen", "Cannot turn the light on")


def test_polarity_words_oppose_switching_on_and_off_joining_and_leaving_across_languages() -> None:
    assert polarity("Cannot switch the fan on") == {"power+"}
    assert polarity("Kann das WLAN nicht ausschalten") == {"power-"}
    assert polarity("No puedo encender ni apagar el ventilador") == {"power+", "power-"}
    assert polarity("Kan me niet uitschrijven van de mailinglijst") == {"member-"}
    for one, other in (
        ("Cannot switch the fan on", "No puedo apagar el ventilador"),
        ("Cannot turn the light on", "Kan het licht niet uitschakelen"),  # both: control, light
        ("Не могу включить свет", "Cannot switch the light off"),
        ("Ik kan de ventilator niet aanzetten", "Cannot shut off the fan"),
        ("Unable to enable dark mode", "Kann den Dunkelmodus nicht deaktivieren"),
        ("Не могу включить вайфай", "Cannot turn off the wifi"),
        ("Cannot sign up for the mailing list", "Kan me niet uitschrijven van de mailinglijst"),
        ("Не могу подписаться на канал", "Cannot unsubscribe from the channel"),
    ):
        assert reversed_action(one, other), (one, other)
        assert apart(one, other), (one, other)
    # a text that says both ways, or neither, is opposed to neither
    assert same_meaning("Cannot switch the fan on or off", "Cannot control the fan")
    assert same_meaning("Kann das Licht nicht anschalten", "Kann das Licht nicht steuern")


def test_stop_doing_x_is_not_doing_x() -> None:
    for one, other in (
        (
            "No puedo dejar de recibir correos de publicidad",
            "No puedo recibir correos de publicidad",
        ),
        (
            "Não consigo parar de compartilhar a localização",
            "Não consigo compartilhar a localização",
        ),
        (
            "Non riesco a smettere di condividere la posizione",
            "Non riesco a condividere la posizione",
        ),
        ("Ik kan niet stoppen met het delen van mijn locatie", "Ik kan mijn locatie niet delen"),
        ("Je ne peux pas cesser de partager ma position", "Je ne peux pas partager ma position"),
        ("Не могу перестать получать уведомления", "Не могу получать уведомления"),
    ):
        assert "stop" in concepts(one) and "stop" not in concepts(other), (one, other)
        assert apart(one, other), (one, other)


def test_russian_is_read_stemmed_and_mapped_to_the_lexicon() -> None:
    assert fold("Ещё не могу включить её") == "еще не могу включить ее"
    assert concepts("Не могу отправить письмо") == {"send", "email"}
    for one, other in (
        ("Не могу отправить письмо", "Cannot send emails"),
        ("Нет доступа к календарю", "No access to the calendar"),
        ("Не могу забронировать отель", "Cannot book hotels"),
        ("Не могу распечатать документ", "Impossible d'imprimer des documents"),
        ("Не могу перевести текст", "Cannot translate texts"),
        ("Не могу управлять умным домом", "Cannot control the smart home"),
        ("Не могу загрузить файлы в облако", "Cannot upload files to the cloud"),
        # of money, a translation is a transfer; of an alarm, an installation is setting it
        ("Не могу перевести деньги", "Cannot make bank transfers"),
        ("Не могу установить будильник", "Cannot set an alarm"),
    ):
        assert same_meaning(one, other, model=False), (one, other)
    assert apart("Не могу отправить письмо", "Не могу прочитать письмо")
    assert apart("Не могу оплатить счет", "Не могу распечатать счет")
    assert apart("Не могу телепортироваться", "Нет телепатии")


def test_concepts_named_together_name_another() -> None:
    for one, other in (
        ("Cannot open RAR archives", "Unable to decompress RAR files"),  # unpacking
        ("Cannot take pictures", "Kann keine Bilder aufnehmen"),  # the camera's
        ("Cannot capture the screen", "No screenshot tool"),  # a screenshot
        ("Cannot order takeout", "No meal delivery integration"),  # food delivered: bought
        ("Não consigo enviar dinheiro para outra conta", "Cannot make bank transfers"),
        ("Je ne peux pas appeler un taxi", "Cannot book a taxi"),  # a taxi called: booked
        ("Kann kein Taxi bestellen", "No taxi booking"),
        ("Cannot listen to audio messages", "Cannot play voice messages"),
        ("Cannot get the weather forecast", "No weather information"),
        ("Cannot read my contact list", "Cannot read the address book"),
        ("Cannot send texts", "Cannot send SMS"),
    ):
        assert same_meaning(one, other, model=False), (one, other)
    assert apart("Cannot send texts", "Cannot read texts")
    assert apart("Cannot open RAR archives", "Cannot create RAR archives")


def test_the_model_may_not_judge_an_action_the_lexicon_cannot_read() -> None:
    """One names an action the other lacks, and the other names none but an unknown word."""
    assert conflict(
        concepts("Kann keine Rechnungen bezahlen"), concepts("Kann keine Rechnungen stempeln")
    ) == ("action unread")
    assert conflict(
        concepts("Non riesco a condividere i video"), concepts("Non riesco a capovolgere i video")
    ) == ("action unread")
    # a generic verb, or no unknown word, leaves it to the other rules
    assert conflict(concepts("No access to the web"), concepts("Cannot surf the web")) is None


def test_things_carried_the_other_way_are_another_gap() -> None:
    for one, other in (
        ("Cannot convert PDF to Word", "Cannot convert Word to PDF"),
        ("Kann PDF nicht in Word umwandeln", "No puedo convertir Word a PDF"),
        (
            "Cannot move files from Dropbox to Google Drive",
            "Cannot move files from Google Drive to Dropbox",
        ),
        (
            "Не могу экспортировать контакты из Outlook в Gmail",
            "Cannot export contacts from Gmail to Outlook",
        ),
    ):
        assert reversed_action(one, other), (one, other)
        assert apart(one, other), (one, other)
    assert same_meaning("Kann PDF nicht in Word umwandeln", "Cannot convert PDF to Word")


def test_make_or_get_stands_for_no_action_beside_the_actions_both_name() -> None:
    """ "make calls" is calling, not recording them; "see photos sent" may be describing them."""
    assert conflict(concepts("Cannot record calls"), concepts("Cannot make calls")) == (
        "more than making"
    )
    assert (
        conflict(concepts("Cannot see the photos sent"), concepts("Cannot describe sent photos"))
        is None
    )
    assert conflict(
        concepts("Cannot check sent emails"), concepts("Cannot translate sent emails")
    ) == ("more than a look")
