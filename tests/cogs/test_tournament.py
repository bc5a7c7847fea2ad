"""/krig tournament through Discord: sign-up, matches in threads, the bracket, the champion."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from krigbot.adapter import tournaments as tournament_adapter
from krigbot.adapter.tournaments import open_thread
from krigbot.bot import KrigBot, finish_or_warn
from krigbot.cogs.tournament import TournamentCog
from krigbot.config import Shards
from krigbot.engine.tournament import Format, most_players, total_rounds
from krigbot.i18n import t
from krigbot.sessions import deadlines
from krigbot.sessions.tournaments import Tournament, checked_format
from krigbot.storage import GameRow, StorageError
from tests.standin import ChannelEvent, DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.standin.messages import Message
from tests.standin.records import RequestRecord
from tests.standin.world import User
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    ChosenSeeds,
    Clock,
    answer_of,
    buttons,
    flip,
    settled,
    text_of,
)

ALICE_WINS = 132
"""Standard: 34 rounds, seat 0 takes every card."""
TOURNAMENT_SEED = 7


@pytest.fixture
def quick_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the deadline scheduler look at the (test's) clock every few milliseconds."""
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 0.02)


def is_table(event: ChannelEvent) -> bool:
    return (
        event.kind == "create"
        and event.message.channel.is_thread
        and any(custom_id.startswith("krig:flip:") for custom_id in buttons(event.revision))
    )


def users_of(world: SampleWorld) -> dict[int, User]:
    return {user.id: user for user in (world.alice, world.bob, world.carol, world.moderator)}


async def create(
    standin: DiscordStandIn, world: SampleWorld, **options: object
) -> tuple[Message, int]:
    """Create a tournament in the Norwegian channel as the moderator; return its sign-up."""
    options.setdefault("name", "Cup")
    options.setdefault("signup_minutes", 0)
    answer = await command(
        standin, world.no_channel, world.moderator, "tournament create", **options
    )
    assert not answer.ephemeral, text_of(answer)
    assert answer.message is not None
    (join, leave) = buttons(answer)
    assert join.startswith("krig:tjoin:")
    assert leave.startswith("krig:tleave:")
    return answer.message, int(join.split(":")[2])


async def press(standin: DiscordStandIn, message: Message, custom_id: str, user: User) -> str:
    answer = await answer_of(standin, await standin.click(message, custom_id, user=user))
    assert answer.ephemeral
    return text_of(answer)


async def play_table(standin: DiscordStandIn, event: ChannelEvent, world: SampleWorld) -> None:
    """Play the game a thread's table shows to its end, as one of its players."""
    thread = event.message.channel
    mentioned = [
        user for uid, user in users_of(world).items() if f"<@{uid}>" in text_of(event.revision)
    ]
    answer = await flip(standin, thread, mentioned[0], count=50)
    assert "🏆" in text_of(answer), text_of(answer)


async def test_a_knockout_from_sign_up_to_champion(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 4)
    signup, tournament_id = await create(standin, world)
    assert t("nb", "tournament.signup.title", name="Cup") in text_of(signup)

    joined = await press(standin, signup, f"krig:tjoin:{tournament_id}", world.alice)
    assert joined == t("nb", "tournament.joined", name="Cup")
    assert (await command(standin, world.no_channel, world.bob, "tournament join")).ephemeral
    await press(standin, signup, f"krig:tjoin:{tournament_id}", world.carol)
    left = await press(standin, signup, f"krig:tleave:{tournament_id}", world.carol)
    assert left == t("en", "tournament.left", name="Cup")  # carol reads English
    await press(standin, signup, f"krig:tjoin:{tournament_id}", world.carol)
    await settled()
    listed = text_of(signup)
    assert t("nb", "tournament.signup.players", n=3, size=64) in listed
    assert all(name in listed for name in ("Alice", "Bob", "Carol"))

    watcher = standin.watch()
    started = await command(standin, world.no_channel, world.moderator, "tournament start")
    assert t("nb", "tournament.started", name="Cup") in text_of(started)
    first = await watcher.next(predicate=is_table, timeout=10)

    thread = first.message.channel
    assert thread.parent is world.no_channel
    assert thread.name.startswith(t("nb", "tournament.thread", round=1, a="", b="").split(" ")[0])
    row = await bot.storage.games.active_game(thread.id)
    assert row is not None
    assert set(row.players) <= thread.thread_members  # the players were added
    await play_table(standin, first, world)

    final = await watcher.next(predicate=is_table, timeout=10)
    assert final.message.channel is not thread
    await play_table(standin, final, world)
    crowned = await watcher.next(
        "create",
        predicate=lambda e: (
            e.message.channel is world.no_channel
            and "Cup" in text_of(e.revision)
            and "🏆" in text_of(e.revision)
        ),
        timeout=10,
    )
    await settled()

    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.status == "finished"
    assert f"<@{stored.champion_id}>" in text_of(crowned.revision)
    assert not buttons(signup)
    boards = [
        m
        for m in standin.messages(world.no_channel, include_ephemeral=False)
        if t("nb", "tournament.round", round=1, total=2) in text_of(m)
    ]
    assert len(boards) == 1  # one bracket message, edited in place
    champion_name = users_of(world)[stored.champion_id or 0].display_name
    board = text_of(boards[0])
    assert t("nb", "tournament.champion", name=champion_name) in board
    assert t("nb", "tournament.seed", seed=TOURNAMENT_SEED) in board
    assert len(boards[0].history) >= 2
    assert [name for name, _ in boards[0].files] == ["bracket.png"]  # its picture, redrawn
    assert boards[0].embeds[0]["image"]["url"] == "attachment://bracket.png"


