"""What the Activity's calls to another process carry fits in PostgreSQL's notes."""

from __future__ import annotations

from krigbot.adapter.forwarding import NOTE_BYTES, encode
from tests.support.desk_notes import steal_war_answers


def test_every_steal_war_look_and_choice_answer_fits_in_a_note() -> None:
    notes = list(steal_war_answers(seeds=6))
    assert len(notes) > 1000
    assert None not in notes  # a look too long would be no answer: "try again", for ever


def test_a_note_longer_than_postgres_takes_is_not_sent() -> None:
    assert encode({"text": "x" * NOTE_BYTES}) is None
    assert encode({"text": "ø" * (NOTE_BYTES // 2)}) is None  # bytes, not characters
    assert encode({"text": "x" * 100}) == '{"text":"' + "x" * 100 + '"}'
