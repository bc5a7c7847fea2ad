"""The house rule ``lowest_wins`` (Peace, rules §1) at the table: the lower card wins, it says so.

What every house rule owes (/krig start offering and stating it, Steal War refusing it, /krig
rules listing it) is in tests/cogs/test_house_rules.py.
"""

from __future__ import annotations

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.i18n import t
from krigbot.sessions.challenges import Challenges
from krigbot.sessions.results import Refusal
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    ChosenSeeds,
    challenge_message,
    find_seed,
    flip,
    game_id_of,
    game_row,
    press,
    replay,
)

HOUSE = Rules.preset("standard", lowest_wins=True)
LOW_SEED = find_seed(HOUSE, lambda played: not played.is_war and played.won_by == "lowest_wins")
"""A deal whose first battle is won, without a war, by the lower card."""
LOWEST = "🕊️ " + t("nb", "table.lowest_wins")


async def test_with_the_house_rule_the_lower_card_wins_and_the_table_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(LOW_SEED)
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, house_rule="lowest_wins"
    )
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    game, (played,) = replay(HOUSE, LOW_SEED, 1)
    (low, high) = sorted(played.battle, key=lambda seat_card: seat_card[1] >> 2)
    assert played.winner == low[0] != high[0]
    (embed,) = answer.embeds
    assert LOWEST in embed["description"]
    row = await game_row(bot, game_id)
    assert row.state == game.to_dict()


async def test_without_the_house_rule_the_higher_card_wins_and_nothing_is_said(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(LOW_SEED)
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    _, (played,) = replay(Rules.preset("standard"), LOW_SEED, 1)
    peace_winner = replay(HOUSE, LOW_SEED, 1)[1][0].winner
    assert played.winner != peace_winner  # the same deal: the higher card wins this time
    assert LOWEST not in answer.embeds[0]["description"]


def test_a_challenge_asking_for_peace_and_two_beats_ace_is_refused_naming_both() -> None:
    # /krig start offers one house rule at a time; a challenge built with both is refused.
    with pytest.raises(Refusal) as caught:
        Challenges._rules("standard", 2, {"lowest_wins": True, "two_beats_ace": True})
    assert caught.value.key == "err.bad_option"
    reason = caught.value.fields["reason"]
    assert "two_beats_ace" in reason
    assert "lowest_wins" in reason