async def test_refusals_are_told_only_to_the_user_in_their_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    async def refused(user: User, sub: str, /, **options: object) -> str:
        answer = await command(standin, world.no_channel, user, sub, **options)
        assert answer.ephemeral
        return text_of(answer)

    assert await refused(world.alice, "tournament create", name="x") == t(
        "nb", "tournament.err.moderator"
    )
    assert await refused(world.alice, "tournament join") == t("nb", "tournament.err.here")
    assert await refused(world.bob, "tournament start") == t("sv", "tournament.err.here")
    signup, tournament_id = await create(standin, world, size=2)
    assert await refused(world.moderator, "tournament create", name="y") == t(
        "nb", "tournament.err.busy"
    )
    assert await refused(world.alice, "tournament start") == t("nb", "tournament.err.organiser")
    assert await refused(world.moderator, "tournament start") == t("nb", "tournament.err.too_few")
    assert await refused(world.carol, "tournament leave") == t("en", "tournament.err.not_joined")
    await press(standin, signup, f"krig:tjoin:{tournament_id}", world.alice)
    assert await press(standin, signup, f"krig:tjoin:{tournament_id}", world.alice) == t(
        "nb", "tournament.err.joined"
    )
    await press(standin, signup, f"krig:tjoin:{tournament_id}", world.bob)
    assert await press(standin, signup, f"krig:tjoin:{tournament_id}", world.carol) == t(
        "en", "tournament.err.full", size=2
    )
    assert await refused(world.alice, "tournament cancel") == t("nb", "tournament.err.organiser")


async def test_a_server_that_denies_threads_or_the_role_is_told_at_create_time(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    champion = standin.add_role(world.no_guild, "Champion")
    bot_role = world.no_guild.bot_role
    assert bot_role is not None

    above = await command(
        standin, world.no_channel, world.moderator, "tournament create", name="x", role=champion
    )
    assert above.ephemeral
    assert text_of(above) == t("nb", "tournament.err.role", role="Champion")
    standin.set_overwrite(world.no_channel, world.no_guild.everyone, deny=["create_public_threads"])
    no_threads = await command(
        standin, world.no_channel, world.moderator, "tournament create", name="x"
    )
    assert no_threads.ephemeral
    assert text_of(no_threads) == t("nb", "tournament.err.threads")
    assert await bot.storage.tournaments.open_in(world.no_channel.id) is None


async def test_the_champion_is_given_the_role_where_the_bot_may(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    champion = standin.add_role(world.no_guild, "Champion")
    bot_role = world.no_guild.bot_role
    assert bot_role is not None
    bot_role.permissions |= 1 << 28  # Manage Roles
    standin.move_role(bot_role, champion.position + 1)
    signup, tournament_id = await create(standin, world, role=champion)
    for user in (world.alice, world.bob):
        await press(standin, signup, f"krig:tjoin:{tournament_id}", user)
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    table = await watcher.next(predicate=is_table, timeout=10)

    await play_table(standin, table, world)
    await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is world.no_channel and "🏆" in text_of(e.revision),
        timeout=10,
    )
    await settled()

    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.champion_id is not None
    assert champion in world.no_guild.members[stored.champion_id].roles


async def test_cancel_ends_the_sign_up_and_status_lists_the_servers_tournaments(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    signup, tournament_id = await create(standin, world, signup_minutes=30)
    await press(standin, signup, f"krig:tjoin:{tournament_id}", world.alice)

    listed = await command(standin, world.no_channel, world.carol, "tournament status")
    assert listed.ephemeral
    assert t("en", "tournament.signup.title", name="Cup") in text_of(listed)
    assert "Alice" in text_of(listed)
    denied = await command(standin, world.no_channel, world.alice, "tournament cancel")
    assert denied.ephemeral
    cancelled = await command(standin, world.no_channel, world.moderator, "tournament cancel")
    await settled()

    assert text_of(cancelled) == t("nb", "tournament.cancelled", name="Cup")
    assert t("nb", "tournament.cancelled.organiser") in text_of(signup)
    assert not buttons(signup)
    after = await command(standin, world.no_channel, world.carol, "tournament status")
    assert text_of(after) == t("en", "tournament.status.none")


async def test_a_no_show_is_counted_out_at_the_round_deadline(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world, match_minutes=10)
    for user in (world.alice, world.bob):
        await press(standin, signup, f"krig:tjoin:{tournament_id}", user)
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    table = await watcher.next(predicate=is_table, timeout=10)
    thread = table.message.channel

    clock.advance(minutes=10, seconds=1)
    ended = await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is thread and not is_table(e),
        timeout=10,
    )
    await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is world.no_channel and "🏆" in text_of(e.revision),
        timeout=10,
    )
    await settled()

    assert t("nb", "time.up_title") in text_of(ended.revision)
    game = await bot.storage.games.last_finished(world.no_guild.id, thread.id)
    assert game is not None
    assert game.result is not None
    assert game.result["reason"] == "time_limit"
    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.status == "finished"


