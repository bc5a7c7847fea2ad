"""Playing against Krigbot itself in a server: it accepts at once, and its games count apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Game, Rules
from krigbot.i18n import t
from tests.standin import DiscordStandIn, User
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, edit_of, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    answer_of,
    buttons,
    challenge,
    find_seed,
    flip,
    flip_button,
    game_row,
    press,
    public_messages,
    settled,
    text_of,
)
from tests.support.settings import BACKENDS
from tests.support.versus import ONE_ROUND, forfeit_yes, start_against_krigbot, table_of


async def test_a_game_against_krigbot_is_dealt_at_once_and_ends_in_a_result(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seed = find_seed(ONE_ROUND, lambda played: played.winner == 0)  # Alice takes the round
    seeds.fix(seed)

    answer = await start_against_krigbot(standin, world, world.alice, rounds=1)

    shown = text_of(answer)
    assert t("nb", "krigbot.accepts", name="Krigbot") in shown
    assert t("nb", "table.title", round=0) in shown
    assert t("nb", "table.dealt") in shown
    (flip_id,) = buttons(answer)
    assert flip_id.startswith("krig:flip:")  # no Accept button to wait for
    assert answer.allowed_mentions == {"parse": []}
    table = table_of(answer)
    game_id = int(flip_id.split(":")[2])
    await settled()  # the table message is remembered once it is out
    row = await game_row(bot, game_id)
    assert row.status == "running"
    assert row.players == (world.alice.id, standin.bot_user.id)
    assert row.table_message_id == table.id

    await press(standin, table, flip_button(table), world.alice)
    await settled()

    assert "🏆 " + t("nb", "over.winner", name="**Alice**") in text_of(table)
    row = await game_row(bot, game_id)
    expected = Game.new(ONE_ROUND, seed)
    expected.play_to_end()
    assert row.status == "finished"
    assert row.state == expected.to_dict()
    assert len(public_messages(standin, world.no_channel)) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_game_against_krigbot_counts_in_stats_apart_and_never_on_the_leaderboard(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    won = find_seed(ONE_ROUND, lambda played: played.winner == 0)
    seeds.fix(won, 1)
    table = table_of(await start_against_krigbot(standin, world, world.alice, rounds=1))
    await press(standin, table, flip_button(table), world.alice)
    lost = table_of(await start_against_krigbot(standin, world, world.alice))
    game_id = int(flip_button(lost).split(":")[2])
    confirm = table_of(await command(standin, world.no_channel, world.alice, "forfeit"))
    await press(standin, confirm, forfeit_yes(game_id, world.alice), world.alice)
    assert (await game_row(bot, game_id)).status == "finished"

    stats = await command(standin, world.no_channel, world.alice, "stats")
    board = await command(standin, world.no_channel, world.alice, "leaderboard")
    bots = await command(standin, world.no_channel, world.alice, "stats", user=standin.bot_user)

    record = t("nb", "stats.krigbot_line", count=2, games=2, wins=1, draws=0, losses=1)
    assert t("nb", "stats.krigbot") in text_of(stats)
    assert record in text_of(stats)
    assert t("nb", "stats.none", name="Alice") not in text_of(stats)
    assert t("nb", "stats.games") not in text_of(stats)  # no game with people yet
    assert board.embeds[0]["description"] == t("nb", "lb.empty")
    # Krigbot's own record is its games against players, from its side.
    krigbots = t("nb", "stats.krigbot_line", count=2, games=2, wins=1, draws=0, losses=1)
    assert krigbots in text_of(bots)
    assert t("nb", "stats.games") not in text_of(bots)
    totals = await bot.storage.stats.player_stats(world.no_guild.id, world.alice.id)
    assert (totals.games, totals.top_opponent, totals.biggest_pot) == (0, None, 0)
    assert await bot.storage.records.head_to_head(world.no_guild.id, world.alice.id) == []
    assert await bot.storage.records.biggest_pots(world.no_guild.id, world.alice.id) == []


async def test_krigbot_is_one_seat_of_a_three_player_game_and_anyone_may_flip(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    rules = Rules.preset("standard", players=3, max_rounds=2)
    seeds.fix(4)  # Krigbot (seat 2) holds the most cards after two rounds
    answer = await answer_of(
        standin,
        await challenge(
            standin, world.no_channel, world.alice, world.bob, standin.bot_user, rounds=2
        ),
    )

    shown = text_of(answer)
    assert t("nb", "krigbot.accepts", name="Krigbot") in shown
    assert t("nb", "challenge.waiting", players="Bob") in shown  # Krigbot has accepted already
    assert answer.content.splitlines()[0] == f"<@{world.bob.id}>"
    assert answer.allowed_mentions is not None
    assert answer.allowed_mentions["users"] == [world.bob.id]
    message = table_of(answer)
    game_id = int(next(c for c in buttons(answer) if c.startswith("krig:accept:")).split(":")[2])

    accepted = await press(standin, message, f"krig:accept:{game_id}", world.bob)
    assert accepted.type == UPDATE_MESSAGE
    assert t("nb", "table.title", round=0) in text_of(message)
    await flip(standin, world.no_channel, world.bob)
    ended = await flip(standin, world.no_channel, world.bob)

    expected = Game.new(rules, 4)
    assert expected.play_to_end().winners == (2,)
    row = await game_row(bot, game_id)
    assert row.status == "finished"
    assert row.state == expected.to_dict()
    assert "🏆 " + t("nb", "over.winner", name="**Krigbot**") in text_of(ended)
    for player in (world.alice, world.bob):
        record = (
            await bot.storage.stats.player_stats(world.no_guild.id, player.id)
        ).against_krigbot
        assert record is not None
        assert (record.games, record.losses) == (1, 1)
    board = await command(standin, world.no_channel, world.carol, "leaderboard")
    assert board.embeds[0]["description"] == t("nb", "lb.empty")
    assert await bot.storage.records.head_to_head(world.no_guild.id, world.alice.id) == []


async def test_finish_against_krigbot_plays_to_the_end_at_once(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(17)
    table = table_of(await start_against_krigbot(standin, world, world.alice))
    game_id = int(flip_button(table).split(":")[2])
    await flip(standin, world.no_channel, world.alice, count=3)

    done = await command(standin, world.no_channel, world.alice, "finish")

    assert not done.ephemeral
    assert t("nb", "finish.done", game=game_id) in text_of(done)
    assert list(buttons(done)) == [f"krig:rematch:{game_id}"]
    expected = Game.new(Rules.preset("standard"), 17)
    expected.play_to_end()
    row = await game_row(bot, game_id)
    assert row.status == "finished"
    assert row.state == expected.to_dict()


async def test_a_rematch_against_krigbot_is_dealt_at_once_too(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = table_of(await start_against_krigbot(standin, world, world.alice, rounds=1))
    game_id = int(flip_button(table).split(":")[2])
    await press(standin, table, flip_button(table), world.alice)
    await settled()
    assert f"krig:rematch:{game_id}" in buttons(table)

    again = await press(standin, table, f"krig:rematch:{game_id}", world.alice)

    assert not again.ephemeral
    assert t("nb", "krigbot.accepts", name="Krigbot") in text_of(again)
    (flip_id,) = buttons(again)
    assert flip_id.startswith("krig:flip:")
    row = await game_row(bot, int(flip_id.split(":")[2]))
    assert row.status == "running"
    assert row.rules == (await game_row(bot, game_id)).rules


@pytest.mark.parametrize("player", ["alice", "bob"])
async def test_another_bot_is_still_refused_privately_in_the_players_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, player: str
) -> None:
    robot = standin.add_user("robot", "Robot", bot=True)
    standin.add_member(world.no_guild, robot)
    user: User = getattr(world, player)

    answer = await answer_of(standin, await challenge(standin, world.no_channel, user, robot))
    with_krigbot = await answer_of(
        standin, await challenge(standin, world.no_channel, user, standin.bot_user, robot)
    )

    for refused in (answer, with_krigbot):
        assert refused.ephemeral
        assert refused.content == t(user.locale, "err.bot")
    assert public_messages(standin, world.no_channel) == []
    assert await bot.storage.games.game_count() == 0


async def test_a_match_against_krigbot_is_refused_privately(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await answer_of(
        standin,
        await challenge(standin, world.no_channel, world.alice, standin.bot_user, best_of=3),
    )

    assert answer.ephemeral
    assert answer.content == t("nb", "krigbot.no_match")
    assert await bot.storage.games.game_count() == 0


async def test_autoplay_plays_a_game_against_krigbot_to_its_end(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(1230)  # standard: 30 rounds, Alice (seat 0) takes every card
    async with running_bot(standin, db_path, seeds) as bot:
        table = table_of(await start_against_krigbot(standin, world, world.alice))
        game_id = int(flip_button(table).split(":")[2])

        answer = await command(standin, world.no_channel, world.alice, "auto", speed="fastest")

        assert answer.message is not None
        over = await edit_of(standin, answer.message, lambda text: t("nb", "auto.done") in text)
        assert "🏆 " + t("nb", "over.winner", name="**Alice**") in text_of(over.revision)
        row = await game_row(bot, game_id)
        assert (row.status, row.round) == ("finished", 30)
        record = (
            await bot.storage.stats.player_stats(world.no_guild.id, world.alice.id)
        ).against_krigbot
        assert record is not None
        assert (record.games, record.wins) == (1, 1)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_whole_game_against_krigbot_in_its_dm_counts_apart_in_that_chat(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seed = find_seed(ONE_ROUND, lambda played: played.winner == 0)
    seeds.fix(seed)
    dm = standin.world.dm_channel(world.alice)

    answer = await answer_of(
        standin, await challenge(standin, dm, world.alice, standin.bot_user, rounds=1)
    )
    assert not answer.ephemeral, text_of(answer)
    assert t("nb", "krigbot.accepts", name="Krigbot") in text_of(answer)
    table = table_of(answer)
    await settled()
    await press(standin, table, flip_button(table), world.alice)
    await settled()

    assert "🏆 " + t("nb", "over.winner", name="**Alice**") in text_of(table)
    game_id = int(flip_button(answer).split(":")[2])
    row = await game_row(bot, game_id)
    assert (row.status, row.guild_id) == ("finished", dm.id)
    stats = await command(standin, dm, world.alice, "stats")
    assert t("nb", "stats.krigbot_line", count=1, games=1, wins=1, draws=0, losses=0) in text_of(
        stats
    )
    board = await command(standin, dm, world.alice, "leaderboard")
    assert board.embeds[0]["description"] == t("nb", "lb.empty_dm")


async def test_a_friend_challenged_in_the_dm_with_krigbot_is_refused_privately(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    dm = standin.world.dm_channel(world.alice)

    answer = await answer_of(standin, await challenge(standin, dm, world.alice, world.bob))

    assert answer.ephemeral
    assert answer.content == t("nb", "krigbot.dm_only")
    assert await bot.storage.games.game_count() == 0
