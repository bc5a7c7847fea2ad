"""Players racing each other: flips in a channel are serialised and no press plays twice."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from krigbot.bot import KrigBot
from krigbot.i18n import t
from tests.standin import Channel, DiscordStandIn, InteractionRecord, Message
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    DEFERRED_UPDATE,
    UPDATE_MESSAGE,
    ChosenSeeds,
    answer_of,
    enabled_buttons,
    flip,
    flip_button,
    forged_press,
    game_row,
    press,
    public_messages,
    settled,
    start_game,
    text_of,
)
from tests.support.texts import pattern


async def test_two_players_flipping_at_once_play_two_rounds_each_shown_once(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    first = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    second = await standin.slash("flip", user=world.bob, channel=world.no_channel)
    answers = await asyncio.gather(answer_of(standin, first), answer_of(standin, second))

    titles = sorted(answer.embeds[0]["title"] for answer in answers)
    assert titles == [t("nb", "table.title", round=1), t("nb", "table.title", round=2)]
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
    answers = await asyncio.gather(answer_of(standin, first), answer_of(standin, second))

    # One plays the round; the other, answered once it had its turn, changes nothing.
    assert sorted(answer.type for answer in answers) == [DEFERRED_UPDATE, UPDATE_MESSAGE]
    assert not any(answer.ephemeral for answer in answers)
    assert (await game_row(bot, table.game_id)).round == 1
    assert t("nb", "table.title", round=1) in text_of(table.message)
    assert flip_button(table.message).endswith(":1")
    played = [
        rev for rev in table.message.history if t("nb", "table.title", round=1) in text_of(rev)
    ]
    assert played == []  # round 1 was drawn once: the current revision, never before
    assert len(public_messages(standin, world.no_channel)) == 1
    assert standin.messages(world.no_channel) == [table.message]  # no refusal either


async def test_a_press_on_an_older_table_after_a_flip_is_refused_and_plays_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.bob)
    await settled()
    before = text_of(table.message)
    assert enabled_buttons(table.message) == []  # grey: a player cannot press it

    # A client that presses it all the same is refused.
    answer = await forged_press(standin, table.message, flip_button(table.message), world.alice)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.stale_button")
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
    assert t("nb", "table.title", round=2) in text_of(newest)
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
    newer = (await answer_of(standin, second)).message
    older = (await answer_of(standin, first)).message
    assert older is not None
    assert newer is not None
    assert older.embeds[0]["title"] == t("nb", "table.title", round=1)
    assert newer.embeds[0]["title"] == t("nb", "table.title", round=2)

    await settled()
    assert enabled_buttons(older) == []
    refused = await forged_press(standin, older, flip_button(older), world.alice)
    played = await press(standin, newer, flip_button(newer), world.bob)

    assert refused.ephemeral
    assert refused.content == t("nb", "err.stale_button")
    assert played.type == UPDATE_MESSAGE
    assert (await game_row(bot, table.game_id)).round == 3


# ------------------------------------------------------------- many flips racing in a channel

LONG_SEED = 17
"""Standard: 117 rounds, long enough for every race below."""
_ROUND = pattern("nb", "table.title", round=re.compile(r"\d+"))


def round_of(message: Message) -> int:
    """Return the round a Norwegian table message shows now."""
    match = _ROUND.search(text_of(message))
    assert match is not None, text_of(message)
    return int(match.group(1))


def live_tables(standin: DiscordStandIn, channel: Channel) -> list[Message]:
    """Return the channel's public messages that still have a button one can press."""
    return [m for m in public_messages(standin, channel) if enabled_buttons(m)]


async def race(
    standin: DiscordStandIn,
    world: SampleWorld,
    flips: int,
    *,
    held: float,
    hold: Callable[[int], bool],
) -> list[InteractionRecord]:
    """Send ``flips`` /flip commands and Flip presses at once, the replies ``hold`` picks held up.

    A press goes to the newest table a player can see with a working button, as players do.
    """
    channel = world.no_channel
    records = []
    for n in range(flips):
        user = (world.alice, world.bob)[n % 2]
        working = live_tables(standin, channel)
        if n % 3 == 2 and working:
            table = working[-1]
            rec = await standin.click(table, flip_button(table), user=user)
        else:
            rec = await standin.slash("flip", user=user, channel=channel)
        if hold(n):
            standin.delay("POST", f"/interactions/{rec.id}/", held, times=1)
        records.append(rec)
    await asyncio.gather(*(rec.response(timeout=10) for rec in records))
    await settled()
    return records