@pytest.mark.parametrize("format", ["knockout", "swiss", "round_robin"])
async def test_a_tournament_goes_on_after_restarts_in_sign_up_mid_round_and_between_rounds(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds, format: str
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 10)
    async with running_bot(standin, db_path, seeds):
        signup, tournament_id = await create(standin, world, format=format)
        await press(standin, signup, f"krig:tjoin:{tournament_id}", world.alice)
    async with running_bot(standin, db_path, seeds):
        # The Join button of a message from before the restart still works.
        await press(standin, signup, f"krig:tjoin:{tournament_id}", world.bob)
        await press(standin, signup, f"krig:tjoin:{tournament_id}", world.carol)
        watcher = standin.watch()
        await command(standin, world.no_channel, world.moderator, "tournament start")
        first = await watcher.next(predicate=is_table, timeout=10)
        await settled()
    async with running_bot(standin, db_path, seeds) as mid_round:
        # The bot stops as the first round ends, before the next round's threads are opened.
        mid_round.service.tournaments.on_change.clear()
        await play_table(standin, first, world)
        await settled()
        between = await mid_round.storage.tournaments.get(tournament_id)
        assert between is not None
        assert len(between.state["bracket"]["rounds"]) == 2
    async with running_bot(standin, db_path, seeds) as restarted:
        people = [world.alice, world.bob, world.carol]
        await play_every_match(standin, world, restarted, people, tournament_id)
        stored = await restarted.storage.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.status == "finished"
    assert stored.champion_id in {user.id for user in people}
    bracket = stored.state["bracket"]
    assert len(bracket["rounds"]) == total_rounds(checked_format(format), 3)
    matches = sum(1 for each in bracket["rounds"] for pairing in each if pairing["b"] is not None)
    assert len(standin.threads(world.no_channel)) == matches


async def joined_players(
    standin: DiscordStandIn, world: SampleWorld, signup: Message, tournament_id: int, count: int
) -> list[User]:
    """Sign ``count`` members of the Norwegian server up, adding members beyond the sample's."""
    people = [world.alice, world.bob, world.carol]
    for n in range(len(people), count):
        user = standin.add_user(f"player{n}", f"Player {n}", locale="nb")
        standin.add_member(world.no_guild, user)
        people.append(user)
    for user in people[:count]:
        await press(standin, signup, f"krig:tjoin:{tournament_id}", user)
    return people[:count]


async def play_every_match(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    people: list[User],
    tournament_id: int,
) -> None:
    """Flip every game of every thread until the tournament is over, as its players would."""
    by_id = {user.id: user for user in people}
    for _ in range(200):
        await settled()
        stored = await bot.storage.tournaments.get(tournament_id)
        assert stored is not None
        if stored.status != "running":
            return
        playing = False
        for thread in standin.threads(world.no_channel):
            row = await bot.storage.games.active_game(thread.id)
            if row is not None:
                await flip(standin, thread, by_id[row.players[0]], count=50)
                playing = True
        assert playing, "a round is waiting for a game that nobody can play"
    raise AssertionError("the tournament never ended")


def case(format: Format, count: int, *, best_of: int = 1) -> object:
    """Return a tournament to play through Discord; slow (seconds) beyond a dozen matches."""
    rounds = total_rounds(format, count)
    matches = rounds * (count // 2) if format != "knockout" else count - 1
    marks = [pytest.mark.slow] if matches > 12 else []
    return pytest.param(format, count, best_of, rounds, marks=marks)


@pytest.mark.parametrize(
    ("format", "count", "best_of", "rounds"),
    [
        *(
            case(format, count)
            for format in ("knockout", "swiss", "round_robin")
            for count in (2, 3, 5, 8, 16, 64)
            if count <= most_players(format)
        ),
        case("knockout", 2, best_of=3),
        case("swiss", 5, best_of=3),
    ],
)
async def test_each_format_is_played_to_a_champion_in_threads(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    seeds: ChosenSeeds,
    format: str,
    count: int,
    best_of: int,
    rounds: int,
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 200)
    signup, tournament_id = await create(standin, world, format=format, best_of=best_of)
    people = await joined_players(standin, world, signup, tournament_id, count)
    await command(standin, world.no_channel, world.moderator, "tournament start")

    await play_every_match(standin, world, bot, people, tournament_id)

    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.status == "finished"
    assert stored.champion_id in {user.id for user in people}
    bracket = stored.state["bracket"]
    assert len(bracket["rounds"]) == rounds
    matches = sum(1 for each in bracket["rounds"] for pairing in each if pairing["b"] is not None)
    assert len(standin.threads(world.no_channel)) == matches
    games = await bot.storage.games.game_count("finished")
    assert games == matches * (2 if best_of == 3 else 1)  # seat 0 wins every game
    names = [
        m for m in standin.messages(world.no_channel) if f"<@{stored.champion_id}>" in text_of(m)
    ]
    assert len(names) == 1  # the announcement


async def test_a_player_who_leaves_mid_match_gives_it_up(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 2)
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    table = await watcher.next(predicate=is_table, timeout=10)
    thread = table.message.channel
    await flip(standin, thread, world.alice, count=3)

    left = await command(standin, world.no_channel, world.alice, "tournament leave")
    crowned = await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is world.no_channel and "🏆" in text_of(e.revision),
        timeout=10,
    )
    await settled()

    assert left.ephemeral
    assert text_of(left) == t("nb", "tournament.left", name="Cup")
    assert f"<@{world.bob.id}>" in text_of(crowned.revision)
    game = await bot.storage.games.last_finished(world.no_guild.id, thread.id)
    assert game is not None
    assert game.result is not None
    assert game.result["reason"] == "forfeit"
    gave_up = t("nb", "forfeit.done", name="Alice")
    assert [m for m in standin.messages(thread) if gave_up in text_of(m)]  # shown in the thread


