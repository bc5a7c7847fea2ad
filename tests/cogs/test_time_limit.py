"""The time limit (rules §7): `/krig start minutes:N` counts the cards when the time is up.

The tests move the game service's clock; the bot's deadline scheduler reads that clock, so no
test waits the minutes it plays with.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import discord
import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Game, Rules
from krigbot.engine.rules import MAX_TIME_LIMIT
from krigbot.i18n import t
from krigbot.sessions import deadlines
from krigbot.sim import main as sim_main
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, OptionError, run_bot
from tests.standin.fixtures import SampleWorld
from tests.support.autoplay import LONG_SEED
from tests.support.handsfree import AUTO_SECONDS, command, edit_of
from tests.support.players import (
    ChosenSeeds,
    Clock,
    answer_of,
    buttons,
    challenge,
    challenge_message,
    enabled_buttons,
    flip,
    flip_button,
    forged_press,
    game_id_of,
    game_row,
    press,
    public_messages,
    settled,
    start_game,
    text_of,
    visible,
)
from tests.support.settings import BACKENDS, make_settings
from tests.support.steal_war import STEAL_ONE, look, names, play_to_choice
from tests.support.texts import pattern
from tests.support.time_limit import TIME_UP, bot_on, quick_ticks, time_up

__all__ = ["quick_ticks"]

RULES = Rules.preset("standard", time_limit=5)


def seed_with_a_leader(rounds: int) -> tuple[int, Game]:
    """Return a seed whose game is still on after ``rounds`` rounds with one player ahead."""
    for seed in range(500):
        game = Game.new(RULES, seed)
        for _ in range(rounds):
            game.play_round()
        if not game.finished and game.counts[0] != game.counts[1]:
            return seed, game
    raise AssertionError("no seed found")


async def test_the_time_running_out_ends_the_game_by_counting_and_says_so(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    capsys: pytest.CaptureFixture[str],
    seeds: ChosenSeeds,
) -> None:
    seed, expected = seed_with_a_leader(3)
    outcome = expected.copy().end_by_counting()
    seeds.fix(seed)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, minutes=5)
    answer = await flip(standin, world.no_channel, world.alice, count=3)
    assert answer.message is not None
    watcher = standin.watch(world.no_channel)

    clock.advance(minutes=5, seconds=1)
    event = await watcher.next("create", predicate=time_up, timeout=5)

    text = visible(text_of(event.revision))
    winner = ("Alice", "Bob")[outcome.winners[0]]
    assert t("nb", "over.winner", name=f"**{winner}**") in text_of(event.revision)
    assert t("nb", "over.reason.time_limit", count=5, n=5) in text
    for name, count in zip(("Alice", "Bob"), expected.counts, strict=True):
        assert f"{name}: **{count}**" in text_of(event.revision)
    assert any(cid.startswith("krig:rematch:") for cid in buttons(event.revision))
    row = await game_row(bot, table.game_id)
    assert row.status == "finished"
    assert row.round == 3
    assert row.result is not None
    assert (row.result["reason"], row.result["winners"]) == ("time_limit", list(outcome.winners))
    record = await bot.storage.stats.player_stats(row.guild_id, world.alice.id)
    assert (record.games, record.wins) == (1, int(outcome.winners == (0,)))
    # The last table's Flip button is grey (it could do nothing now), and it says why.
    old_table = answer.message
    await watcher.next("edit", predicate=lambda e: e.message is old_table, timeout=5)
    assert buttons(old_table)
    assert enabled_buttons(old_table) == []
    assert old_table.content == t("nb", "time.table_over")
    history = await command(standin, world.no_channel, world.alice, "history")
    assert t("nb", "history.reason.time_limit") in text_of(history)
    # The fairness check gives a command that plays the same game to the same winner.
    (check,) = re.findall(r"`(python -m krigbot\.sim [^`]+)`", text)
    assert "max_rounds=3" in check
    capsys.readouterr()
    assert sim_main(check.split()[3:]) == 0
    assert json.loads(capsys.readouterr().out)["winners"] == list(outcome.winners)


async def test_a_flip_after_the_deadline_counts_the_cards_instead_of_playing(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    seeds: ChosenSeeds,
) -> None:
    # The scheduler sleeps on: the flip comes in after the deadline, before the timer fires.
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 3600.0)
    seed, expected = seed_with_a_leader(2)
    seeds.fix(seed)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, minutes=1)
    await flip(standin, world.no_channel, world.bob, count=2)

    clock.advance(minutes=1)
    answer = await flip(standin, world.no_channel, world.alice)

    assert not answer.ephemeral
    assert TIME_UP in text_of(answer)
    assert t("nb", "over.reason.time_limit", count=1, n=1) in visible(text_of(answer))
    row = await game_row(bot, table.game_id)
    assert (row.status, row.round) == ("finished", 2)  # no third round was played
    assert row.result is not None
    assert row.result["reason"] == "time_limit"
    assert row.result["winners"] == list(expected.copy().end_by_counting().winners)
    # The old table is grey; even a forged press on it plays nothing.
    await settled()
    assert enabled_buttons(table.message) == []
    again = await forged_press(standin, table.message, flip_button(table.message), world.alice)
    assert again.ephemeral
    assert (await game_row(bot, table.game_id)).round == 2


async def test_a_restart_keeps_the_deadline_counted_from_the_deal(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quick_ticks: None,
) -> None:
    clock = Clock()
    async with bot_on(standin, db_path, clock) as first:
        message = await challenge_message(
            standin, world.no_channel, world.alice, world.bob, minutes=10
        )
        assert t("nb", "rule.time_limit", count=10, n=10) in text_of(message)
        game_id = game_id_of(message)
        dealt = await press(standin, message, f"krig:accept:{game_id}", world.bob)
        deadline = first.service.time_limits.deadline(await game_row(first, game_id))
        assert deadline == clock.now + timedelta(minutes=10)
        when = discord.utils.format_dt(deadline, "t")
        assert t("nb", "status.time_left", count=10, n=10, when=when) in text_of(dealt)
        await flip(standin, world.no_channel, world.alice)
    clock.advance(minutes=6)

    async with bot_on(standin, db_path, clock) as restarted:
        rec = await standin.slash("krig status", user=world.alice, channel=world.no_channel)
        status = await answer_of(standin, rec)
        assert status.ephemeral
        assert t("nb", "status.time_left", count=4, n=4, when=when) in text_of(status)
        played = await flip(standin, world.no_channel, world.bob)
        assert not played.ephemeral
        assert TIME_UP not in text_of(played)
        watcher = standin.watch(world.no_channel)

        clock.advance(minutes=4)
        await watcher.next("create", predicate=time_up, timeout=5)

        row = await game_row(restarted, game_id)
        assert (row.status, row.round) == ("finished", 2)


async def test_a_deadline_that_passed_while_the_bot_was_down_ends_the_game_at_start_up(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quick_ticks: None,
) -> None:
    clock = Clock()
    async with bot_on(standin, db_path, clock):
        table = await start_game(standin, world.no_channel, world.alice, world.bob, minutes=5)
        await flip(standin, world.no_channel, world.alice, count=4)
    clock.advance(hours=2)
    watcher = standin.watch(world.no_channel)

    async with bot_on(standin, db_path, clock) as restarted:
        event = await watcher.next("create", predicate=time_up, timeout=5)

        row = await game_row(restarted, table.game_id)
        assert (row.status, row.round) == ("finished", 4)
        assert row.result is not None
        assert row.result["reason"] == "time_limit"
        assert t("nb", "over.reason.time_limit", count=5, n=5) in visible(text_of(event.revision))


async def test_a_steal_war_battle_under_way_is_played_out_before_the_cards_are_counted(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    plan = STEAL_ONE
    players = [world.alice, world.bob]
    seeds.fix(plan.seed)
    # The battle's choices are still open when the time limit is up (the clock moves for both).
    bot.service.choices.choice_ttl = timedelta(minutes=5)
    started = await start_game(standin, world.no_channel, *players, variant="stjel", minutes=3)
    table = started.message
    await play_to_choice(standin, table, plan, players)
    before = (await game_row(bot, started.game_id)).round

    clock.advance(minutes=3)
    rec = await standin.slash("krig status", user=world.alice, channel=world.no_channel)
    assert t("nb", "status.time_up") in text_of(await answer_of(standin, rec))
    assert (await game_row(bot, started.game_id)).status == "running"  # the battle goes on
    thief = plan.choice.seat
    private = await look(standin, table, players[thief])
    assert private.message is not None
    play_id = next(cid for cid in buttons(private.message) if cid.startswith("krig:play:"))
    watcher = standin.watch(world.no_channel)
    await press(standin, private.message, play_id, players[thief])

    reason = t("nb", "over.reason.time_limit", count=3, n=3)
    await watcher.next(
        "edit",
        predicate=lambda e: e.message is table and reason in visible(text_of(e.revision)),
    )
    row = await game_row(bot, started.game_id)
    assert (row.status, row.round) == ("finished", before + 1)
    assert row.result is not None
    assert row.result["reason"] == "time_limit"
    assert [cid.split(":")[1] for cid in buttons(table)] == ["rematch"]  # no Look, no Flip
    assert names(plan)[0] in text_of(table)


async def test_minutes_outside_the_engine_s_range_are_refused(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    start = next(
        option for option in standin.synced_command("krig")["options"] if option["name"] == "start"
    )
    minutes = next(option for option in start["options"] if option["name"] == "minutes")
    assert (minutes["min_value"], minutes["max_value"]) == (1, MAX_TIME_LIMIT)
    assert minutes["name_localizations"]["no"] == t("nb", "opt.minutes.name")
    assert minutes["name_localizations"]["sv-SE"] == t("sv", "opt.minutes.name")
    assert minutes["description_localizations"]["da"] == t("da", "opt.minutes.desc")

    for wrong in (0, MAX_TIME_LIMIT + 1):
        with pytest.raises(OptionError, match="must be within"):
            await challenge(standin, world.no_channel, world.alice, world.bob, minutes=wrong)
    # A client that ignores the limits is answered privately, and nothing is challenged.
    rec = await standin.slash_raw(
        "krig",
        user=world.alice,
        channel=world.no_channel,
        options=[
            {
                "type": 1,
                "name": "start",
                "options": [
                    {"name": "opponent", "type": 6, "value": str(world.bob.id)},
                    {"name": "minutes", "type": 4, "value": MAX_TIME_LIMIT + 1},
                ],
            }
        ],
        resolved={"users": {str(world.bob.id): world.bob.to_json()}},
    )
    answer = await answer_of(standin, rec)
    assert answer.ephemeral
    assert public_messages(standin, world.no_channel) == []


async def test_each_game_of_a_match_has_its_own_time_limit(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob, best_of=3, minutes=5)
    await flip(standin, world.no_channel, world.alice, count=2)
    watcher = standin.watch(world.no_channel)

    clock.advance(minutes=5)
    first_end = await watcher.next("create", predicate=time_up, timeout=5)

    (next_flip,) = [c for c in buttons(first_end.revision) if c.startswith("krig:flip:")]
    second = int(next_flip.split(":")[2])
    assert bot.service.time_limits.deadline(await game_row(bot, second)) == clock.now + timedelta(
        minutes=5
    )
    clock.advance(minutes=4)
    answer = await flip(standin, world.no_channel, world.bob)
    assert TIME_UP not in text_of(answer)
    clock.advance(minutes=1)
    await watcher.next("create", predicate=time_up, timeout=5)
    row = await game_row(bot, second)
    assert row.result is not None
    assert (row.status, row.round, row.result["reason"]) == ("finished", 1, "time_limit")


async def test_autoplay_stops_when_the_time_is_up_and_the_cards_are_counted(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seeds: ChosenSeeds,
) -> None:
    # The timer sleeps on: autoplay's own next step finds the time is up.
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 3600.0)
    seeds.fix(LONG_SEED)
    clock = Clock()
    storage = await Storage.open(db_path)
    settings = make_settings(db_path, autoplay_seconds=AUTO_SECONDS)
    bot = KrigBot(settings, storage, seeds=seeds, guild_ready_timeout=0.05)
    bot.service.registry.clock = clock
    try:
        async with run_bot(bot, standin):
            table = await start_game(standin, world.no_channel, world.alice, world.bob, minutes=2)
            answer = await command(standin, world.no_channel, world.alice, "auto", speed="slow")
            message = answer.message
            assert message is not None
            await edit_of(standin, message, lambda text: t("nb", "table.title", round=1) in text)
            start = len(standin.channel_events.items)

            clock.advance(minutes=2)
            await standin.channel_events.wait_index(
                start, lambda e: TIME_UP in text_of(e.revision), 10, "the time is up"
            )
            # Autoplay's message says it is over: it shows the count, or says autoplay ended.
            ended = t("nb", "auto.ended")
            await standin.channel_events.wait_index(
                start,
                lambda e: (
                    e.message is message
                    and (TIME_UP in text_of(e.revision) or e.revision.content == ended)
                    and not any(cid.startswith("krig:auto:") for cid in buttons(e.revision))
                ),
                10,
                "the autoplay message saying the game is over",
            )

            row = await game_row(bot, table.game_id)
            assert row.result is not None
            assert (row.status, row.result["reason"]) == ("finished", "time_limit")
            assert not row.extra.get("autoplay")
    finally:
        await storage.close()


async def test_a_forfeit_after_the_deadline_counts_the_cards_instead(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    seeds: ChosenSeeds,
) -> None:
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 3600.0)  # the timer sleeps on
    seed, expected = seed_with_a_leader(2)
    seeds.fix(seed)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, minutes=1)
    await flip(standin, world.no_channel, world.alice, count=2)
    rec = await standin.slash("krig forfeit", user=world.alice, channel=world.no_channel)
    confirm = (await answer_of(standin, rec)).message
    assert confirm is not None
    watcher = standin.watch(world.no_channel)

    clock.advance(minutes=1)
    yes = f"krig:forfeit:{table.game_id}:{world.alice.id}:yes"
    answer = await press(standin, confirm, yes, world.alice)

    assert confirm.content == t("nb", "time.forfeit_too_late")
    assert answer.type == 7  # the private confirmation is updated
    announced = await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    assert TIME_UP in text_of(announced.revision)
    row = await game_row(bot, table.game_id)
    assert row.result is not None
    assert row.result["reason"] == "time_limit"
    assert row.result["winners"] == list(expected.copy().end_by_counting().winners)


async def test_a_steal_war_flip_after_the_deadline_begins_no_battle(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 3600.0)  # the timer sleeps on
    started = await start_game(
        standin, world.no_channel, world.alice, world.bob, variant="stjel", minutes=2
    )

    clock.advance(minutes=2)
    answer = await press(standin, started.message, flip_button(started.message), world.bob)

    assert TIME_UP in text_of(answer)
    assert [cid.split(":")[1] for cid in buttons(answer)] == ["rematch"]
    row = await game_row(bot, started.game_id)
    assert row.result is not None
    assert (row.status, row.round, row.result["reason"]) == ("finished", 0, "time_limit")
    assert row.result["drawn"] == [0, 1]  # 27 cards each: nobody was ahead


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_flip_just_after_the_time_limit_ended_the_game_says_the_time_is_up(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    seed, _ = seed_with_a_leader(2)
    seeds.fix(seed)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, minutes=1)
    await flip(standin, world.no_channel, world.bob, count=2)
    watcher = standin.watch(world.no_channel)
    clock.advance(minutes=1)
    await watcher.next("create", predicate=time_up, timeout=5)

    late = await flip(standin, world.no_channel, world.alice)
    pressed = await forged_press(standin, table.message, flip_button(table.message), world.bob)
    forfeit = await command(standin, world.no_channel, world.alice, "forfeit")

    for answer, lang in ((late, "nb"), (pressed, "sv")):
        assert answer.ephemeral
        assert pattern(lang, "time.flip_too_late").fullmatch(answer.content or ""), answer.content
    assert forfeit.ephemeral
    assert forfeit.content == t("nb", "time.forfeit_too_late")
    assert (await game_row(bot, table.game_id)).round == 2
