"""Who may act on a game now: one check for every command and button."""

from __future__ import annotations

import pytest

from krigbot.engine import Game, Rules
from krigbot.sessions import Actor, Refusal, authorize, may_cancel, may_moderate
from tests.support.sessions import ALICE, BOB, CAROL, ONLOOKER, row


def refused(key: str) -> pytest.RaisesExc[Refusal]:
    """Expect a refusal with this catalog key."""
    return pytest.raises(Refusal, match=f"^{key}$")


def test_a_player_of_the_running_game_may_act_in_their_seat() -> None:
    game = Game.new(Rules.preset("standard"), 1)

    seated = authorize((row(), game), BOB, game_id=7)

    assert (seated.row.id, seated.game, seated.seat) == (7, game, 1)


def test_onlookers_challenges_and_other_games_are_refused_with_their_reason() -> None:
    game = Game.new(Rules.preset("standard"), 1)

    with refused("err.no_game"):
        authorize(None, ALICE)
    with refused("err.game_over"):
        authorize(None, ALICE, game_id=7)
    with refused("err.game_over"):
        authorize((row(), game), ALICE, game_id=8)
    with refused("err.not_player"):
        authorize((row(), game), ONLOOKER)
    with refused("err.not_running"):
        authorize((row("challenge"), None), BOB)


def test_a_player_out_of_the_game_may_not_play_on() -> None:
    game = Game.new(Rules.preset("standard", players=3), 1)
    game.forfeit(2)

    seated = authorize((row(players=(ALICE, BOB, CAROL)), game), CAROL)

    with refused("err.out_of_game"):
        seated.still_in()


def test_only_moderators_cancel_a_game_and_the_challenger_only_their_challenge() -> None:
    may_cancel(row(), Actor(ONLOOKER, moderator=True))
    may_cancel(row("challenge"), Actor(ALICE))
    with refused("err.cancel_denied"):
        may_cancel(row(), Actor(ALICE))
    with refused("err.cancel_denied"):
        may_cancel(row("challenge"), Actor(BOB))


def test_only_moderators_change_the_servers_settings() -> None:
    may_moderate(Actor(ONLOOKER, moderator=True))
    with refused("settings.denied"):
        may_moderate(Actor(ALICE))
