"""Autoplay and finish requests as the session layer keeps them, in the JSON databases hold."""

from __future__ import annotations

from krigbot.engine import Game, Rules
from krigbot.sessions import Autoplay, FinishRequest
from tests.support.sessions import ALICE, BOB, CAROL, row


def test_autoplay_reads_and_writes_the_stored_json_unchanged() -> None:
    stored = {"state": "paused", "message": 123, "speed": "fast", "by": "Alice"}

    autoplay = Autoplay.of({"autoplay": stored})

    assert autoplay == Autoplay("paused", 123, "fast", "Alice")
    assert autoplay.to_dict() == stored


def test_no_autoplay_or_a_stopped_one_reads_as_none() -> None:
    assert Autoplay.of({}) is None
    assert Autoplay.of({"autoplay": None}) is None
    assert Autoplay.of({"autoplay": {"message": 5}}) is None


def test_a_finish_request_reads_and_writes_the_stored_json_unchanged() -> None:
    stored = {"by": ALICE, "agreed": [ALICE, BOB]}

    request = FinishRequest.of({"finish": stored})

    assert request == FinishRequest(ALICE, (ALICE, BOB))
    assert request.to_dict() == stored
    assert FinishRequest.of({"finish": None}) is None


def test_a_finish_request_waits_only_for_players_still_in_the_game() -> None:
    game = Game.new(Rules.preset("standard", players=3), 1)
    game.forfeit(2)

    request = FinishRequest(ALICE, (ALICE,))

    assert request.waiting(row(players=(ALICE, BOB, CAROL)), game) == [BOB]