async def test_the_sign_up_closes_at_its_time_and_the_first_round_opens(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world, signup_minutes=5)
    await joined_players(standin, world, signup, tournament_id, 2)
    watcher = standin.watch()

    clock.advance(minutes=5, seconds=1)
    table = await watcher.next(predicate=is_table, timeout=10)
    await settled()

    assert table.message.channel.parent is world.no_channel
    assert t("nb", "tournament.signup.closed") in text_of(signup)
    assert not buttons(signup)


async def test_a_tournament_on_postgresql_survives_a_restart_between_rounds(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds, pg_dsn: str
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 4)
    async with running_bot(standin, db_path, seeds, database=pg_dsn) as first:
        signup, tournament_id = await create(standin, world)
        people = await joined_players(standin, world, signup, tournament_id, 3)
        watcher = standin.watch()
        await command(standin, world.no_channel, world.moderator, "tournament start")
        opening = await watcher.next(predicate=is_table, timeout=10)
        # The bot stops as the first match ends, before the final's thread is opened.
        first.service.tournaments.on_change.clear()
        await play_table(standin, opening, world)
        await settled()
    async with running_bot(standin, db_path, seeds, database=pg_dsn) as restarted:
        await play_every_match(standin, world, restarted, people, tournament_id)
        stored = await restarted.storage.tournaments.get(tournament_id)
        assert stored is not None
        assert stored.status == "finished"
        assert len(standin.threads(world.no_channel)) == 2


async def test_stats_add_the_tournaments_a_player_played_and_won(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world)
    people = await joined_players(standin, world, signup, tournament_id, 2)
    await command(standin, world.no_channel, world.moderator, "tournament start")
    await play_every_match(standin, world, bot, people, tournament_id)
    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None
    champion = next(user for user in people if user.id == stored.champion_id)
    other = next(user for user in people if user is not champion)

    won = await command(standin, world.no_channel, world.alice, "stats", user=champion)
    lost = await command(standin, world.no_channel, world.alice, "stats", user=other)

    assert t("nb", "stats.tournaments_value", won=1, played=1) in text_of(won)
    assert t("nb", "stats.tournaments_value", won=0, played=1) in text_of(lost)


async def test_a_server_without_pictures_gets_the_bracket_as_text(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    await command(standin, world.no_channel, world.moderator, "settings", images="off")
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 2)

    await command(standin, world.no_channel, world.moderator, "tournament start")
    await settled()

    (board,) = [
        m
        for m in standin.messages(world.no_channel, include_ephemeral=False)
        if t("nb", "tournament.round", round=1, total=1) in text_of(m)
    ]
    assert board.files == []
    assert "image" not in board.embeds[0]


