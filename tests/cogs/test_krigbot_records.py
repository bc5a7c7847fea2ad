"""Krigbot's own record, and a team game with Krigbot as a partner, in the records."""

from __future__ import annotations

from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.contexts import add_group_dm, add_outside_guild, install_for
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    ChosenSeeds,
    answer_of,
    challenge,
    find_seed,
    flip,
    flip_button,
    game_row,
    press,
    settled,
    text_of,
)
from tests.support.private import nothing_refused
from tests.support.team_war import team_seed
from tests.support.versus import ONE_ROUND, forfeit_yes, start_against_krigbot, table_of

ROUNDS = 10


async def test_krigbots_own_stats_show_its_games_against_players(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    won = find_seed(ONE_ROUND, lambda played: played.winner == 0)
    seeds.fix(won, 1)
    table = table_of(await start_against_krigbot(standin, world, world.alice, rounds=1))
    await press(standin, table, flip_button(table), world.alice)  # Alice wins
    lost = table_of(await start_against_krigbot(standin, world, world.alice))
    game_id = int(flip_button(lost).split(":")[2])
    confirm = table_of(await command(standin, world.no_channel, world.alice, "forfeit"))
    await press(standin, confirm, forfeit_yes(game_id, world.alice), world.alice)  # Krigbot wins
    await settled()

    bots = await command(standin, world.no_channel, world.bob, "stats", user=standin.bot_user)

    record = t("nb", "stats.krigbot_line", count=2, games=2, wins=1, draws=0, losses=1)
    assert t("nb", "stats.krigbot_own") in text_of(bots)
    assert record in text_of(bots)
    assert t("nb", "stats.none", name="Krigbot") not in text_of(bots)


async def test_a_team_game_with_krigbot_as_partner_is_no_game_against_it_for_the_partner(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    # Seats: Alice 0 and Krigbot 2 against Bob 1 and Carol 3 (rules §9); Alice's team wins.
    seed, _ = team_seed(Rules.preset("lag", players=4, max_rounds=ROUNDS), (0, 2))
    seeds.fix(seed)
    alice, bob, carol = world.alice, world.bob, world.carol
    answer = await answer_of(
        standin,
        await challenge(
            standin,
            world.no_channel,
            alice,
            bob,
            standin.bot_user,
            carol,
            variant="lag",
            rounds=ROUNDS,
        ),
    )
    message = table_of(answer)
    game_id = int(
        next(c for c in answer.data["components"][0]["components"])["custom_id"].split(":")[2]
    )
    for player in (bob, carol):
        await press(standin, message, f"krig:accept:{game_id}", player)
    await flip(standin, world.no_channel, alice, count=ROUNDS)
    await settled()
    assert (await game_row(bot, game_id)).status == "finished"

    guild = world.no_guild.id
    partner = await bot.storage.stats.player_stats(guild, alice.id)
    assert partner.against_krigbot is None
    assert (partner.games, partner.wins) == (1, 1)
    for opponent in (bob, carol):
        versus = (await bot.storage.stats.player_stats(guild, opponent.id)).against_krigbot
        assert versus is not None
        assert (versus.games, versus.losses) == (1, 1)
    stats = await command(standin, world.no_channel, alice, "stats")
    assert t("nb", "stats.krigbot") not in text_of(stats)
    bots = await command(standin, world.no_channel, alice, "stats", user=standin.bot_user)
    assert t("nb", "stats.krigbot_line", count=1, games=1, wins=1, draws=0, losses=0) in text_of(
        bots
    )


@pytest.mark.parametrize(
    ("where", "lang"),
    # A chat's public answers follow its game's challenger (Alice); a server's, its locale.
    [("group DM", "nb"), ("DM with Krigbot", "nb"), ("server without the bot", "en")],
)
async def test_krigbots_own_stats_show_its_games_in_a_chat_too(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    seeds: ChosenSeeds,
    where: str,
    lang: str,
) -> None:
    install_for(standin, world.alice)
    install_for(standin, world.bob)
    if where == "group DM":
        channel = add_group_dm(standin, world.alice, world.bob, name="friends")
    elif where == "DM with Krigbot":
        channel = standin.dm_channel(world.alice)
    else:
        channel = add_outside_guild(standin, "Open", world.carol, world.alice, world.bob)[1]
    seeds.fix(find_seed(ONE_ROUND, lambda played: played.winner == 0))
    async with running_bot(standin, db_path, seeds):
        answer = await answer_of(
            standin, await challenge(standin, channel, world.alice, standin.bot_user, rounds=1)
        )
        table = table_of(answer)
        await press(standin, table, flip_button(table), world.alice)  # Alice wins
        await settled()

        bots = await command(standin, channel, world.alice, "stats", user=standin.bot_user)

    record = t(lang, "stats.krigbot_line", count=1, games=1, wins=0, draws=0, losses=1)
    assert record in text_of(bots)
    assert t(lang, "stats.krigbot_own") in text_of(bots)
    nothing_refused(standin)