async def check_the_live_table_is_at_the_bottom(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, game_id: int
) -> None:
    """Check what players see after a race: every table in order, one working, at the bottom."""
    channel = world.no_channel
    shown = [round_of(m) for m in public_messages(standin, channel)]
    assert shown == sorted(set(shown)), f"tables out of order: {shown}"
    stored = (await game_row(bot, game_id)).round
    assert shown[-1] == stored
    working = live_tables(standin, channel)
    assert working == public_messages(standin, channel)[-1:], [round_of(m) for m in working]
    (bottom,) = working
    assert enabled_buttons(bottom) == [f"krig:flip:{game_id}:{stored}"]
    answer = await press(standin, bottom, flip_button(bottom), world.alice)
    assert answer.type == UPDATE_MESSAGE
    assert round_of(bottom) == stored + 1


async def test_racing_flips_and_presses_leave_the_one_working_table_at_the_bottom(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    records = await race(standin, world, 30, held=0.15, hold=lambda n: n % 4 == 0)

    assert not [rec for rec in records if rec.rejected]  # every one answered in time
    await check_the_live_table_is_at_the_bottom(standin, world, bot, table.game_id)


async def test_flips_that_wait_past_the_deadline_for_their_turn_still_come_in_order(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    # The first replies held up 0.3 s each: the flips at the back of the queue wait past
    # Discord's deadline for their turn, and answer first without putting anything out of order.
    records = await race(standin, world, 14, held=0.3, hold=lambda n: n < 8)

    assert not [rec for rec in records if rec.rejected]
    deferred = [rec for rec in records if rec.callbacks.items[0].type != UPDATE_MESSAGE]
    assert any(rec.callbacks.items[0].type in (5, 6) for rec in deferred)
    await check_the_live_table_is_at_the_bottom(standin, world, bot, table.game_id)


# ------------------------------------------------------------- rounds racing the end of a game


def check_nothing_comes_after_the_end(standin: DiscordStandIn, channel: Channel) -> Message:
    """Check that the game's end is its channel's last word, and return that message."""
    shown = public_messages(standin, channel)
    ends = [
        n for n, m in enumerate(shown) if any(c.startswith("krig:rematch:") for c in m.custom_ids())
    ]
    assert ends == [len(shown) - 1], [text_of(m)[:60] for m in shown]
    last = shown[-1]
    assert "🏆" in text_of(last)
    for earlier in shown[:-1]:
        assert "🏆" not in text_of(earlier)
        assert not pattern("nb", "fair.seed").search(text_of(earlier))
        assert enabled_buttons(earlier) == []
    return last


async def test_a_round_that_races_a_forfeit_comes_before_the_end_and_claims_nothing_of_it(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.bob, count=3)
    asked = await (
        await standin.slash("krig forfeit", user=world.alice, channel=world.no_channel)
    ).response()
    assert asked.message is not None

    # Bob's flip is played first; its answer is held up on the network while Alice gives up.
    racing = await standin.slash("flip", user=world.bob, channel=world.no_channel)
    standin.delay("POST", f"/interactions/{racing.id}/", 0.3, times=1)
    await standin.requests.wait(lambda r: f"/interactions/{racing.id}/" in r.path, timeout=5)
    confirm = f"krig:forfeit:{table.game_id}:{world.alice.id}:yes"
    given_up = await standin.click(asked.message, confirm, user=world.alice)
    await asyncio.gather(racing.response(), given_up.response())
    await settled()

    end = check_nothing_comes_after_the_end(standin, world.no_channel)
    assert t("nb", "forfeit.done", name="Alice") in text_of(end)
    row = await game_row(bot, table.game_id)
    assert (row.status, row.round) == ("finished", 4)
    assert round_of(public_messages(standin, world.no_channel)[-2]) == 4


async def test_a_round_that_races_an_agreed_finish_comes_before_the_end(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.bob, count=3)
    request = (
        await answer_of(
            standin, await standin.slash("krig finish", user=world.alice, channel=world.no_channel)
        )
    ).message
    assert request is not None

    racing = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    standin.delay("POST", f"/interactions/{racing.id}/", 0.3, times=1)
    await standin.requests.wait(lambda r: f"/interactions/{racing.id}/" in r.path, timeout=5)
    agreed = await standin.click(request, f"krig:finish:{table.game_id}:yes", user=world.bob)
    await asyncio.gather(racing.response(), agreed.response())
    await settled()

    end = check_nothing_comes_after_the_end(standin, world.no_channel)
    assert t("nb", "finish.done", game=table.game_id) in text_of(end)
    assert t("nb", "finish.agreed") in text_of(request)
    assert enabled_buttons(request) == []
    assert (await game_row(bot, table.game_id)).status == "finished"
