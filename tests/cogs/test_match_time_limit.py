"""A timed best-of match that its players stop playing ends, and says so once."""

from __future__ import annotations

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.sessions.timelimit import TIME_UP_TOLD
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import Clock, buttons, flip, settled, start_game, text_of
from tests.support.time_limit import quick_ticks, time_up

__all__ = ["quick_ticks"]


async def test_a_timed_match_nobody_plays_ends_after_its_first_unplayed_game(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, clock: Clock, quick_ticks: None
) -> None:
    channel = world.no_channel
    table = await start_game(standin, channel, world.alice, world.bob, best_of=3, minutes=1)
    watcher = standin.watch(channel)

    clock.advance(minutes=1, seconds=1)
    event = await watcher.next("create", predicate=time_up, timeout=10)
    await settled()

    text = text_of(event.revision)
    assert t("nb", "match.stopped", game=1) in text
    assert t("nb", "match.next", game=2) not in text
    assert [c for c in buttons(event.revision) if c.startswith("krig:flip:")] == []
    assert any(c.startswith("krig:rematch:") for c in buttons(event.revision))
    assert await bot.storage.games.active_game(channel.id) is None
    assert bot.service.deadlines.pending(table.game_id, "time_limit") is None
    # Nobody won it: it counts as a match for no one.
    records = await bot.storage.matches.match_records(
        world.no_guild.id, [world.alice.id, world.bob.id]
    )
    assert records == {}

    # The time passing on shows nothing more: once a late press is no longer told that the time
    # was up, a /krig flip finds no game.
    clock.advance(minutes=TIME_UP_TOLD.total_seconds() / 60 + 1)
    answer = await flip(standin, channel, world.alice)
    assert answer.content == t("nb", "err.no_game")
    assert [e for e in standin.channel_events.items if time_up(e)] == [event]
