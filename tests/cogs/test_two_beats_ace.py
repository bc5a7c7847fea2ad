"""The house rule ``two_beats_ace`` (rules §1) from /krig start to the table and /krig rules."""

from __future__ import annotations

from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    ChosenSeeds,
    answer_of,
    challenge,
    challenge_message,
    find_seed,
    flip,
    game_id_of,
    game_row,
    press,
    public_messages,
    replay,
    text_of,
)

HOUSE = Rules.preset("standard", two_beats_ace=True)
UPSET_SEED = find_seed(HOUSE, lambda played: played.won_by == "two_beats_ace" and not played.is_war)
"""A deal whose first battle is a 2 against an ace."""
UPSET = "✌️ " + t("nb", "table.two_beats_ace")


async def test_a_challenge_with_the_house_rule_states_it_and_the_2_takes_the_ace(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(UPSET_SEED)
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, house_rule="two_beats_ace"
    )
    assert t("nb", "rule.two_beats_ace") in text_of(message)
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    game, (played,) = replay(HOUSE, UPSET_SEED, 1)
    assert played.won_by == "two_beats_ace"
    (embed,) = answer.embeds
    assert UPSET in embed["description"]
    row = await game_row(bot, game_id)
    assert row.rules["two_beats_ace"] is True
    assert row.state == game.to_dict()


async def test_without_the_house_rule_the_ace_takes_the_2_and_nothing_is_said(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(UPSET_SEED)
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    assert t("nb", "rule.two_beats_ace") not in text_of(message)
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    _, (played,) = replay(Rules.preset("standard"), UPSET_SEED, 1)
    upset_winner = replay(HOUSE, UPSET_SEED, 1)[1][0].winner
    assert played.winner != upset_winner  # the same deal: the ace wins this time
    assert UPSET not in answer.embeds[0]["description"]


async def test_steal_war_refuses_the_house_rule_in_the_senders_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await answer_of(
        standin,
        await challenge(
            standin,
            world.no_channel,
            world.alice,
            world.bob,
            variant="stjel",
            house_rule="two_beats_ace",
        ),
    )

    assert answer.ephemeral
    assert answer.content == t(
        "nb", "err.fixed.two_beats_ace", variant=t("nb", "variant.stjel.name")
    )
    assert public_messages(standin, world.no_channel) == []
    assert await bot.storage.games.active_game(world.no_channel.id) is None


async def test_krig_rules_lists_the_house_rule_in_the_readers_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    rec = await standin.slash("krig rules", user=world.carol, channel=world.no_channel)
    answer = await answer_of(standin, rec)

    (embed,) = answer.embeds
    (house,) = [f for f in embed["fields"] if f["name"] == t("en", "rules.house_heading")]
    assert t("en", "house.two_beats_ace") in house["value"]
    assert t("en", "rule.two_beats_ace") in house["value"]
