"""Players racing each other: flips in a channel are serialised and no press plays twice."""

from __future__ import annotations

import asyncio

from krigbot.bot import KrigBot
from tests.cogs.helpers import (
    DEFERRED_UPDATE,
    UPDATE_MESSAGE,
    flip,
    flip_button,
    game_row,
    press,
    public_messages,
    start_game,
    text_of,
)
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld


async def test_two_players_flipping_at_once_play_two_rounds_each_shown_once(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    first = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    second = await standin.slash("flip", user=world.bob, channel=world.no_channel)
    answers = await asyncio.gather(first.response(), second.response())

    titles = sorted(answer.embeds[0]["title"] for answer in answers)
    assert titles == ["Krig — runde 1", "Krig — runde 2"]
    assert not any(answer.ephemeral for answer in answers)
    assert (await game_row(bot, table.game_id)).round == 2
    assert len(public_messages(standin, world.no_channel)) == 3  # the table and two rounds


async def test_two_presses_of_one_flip_button_play_exactly_one_round(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    custom_id = flip_button(table.message)

    # Both presses leave the clients before the bot has answered either.
    first = await standin.click(table.message, custom_id, user=world.alice)
    second = await standin.click(table.message, custom_id, user=world.bob)
    answers = await asyncio.gather(first.response(), second.response())

    assert sorted(answer.type for answer in answers) == [DEFERRED_UPDATE, UPDATE_MESSAGE]
    assert not any(answer.ephemeral for answer in answers)
    assert (await game_row(bot, table.game_id)).round == 1
    assert "Krig — runde 1" in text_of(table.message)
    assert flip_button(table.message).endswith(":1")
    played = [rev for rev in table.message.history if "Krig — runde 1" in text_of(rev)]
    assert played == []  # round 1 was drawn once: the current revision, never before
    assert len(public_messages(standin, world.no_channel)) == 1
    assert standin.messages(world.no_channel) == [table.message]  # no refusal either


async def test_a_press_on_an_older_table_after_a_flip_is_refused_and_plays_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.bob)
    before = text_of(table.message)

    answer = await press(standin, table.message, flip_button(table.message), world.alice)

    assert answer.ephemeral
    assert answer.content == "Den knappen hører til en eldre melding — bruk den nyeste."
    assert text_of(table.message) == before
    assert (await game_row(bot, table.game_id)).round == 1
    assert len(public_messages(standin, world.no_channel)) == 2


async def test_the_newest_table_message_keeps_working_after_a_flip(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    newest = (await flip(standin, world.no_channel, world.bob)).message
    assert newest is not None

    answer = await press(standin, newest, flip_button(newest), world.alice)

    assert answer.type == UPDATE_MESSAGE
    assert "Krig — runde 2" in text_of(newest)
    assert (await game_row(bot, table.game_id)).round == 2


async def test_a_reply_that_lands_late_does_not_become_the_newest_table(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    # The reply to the first flip is held up on the network for 0.3 s...
    first = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    standin.delay("POST", f"/interactions/{first.id}/", 0.3)
    await standin.requests.wait(lambda r: f"/interactions/{first.id}/" in r.path, timeout=5)
    # ...while the second flip is played and its reply shown first.
    second = await standin.slash("flip", user=world.bob, channel=world.no_channel)
    newer = (await second.response()).message
    older = (await first.response()).message
    assert older is not None
    assert newer is not None
    assert older.embeds[0]["title"] == "Krig — runde 1"
    assert newer.embeds[0]["title"] == "Krig — runde 2"

    refused = await press(standin, older, flip_button(older), world.alice)
    played = await press(standin, newer, flip_button(newer), world.bob)

    assert refused.ephemeral
    assert refused.content == "Den knappen hører til en eldre melding — bruk den nyeste."
    assert played.type == UPDATE_MESSAGE
    assert (await game_row(bot, table.game_id)).round == 3
