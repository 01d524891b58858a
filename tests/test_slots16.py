"""slots-16's readings of a message by itself (the conversations are in evals/slots-16-*.jsonl)."""

from supportdesk.models.offline import slots
from supportdesk.models.offline.skills.money.intents import _intents_in


def test_a_second_one_counts_again_not_a_place():
    assert slots.place_named("team plan payment left on march 10 plus a second one on march 11") is None
    assert slots.place_named("i want the second one") is not None


def test_a_disclaimer_takes_back_only_its_own_clause():
    assert _intents_in("no wait, don't cancel. just move me down to starter instead") == {"plan"}
    assert not _intents_in("I'm not asking you to change anything, I just need Team's monthly price") & {"plan", "cancel"}


def test_a_card_told_by_brand_and_last_four_is_the_card_to_put_on_file():
    assert "payment" in _intents_in("the card on file is getting replaced, bill my amex ending 3007 going forward")
    assert "payment" not in _intents_in("which card do you have on file for me?")