async def test_a_server_may_let_everyone_create_tournaments(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    refused = await command(standin, world.no_channel, world.alice, "tournament create", name="x")
    assert text_of(refused) == t("nb", "tournament.err.moderator")
    denied = await command(
        standin, world.no_channel, world.alice, "settings", tournaments="everyone"
    )
    assert denied.ephemeral

    allowed = await command(
        standin, world.no_channel, world.moderator, "settings", tournaments="everyone"
    )
    made = await command(
        standin, world.no_channel, world.alice, "tournament create", name="Alice's cup"
    )

    assert allowed.ephemeral
    assert text_of(allowed) == t("nb", "settings.tournaments_everyone")
    assert not made.ephemeral
    assert t("nb", "tournament.signup.title", name="Alice's cup") in text_of(made)
    stored = await bot.storage.tournaments.open_in(world.no_channel.id)
    assert stored is not None
    assert stored.state["organiser"] == world.alice.id


async def test_a_player_discord_will_not_add_to_the_thread_still_gets_the_match_there(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    # Adding Bob to the thread fails: his match is dealt in the one thread all the same, and
    # its table's mention of him (which lets him in) goes out.
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world)
    for player in (world.alice, world.bob):
        await press(standin, signup, f"krig:tjoin:{tournament_id}", player)
    standin.fail_next("PUT", rf"/thread-members/{world.bob.id}$", status=403, code=50001)

    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    table = await watcher.next(predicate=is_table, timeout=10)

    thread = table.message.channel
    assert world.bob.id not in thread.thread_members
    assert f"<@{world.bob.id}>" in text_of(table.revision)
    assert [t.id for t in world.no_guild.threads] == [thread.id]
    row = await bot.storage.games.active_game(thread.id)
    assert row is not None
    assert set(row.players) == {world.alice.id, world.bob.id}


async def test_a_restore_that_cannot_reach_the_database_is_one_warning_not_a_lost_task_error(
    bot: KrigBot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A process that takes shards over (or starts) while PostgreSQL is out of reach.
    cog = bot.get_cog("Tournaments")
    assert isinstance(cog, TournamentCog)

    async def unreachable(shards: Shards | None = None) -> list[Tournament]:
        raise StorageError("Cannot reach the PostgreSQL server")

    monkeypatch.setattr(cog.parts.tournaments, "restore", unreachable)
    with caplog.at_level(logging.WARNING, logger="krigbot.bot"):
        await finish_or_warn(cog.restore(), "tournament-restore")
    assert caplog.messages == [
        "could not finish tournament-restore: Cannot reach the PostgreSQL server"
    ]


def thread_posts(standin: DiscordStandIn, world: SampleWorld) -> Callable[[RequestRecord], bool]:
    """Return a test for a request to open a thread under the tournament's channel."""
    path = re.compile(rf"^/channels/{world.no_channel.id}/threads$")
    return lambda request: request.method == "POST" and bool(path.search(request.path))


@pytest.mark.parametrize(
    ("status", "requests"),
    [
        (503, 1),  # a server error discord.py does not retry
        (429, 5),  # rate limited on each of discord.py's five tries
    ],
)
async def test_a_thread_discord_would_not_open_is_tried_again_and_the_players_told(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
    status: int,
    requests: int,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world, match_minutes=60)
    await joined_players(standin, world, signup, tournament_id, 2)
    standin.fail_next(
        "POST",
        rf"^/channels/{world.no_channel.id}/threads$",
        status=status,
        times=3 * requests,
        retry_after=0.01,
    )
    tries = standin.requests.cursor()
    watcher = standin.watch()
    failing = t("nb", "tournament.threads.failing", name="Cup")

    await command(standin, world.no_channel, world.moderator, "tournament start")
    for n in range(3):
        if n:
            clock.advance(minutes=5)  # past the next try, whatever its wait
        for _ in range(requests):
            await tries.next(predicate=thread_posts(standin, world), timeout=10)
        await settled()
        told = [m for m in standin.messages(world.no_channel) if failing in text_of(m)]
        assert len(told) == (1 if n == 2 else 0)  # told once it keeps failing
    clock.advance(minutes=5)
    table = await watcher.next(predicate=is_table, timeout=10)
    await settled()

    assert [thread.id for thread in standin.threads(world.no_channel)] == [table.message.channel.id]
    row = await bot.storage.games.active_game(table.message.channel.id)
    assert row is not None
    assert set(row.players) == {world.alice.id, world.bob.id}
    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.round_ends_at is not None


async def test_a_channel_that_stops_allowing_threads_is_told_once_and_the_tournament_waits(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world, match_minutes=10)
    await joined_players(standin, world, signup, tournament_id, 2)
    everyone = world.no_guild.everyone
    standin.set_overwrite(world.no_channel, everyone, deny=["create_public_threads"])
    tries = standin.requests.cursor()
    watcher = standin.watch()
    forbidden = t("nb", "tournament.threads.forbidden", name="Cup")

    await command(standin, world.no_channel, world.moderator, "tournament start")
    await tries.next(predicate=thread_posts(standin, world), timeout=10)
    await settled()
    clock.advance(minutes=11)  # past the next try, and past the round's deadline
    await tries.next(predicate=thread_posts(standin, world), timeout=10)
    await settled()

    told = [m for m in standin.messages(world.no_channel) if forbidden in text_of(m)]
    assert len(told) == 1
    waiting = await bot.service.tournaments.get(tournament_id)
    assert waiting is not None
    assert waiting.status == "running"
    assert waiting.bracket is not None
    assert not waiting.bracket.current[0].done  # not counted as a draw meanwhile
    standin.set_overwrite(world.no_channel, everyone)
    clock.advance(minutes=6)
    table = await watcher.next(predicate=is_table, timeout=10)
    await settled()

    assert len(standin.threads(world.no_channel)) == 1
    await play_table(standin, table, world)
    crowned = await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is world.no_channel and "🏆" in text_of(e.revision),
        timeout=10,
    )
    assert "🏆" in text_of(crowned.revision)


async def test_the_bracket_shows_the_round_clock_held_and_given_its_full_time_again(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world, match_minutes=10)
    await joined_players(standin, world, signup, tournament_id, 2)
    everyone = world.no_guild.everyone
    standin.set_overwrite(world.no_channel, everyone, deny=["create_public_threads"])
    tries = standin.requests.cursor()
    watcher = standin.watch()

    def ends(at: datetime) -> str:
        return t("nb", "tournament.round_ends", when=f"<t:{int(at.timestamp())}:R>")

    await command(standin, world.no_channel, world.moderator, "tournament start")
    await tries.next(predicate=thread_posts(standin, world), timeout=10)
    await settled()
    started = await bot.service.tournaments.get(tournament_id)
    assert started is not None
    assert started.board_message_id is not None
    assert started.round_ends_at is not None
    board = standin.message(started.board_message_id)
    assert ends(started.round_ends_at) in text_of(board)

    clock.advance(minutes=11)  # past the round's deadline: held, its thread still missing
    await tries.next(predicate=thread_posts(standin, world), timeout=10)
    await settled()
    assert ends(started.round_ends_at) not in text_of(board)
    assert t("nb", "tournament.round_held") in text_of(board)

    standin.set_overwrite(world.no_channel, everyone)
    clock.advance(minutes=6)
    await watcher.next(predicate=is_table, timeout=10)
    await settled()
    opened = clock() + timedelta(minutes=10)  # its full time from when its thread opened
    assert ends(opened) in text_of(board)
    assert t("nb", "tournament.round_held") not in text_of(board)


async def test_a_restart_while_threads_are_refused_does_not_tell_the_channel_again(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    everyone = world.no_guild.everyone
    forbidden = t("nb", "tournament.threads.forbidden", name="Cup")
    tries = standin.requests.cursor()

    def told() -> int:
        return sum(forbidden in text_of(m) for m in standin.messages(world.no_channel))

    async with running_bot(standin, db_path, seeds):
        signup, tournament_id = await create(standin, world, match_minutes=10)
        await joined_players(standin, world, signup, tournament_id, 2)
        standin.set_overwrite(world.no_channel, everyone, deny=["create_public_threads"])
        await command(standin, world.no_channel, world.moderator, "tournament start")
        await tries.next(predicate=thread_posts(standin, world), timeout=10)
        await settled()
        assert told() == 1
    async with running_bot(standin, db_path, seeds) as restarted:
        # The restarted bot tries the round's threads again, refused again: it says nothing.
        await tries.next(predicate=thread_posts(standin, world), timeout=10)
        await settled()
        assert told() == 1
        paused = await restarted.service.tournaments.get(tournament_id)
        assert paused is not None
        assert paused.told_forbidden
    standin.set_overwrite(world.no_channel, everyone)
    async with running_bot(standin, db_path, seeds) as allowed:
        watcher = standin.watch()
        await watcher.next(predicate=is_table, timeout=10)
        await settled()
        going = await allowed.service.tournaments.get(tournament_id)
    assert going is not None
    assert not going.told_forbidden  # a later refusal is told again
    assert told() == 1


@pytest.mark.parametrize("format", ["knockout", "swiss", "round_robin"])
async def test_a_restart_just_after_a_thread_was_made_adopts_it_rather_than_open_another(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    seeds: ChosenSeeds,
    monkeypatch: pytest.MonkeyPatch,
    format: str,
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 20)
    made = asyncio.Event()

    async def made_then_dies(*args: Any, **kwargs: Any) -> int:
        # The thread is made; the process dies before it can store the thread's id.
        await open_thread(*args, **kwargs)
        made.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async with running_bot(standin, db_path, seeds) as first:
        signup, tournament_id = await create(standin, world, format=format)
        people = await joined_players(standin, world, signup, tournament_id, 3)
        monkeypatch.setattr(tournament_adapter, "open_thread", made_then_dies)
        await command(standin, world.no_channel, world.moderator, "tournament start")
        await asyncio.wait_for(made.wait(), 10)
        stored = await first.service.tournaments.get(tournament_id)
        assert stored is not None
        assert None in stored.threads
    monkeypatch.undo()
    assert len(standin.threads(world.no_channel)) == 1

    async with running_bot(standin, db_path, seeds) as restarted:
        await play_every_match(standin, world, restarted, people, tournament_id)
        finished = await restarted.storage.tournaments.get(tournament_id)
    assert finished is not None
    assert finished.status == "finished"
    bracket = finished.state["bracket"]
    matches = sum(1 for each in bracket["rounds"] for pairing in each if pairing["b"] is not None)
    assert len(standin.threads(world.no_channel)) == matches  # one thread a match


async def test_a_thread_made_whose_answer_the_network_lost_is_found_not_opened_twice(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 2)
    standin.fail_next("POST", rf"^/channels/{world.no_channel.id}/threads$", drop=True)
    tries = standin.requests.cursor()
    watcher = standin.watch()

    await command(standin, world.no_channel, world.moderator, "tournament start")
    await tries.next(predicate=thread_posts(standin, world), timeout=10)
    await settled()
    (made,) = standin.threads(world.no_channel)  # made, though the bot never heard so
    clock.advance(minutes=1)
    table = await watcher.next(predicate=is_table, timeout=10)
    await settled()

    assert table.message.channel is made
    assert standin.threads(world.no_channel) == [made]
    assert {world.alice.id, world.bob.id} <= made.thread_members
    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.threads == (made.id,)


def writes_to(standin: DiscordStandIn, channel_ids: set[int], since: int) -> list[str]:
    """Return the paths of the bot's posts and edits to these channels since request ``since``."""
    return [
        request.path
        for request in standin.requests.items[since:]
        if request.method in ("POST", "PATCH")
        and any(request.path.startswith(f"/channels/{each}/") for each in channel_ids)
    ]


async def deleted(bot: KrigBot) -> asyncio.Future[Any]:
    """Return what ends once the bot heard on the gateway of a channel deleted."""
    return asyncio.ensure_future(bot.wait_for("guild_channel_delete", timeout=10))


async def test_a_channel_deleted_as_a_round_opens_cancels_the_tournament_and_its_games(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    seeds: ChosenSeeds,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 4)
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 4)
    lobby = standin.add_channel(world.no_guild, "lobby")
    opened: list[int] = []
    games: list[GameRow] = []
    deleted_at = 0

    async def deleted_before_the_second(*args: Any, **kwargs: Any) -> int:
        # A moderator deletes the channel as the round's second thread is asked for.
        nonlocal deleted_at
        if opened:
            games.extend(filter(None, [await bot.storage.games.active_game(opened[0])]))
            deleted_at = len(standin.requests.items)
            standin.delete_channel(world.no_channel)
        opened.append(await open_thread(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(tournament_adapter, "open_thread", deleted_before_the_second)
    heard = await deleted(bot)
    with caplog.at_level(logging.INFO, logger="krigbot.adapter.tournaments"):
        await command(standin, world.no_channel, world.moderator, "tournament start")
        await heard
        await settled()

    (first,) = opened
    (game,) = games
    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.status == "cancelled"
    assert stored.channel_gone
    ended = await bot.storage.games.get_game(game.id)
    assert ended is not None
    assert ended.status == "cancelled"  # ended with no result, as a cancel ends a game
    # Only the refused thread: nothing posted or edited where the channel and its threads were.
    assert writes_to(standin, {world.no_channel.id, first}, deleted_at) == [
        f"/channels/{world.no_channel.id}/threads"
    ]
    (told,) = [r for r in caplog.records if "deleted" in r.getMessage()]
    assert told.levelno == logging.INFO
    listed = await command(standin, lobby, world.carol, "tournament status")
    assert t("en", "tournament.cancelled.channel_gone") in text_of(listed)


async def test_a_channel_deleted_mid_round_cancels_the_tournament_and_ends_its_games_at_once(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 2)
    signup, tournament_id = await create(standin, world, match_minutes=600)
    await joined_players(standin, world, signup, tournament_id, 4)
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    tables = [await watcher.next(predicate=is_table, timeout=10) for _ in range(2)]
    await settled()
    threads = {table.message.channel.id for table in tables}
    games = [await bot.storage.games.active_game(thread) for thread in threads]
    lobby = standin.add_channel(world.no_guild, "lobby")
    deleted_at = len(standin.requests.items)
    heard = await deleted(bot)

    standin.delete_channel(world.no_channel)  # the bot hears of it on the gateway
    await heard
    await settled()

    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert (stored.status, stored.channel_gone) == ("cancelled", True)
    for game in games:
        assert game is not None
        ended = await bot.storage.games.get_game(game.id)
        assert ended is not None
        assert ended.status == "cancelled"
    assert writes_to(standin, {world.no_channel.id, *threads}, deleted_at) == []
    listed = await command(standin, lobby, world.carol, "tournament status")
    assert t("en", "tournament.cancelled.channel_gone") in text_of(listed)


async def test_a_channel_deleted_while_the_bot_was_away_is_found_gone_at_start(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_bot(standin, db_path):
        # The organiser starts it: no deadline would ever look at it again.
        signup, tournament_id = await create(standin, world, signup_minutes=0)
        await joined_players(standin, world, signup, tournament_id, 2)
    lobby = standin.add_channel(world.no_guild, "lobby")
    standin.delete_channel(world.no_channel)
    deleted_at = len(standin.requests.items)

    with caplog.at_level(logging.INFO, logger="krigbot.adapter.tournaments"):
        async with running_bot(standin, db_path) as restarted:
            await settled()
            stored = await restarted.service.tournaments.get(tournament_id)
            listed = await command(standin, lobby, world.carol, "tournament status")
            # Its place among the server's three open tournaments is free again.
            fresh = await command(standin, lobby, world.moderator, "tournament create", name="B")

    assert stored is not None
    assert (stored.status, stored.channel_gone) == ("cancelled", True)
    assert writes_to(standin, {world.no_channel.id}, deleted_at) == []
    assert any("deleted" in record.getMessage() for record in caplog.records)
    assert t("en", "tournament.cancelled.channel_gone") in text_of(listed)
    assert "Alice" in text_of(listed)
    assert not fresh.ephemeral


async def test_a_sign_up_whose_edit_finds_its_channel_unknown_is_cancelled_quietly(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    signup, tournament_id = await create(standin, world, signup_minutes=30)
    await joined_players(standin, world, signup, tournament_id, 1)
    # Discord says the channel is gone (deleted, its gateway event never heard).
    standin.fail_next(
        "PATCH",
        rf"^/channels/{world.no_channel.id}/messages/",
        status=404,
        code=10003,
        message="Unknown Channel",
    )
    failed = standin.requests.cursor()

    await press(standin, signup, f"krig:tjoin:{tournament_id}", world.bob)
    await failed.next(predicate=lambda r: r.method == "PATCH", timeout=10)
    await settled()
    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert (stored.status, stored.channel_gone) == ("cancelled", True)
    # Nothing more was asked of the channel: no second edit, no message.
    assert writes_to(standin, {world.no_channel.id}, failed.position) == []


async def test_a_deleted_sign_up_message_does_not_keep_the_bracket_from_being_posted(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 2)
    standin.store.delete(signup)  # a moderator tidies the channel
    watcher = standin.watch()

    await command(standin, world.no_channel, world.moderator, "tournament start")
    await watcher.next(predicate=is_table, timeout=10)
    await settled()

    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.board_message_id is not None
    board = standin.message(stored.board_message_id)
    assert t("nb", "tournament.round", round=1, total=1) in text_of(board)


async def test_a_deleted_bracket_message_is_posted_again_at_the_next_result(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(TOURNAMENT_SEED, *[ALICE_WINS] * 4)
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 4)
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    tables = [await watcher.next(predicate=is_table, timeout=10) for _ in range(2)]
    await settled()
    started = await bot.service.tournaments.get(tournament_id)
    assert started is not None
    assert started.board_message_id is not None
    standin.store.delete(standin.message(started.board_message_id))

    await play_table(standin, tables[0], world)
    await settled()

    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.board_message_id not in (None, started.board_message_id)
    board = standin.message(stored.board_message_id)
    assert not board.deleted
    assert t("nb", "tournament.round", round=1, total=2) in text_of(board)


async def test_a_match_thread_deleted_before_its_table_is_shown_is_opened_anew(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS, ALICE_WINS)
    signup, tournament_id = await create(standin, world)
    await joined_players(standin, world, signup, tournament_id, 2)
    made: list[int] = []

    async def made_then_deleted(*args: Any, **kwargs: Any) -> int:
        # A moderator deletes the first thread at once, before the bot posts the table in it.
        thread_id = await open_thread(*args, **kwargs)
        if not made:
            standin.delete_channel(standin.channels[thread_id])
        made.append(thread_id)
        return thread_id

    monkeypatch.setattr(tournament_adapter, "open_thread", made_then_deleted)
    tries = standin.requests.cursor()
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    await tries.next(predicate=thread_posts(standin, world), timeout=10)
    await settled()
    assert await bot.storage.games.active_game(made[0]) is None  # its game ended with it

    clock.advance(minutes=1)  # past the next try
    table = await watcher.next(predicate=is_table, timeout=10)
    await settled()

    assert len(made) == 2
    second = made[1]
    assert table.message.channel.id == second
    stored = await bot.service.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.threads == (second,)
    await play_table(standin, table, world)
    await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is world.no_channel and "🏆" in text_of(e.revision),
        timeout=10,
    )


@pytest.mark.parametrize("locked", [False, True])
async def test_a_match_thread_archived_for_inactivity_is_opened_again_by_the_bots_post(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    clock: Clock,
    quick_ticks: None,
    seeds: ChosenSeeds,
    caplog: pytest.LogCaptureFixture,
    locked: bool,
) -> None:
    seeds.fix(TOURNAMENT_SEED, ALICE_WINS)
    signup, tournament_id = await create(standin, world, match_minutes=90)
    await joined_players(standin, world, signup, tournament_id, 2)
    watcher = standin.watch()
    await command(standin, world.no_channel, world.moderator, "tournament start")
    table = await watcher.next(predicate=is_table, timeout=10)
    thread = table.message.channel
    await settled()
    # Nobody wrote in it for an hour: Discord archives it (a moderator may have locked it too).
    standin.archive(thread, locked=locked)

    clock.advance(minutes=91)  # the round's deadline counts the match out
    await watcher.next(
        "create",
        predicate=lambda e: e.message.channel is world.no_channel and "🏆" in text_of(e.revision),
        timeout=10,
    )
    await settled()

    time_up = [m for m in standin.messages(thread) if t("nb", "time.up_title") in text_of(m)]
    if locked:
        # Discord's rule: only a thread that is not locked is opened again by a message.
        assert (thread.archived, time_up) == (True, [])
        assert any("could not show the end" in r.getMessage() for r in caplog.records)
    else:
        assert not thread.archived
        assert len(time_up) == 1
    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None
    assert stored.status == "finished"  # the match counted either way
