"""The house rule ``two_beats_ace`` (rules §1) at the table: a 2 takes an ace, and it says so.

What every house rule owes (/krig start offering and stating it, Steal War refusing it, /krig
rules listing it) is in tests/cogs/test_house_rules.py.
"""

from __future__ import annotations

from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.i18n import t
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

HOUSE = Rules.preset("standard", two_beats_ace=True)
UPSET_SEED = find_seed(HOUSE, lambda played: played.won_by == "two_beats_ace" and not played.is_war)
"""A deal whose first battle is a 2 against an ace."""
UPSET = "✌️ " + t("nb", "table.two_beats_ace")


async def test_with_the_house_rule_the_2_takes_the_ace_and_the_table_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(UPSET_SEED)
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, house_rule="two_beats_ace"
    )
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    game, (played,) = replay(HOUSE, UPSET_SEED, 1)
    assert played.won_by == "two_beats_ace"
    (embed,) = answer.embeds
    assert UPSET in embed["description"]
    row = await game_row(bot, game_id)
    assert row.state == game.to_dict()


async def test_without_the_house_rule_the_ace_takes_the_2_and_nothing_is_said(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(UPSET_SEED)
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    _, (played,) = replay(Rules.preset("standard"), UPSET_SEED, 1)
    upset_winner = replay(HOUSE, UPSET_SEED, 1)[1][0].winner
    assert played.winner != upset_winner  # the same deal: the ace wins this time
    assert UPSET not in answer.embeds[0]["description"]
