"""Pictures drawn ahead: the next round's table is ready before the flip, and only ever for it."""

from __future__ import annotations

import asyncio
from datetime import datetime

import discord
import pytest

from krigbot.adapter import pictures
from krigbot.bot import KrigBot
from krigbot.engine import Round, Rules, Variant, load_game, new_game
from krigbot.render.table import render_round
from krigbot.storage import GameRow, Storage
from tests.standin import Channel, DiscordStandIn, InteractionResponse
from tests.standin.fixtures import SampleWorld
from tests.support.players import ChosenSeeds, answer_of, flip, game_row, press, settled, start_game
from tests.support.rows import stored_row

AHEAD_WITHIN = 10.0
"""Seconds a worker may take to draw a picture ahead before a test fails."""
FLIPS = 6


def war_soon(seed: int) -> bool:
    """Tell whether the standard deal of a seed has a war in its first rounds, after round 1."""
    game = new_game(Rules.preset("standard"), seed)
    game.play_round()
    return any(game.play_round().is_war for _ in range(FLIPS - 1))


async def stored_game(bot: KrigBot, game_id: int) -> Variant:
    """Return the game as the bot stored it: the position the next flip plays from."""
    return load_game((await game_row(bot, game_id)).state or {})


async def expected_picture(bot: KrigBot, game_id: int, played: Round, after: Variant) -> bytes:
    """Return the picture a live drawing gives for a round, drawn here from the engine."""
    row = await game_row(bot, game_id)
    total = sum(after.counts) or 1
    return render_round(played, row.names, "nb", total_cards=total, teams=after.rules.teams)


async def ahead_ready(bot: KrigBot, game_id: int) -> None:
    """Wait until the picture drawn ahead for a game's next round is done."""
    await settled()
    ahead = bot.pictures.ahead_for(game_id)
    assert ahead is not None, "no picture is being drawn ahead"
    await asyncio.wait_for(ahead, AHEAD_WITHIN)


def next_door(standin: DiscordStandIn, world: SampleWorld) -> Channel:
    """Return another channel of the Norwegian server, for a second game there."""
    return standin.add_channel(world.no_guild, "krig-2")


async def pictures_on(standin: DiscordStandIn, world: SampleWorld) -> None:
    """Have a moderator turn pictures on in the Norwegian server, where they are on already.

    A new deal's first round is drawn ahead only where the bot knows the server shows pictures
    (from a flip or a setting since it started): an accept does not ask the database.
    """
    record = await standin.slash(
        "krig settings", user=world.moderator, channel=world.no_channel, options={"images": "on"}
    )
    await answer_of(standin, record)


def picture_of(answer: InteractionResponse) -> bytes:
    """Return the table picture a reply carries."""
    assert answer.message is not None
    files = dict(answer.message.files)
    assert list(files) == ["round.png"]
    return files["round.png"]


