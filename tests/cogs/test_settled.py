"""``settled()``, which tests use before reading the database, really waits for the bot.

It finds the bot's handlers by the names discord.py gives their tasks; if an upgrade renamed them
it would wait for nothing and the races it prevents would come back. This holds it to the work
the bot does after its challenge is already on Discord.
"""

from __future__ import annotations

import asyncio

import pytest

from krigbot.bot import KrigBot
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import bot_busy, challenge_message, game_id_of, game_row, settled


async def test_settled_waits_for_what_the_bot_does_after_its_answer_is_out(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = asyncio.Event()
    remember = bot.storage.games.set_challenge_message

    async def held(game_id: int, message_id: int | None) -> bool:
        await release.wait()
        return await remember(game_id, message_id)

    monkeypatch.setattr(bot.storage.games, "set_challenge_message", held)
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)

    busy = bot_busy()  # the challenge's handler, held in the write
    assert busy, "settled() does not see the bot's handler (did discord.py rename its tasks?)"
    release.set()
    await settled()

    assert all(task.done() for task in busy)
    row = await game_row(bot, game_id_of(message))
    assert row.challenge_message_id == message.id