async def test_every_round_shows_the_picture_drawn_ahead_for_it_byte_for_byte(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(next(seed for seed in range(5000) if war_soon(seed)))
    await bot.pictures.warmed_up()
    await pictures_on(standin, world)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    wars = 0
    for turn in range(FLIPS):
        await ahead_ready(bot, table.game_id)
        mine = await stored_game(bot, table.game_id)
        played = mine.play_round()
        wars += played.is_war
        used = bot.pictures.ahead_used

        answer = await flip(standin, world.no_channel, (world.alice, world.bob)[turn % 2])

        assert picture_of(answer) == await expected_picture(bot, table.game_id, played, mine)
        assert bot.pictures.ahead_used == used + 1
    assert wars, "the deal was chosen for a war in these rounds"


async def test_a_picture_drawn_ahead_is_not_shown_once_the_game_moved_on_elsewhere(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await bot.pictures.warmed_up()
    await pictures_on(standin, world)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await ahead_ready(bot, table.game_id)  # round 1's
    used = bot.pictures.ahead_used
    # A round is played where no picture is shown (as autoplay or another shard would).
    await bot.service.play.flip(world.no_channel.id, world.alice.id, 1)
    mine = await stored_game(bot, table.game_id)
    played = mine.play_round()

    answer = await flip(standin, world.no_channel, world.bob)

    assert played.number == 2
    assert picture_of(answer) == await expected_picture(bot, table.game_id, played, mine)
    assert bot.pictures.ahead_used == used


async def test_a_picture_drawn_ahead_is_not_shown_after_a_forfeit_changed_the_position(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await bot.pictures.warmed_up()
    table = await start_game(standin, world.no_channel, world.alice, world.bob, world.carol)
    await flip(standin, world.no_channel, world.alice)
    await ahead_ready(bot, table.game_id)  # round 2's, with Carol playing
    used = bot.pictures.ahead_used
    confirm = await answer_of(
        standin, await standin.slash("krig forfeit", user=world.carol, channel=world.no_channel)
    )
    assert confirm.message is not None
    await press(
        standin, confirm.message, f"krig:forfeit:{table.game_id}:{world.carol.id}:yes", world.carol
    )
    await settled()
    mine = await stored_game(bot, table.game_id)
    assert mine.forfeited == [2]
    played = mine.play_round()

    answer = await flip(standin, world.no_channel, world.bob)

    assert played.number == 2  # the same round number as the picture drawn ahead
    assert picture_of(answer) == await expected_picture(bot, table.game_id, played, mine)
    assert bot.pictures.ahead_used == used


async def test_count_flips_show_their_last_round_not_the_one_drawn_ahead(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await bot.pictures.warmed_up()
    await pictures_on(standin, world)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await ahead_ready(bot, table.game_id)
    mine = await stored_game(bot, table.game_id)
    played = mine.play_rounds(3)
    used = bot.pictures.ahead_used

    answer = await flip(standin, world.no_channel, world.alice, count=3)

    assert picture_of(answer) == await expected_picture(bot, table.game_id, played, mine)
    assert bot.pictures.ahead_used == used


async def test_no_picture_is_kept_for_a_game_that_ended(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await bot.pictures.warmed_up()
    await pictures_on(standin, world)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, variant="hurtig")
    await ahead_ready(bot, table.game_id)

    await flip(standin, world.no_channel, world.alice, count=50)  # first to 10 tricks

    assert (await game_row(bot, table.game_id)).status == "finished"
    assert bot.pictures.ahead_for(table.game_id) is None


async def test_a_picture_drawn_ahead_goes_when_its_game_is_idle(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    now = [0.0]
    bot.pictures.clock = lambda: now[0]
    await bot.pictures.warmed_up()
    await pictures_on(standin, world)
    idle = await start_game(standin, world.no_channel, world.alice, world.bob)
    await ahead_ready(bot, idle.game_id)

    now[0] += pictures.AHEAD_IDLE + 1
    busy = await start_game(standin, next_door(standin, world), world.alice, world.bob)
    await ahead_ready(bot, busy.game_id)

    assert bot.pictures.ahead_for(idle.game_id) is None


async def test_only_the_latest_games_keep_a_picture_drawn_ahead(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pictures, "AHEAD_MOST", 1)
    await bot.pictures.warmed_up()
    await pictures_on(standin, world)
    first = await start_game(standin, world.no_channel, world.alice, world.bob)
    await ahead_ready(bot, first.game_id)

    second = await start_game(standin, next_door(standin, world), world.alice, world.bob)
    await ahead_ready(bot, second.game_id)

    assert bot.pictures.ahead_for(first.game_id) is None


# ------------------------------------------------------------ never in front of a reply


def a_game(game_id: int) -> tuple[GameRow, Variant]:
    """Return a stored row and its running standard game, as the service hands them over."""
    rules = Rules.preset("standard")
    row = stored_row(rules, (1, 2), ("Ada", "Bo"), at=datetime(2026, 12, 1), game_id=game_id)
    return row, new_game(rules, game_id)


async def test_nothing_is_drawn_ahead_while_a_reply_waits_for_its_picture(
    storage: Storage,
) -> None:
    shown = pictures.Pictures(storage, processes=1)
    await shown.start()
    await shown.warmed_up()
    assert await shown.enabled(1)
    waiting_row, waiting = a_game(1)
    other_row, other = a_game(2)
    live = asyncio.ensure_future(
        shown.round_picture(waiting_row, waiting, waiting.play_round(), "nb", discord.Embed())
    )
    await asyncio.sleep(0)  # the reply is now waiting for the worker

    shown.draw_ahead(other_row, other, "nb")
    assert shown.ahead_for(other_row.id) is None
    assert await live is not None
    # Once the reply has its picture, the worker is free for the next round's.
    assert shown.ahead_for(waiting_row.id) is not None


async def test_nothing_is_drawn_ahead_in_the_bot_s_own_threads(storage: Storage) -> None:
    shown = pictures.Pictures(storage, processes=0)
    await shown.start()
    row, game = a_game(1)

    await shown.round_picture(row, game, game.play_round(), "nb", discord.Embed())

    assert shown.ahead_for(row.id) is None


async def test_nothing_is_drawn_ahead_for_a_game_with_choices(storage: Storage) -> None:
    shown = pictures.Pictures(storage, processes=1)
    await shown.start()
    await shown.warmed_up()
    assert await shown.enabled(1)
    rules = Rules.preset("stjel")
    row = stored_row(rules, (1, 2), ("Ada", "Bo"), at=datetime(2026, 12, 1))

    shown.draw_ahead(row, new_game(rules, 1), "nb")

    assert shown.ahead_for(row.id) is None


async def test_a_game_whose_round_went_out_as_text_shows_the_next_round_s_picture(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers that are always backlogged: a round's picture is drawn only if it is owed.
    monkeypatch.setattr(pictures, "BACKLOG_PER_WORKER", 0)
    shown = pictures.Pictures(storage, processes=0)  # in threads: nothing is drawn ahead
    await shown.start()
    row, game = a_game(1)

    carried = [
        await shown.round_picture(row, game, game.play_round(), "nb", discord.Embed()) is not None
        for _ in range(4)
    ]

    assert carried == [False, True, False, True]  # at least every other round's picture


async def test_a_game_owed_its_picture_has_it_drawn_ahead_while_another_reply_waits(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pictures, "BACKLOG_PER_WORKER", 0)
    shown = pictures.Pictures(storage, processes=1)
    await shown.start()
    await shown.warmed_up()
    assert await shown.enabled(1)
    waiting_row, waiting = a_game(1)
    owed_row, owed = a_game(2)
    assert (
        await shown.round_picture(waiting_row, waiting, waiting.play_round(), "nb", discord.Embed())
        is None
    )
    live = asyncio.ensure_future(
        shown.round_picture(waiting_row, waiting, waiting.play_round(), "nb", discord.Embed())
    )
    await asyncio.sleep(0)  # that reply is now waiting for the worker (its picture was owed)

    # A round that goes out as text while it waits: the game's next picture is drawn at once.
    assert (
        await shown.round_picture(owed_row, owed, owed.play_round(), "nb", discord.Embed()) is None
    )
    assert shown.ahead_for(owed_row.id) is not None
    assert await live is not None
