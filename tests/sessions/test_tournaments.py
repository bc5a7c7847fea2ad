"""Tournaments through the game service: sign-up, rounds, deadlines, leaving, restarts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from krigbot.config import Shards
from krigbot.engine.tournament import FORMATS, Format, advancing, most_players
from krigbot.sessions import Actor, LostWrite, Player, Refusal
from krigbot.sessions.tournaments import MOST_OPEN_PER_SERVER
from krigbot.storage import Storage
from tests.support.postgres import Cluster
from tests.support.tournaments import CHANNEL, GUILD, ORGANISER, Runner, entrants

ORGANISER_ACTS = Actor(ORGANISER.user_id)


@pytest.mark.parametrize(
    ("format", "count"),
    [
        *(
            pytest.param(format, count, marks=[pytest.mark.slow] if count == 64 else [])
            for format in FORMATS
            for count in (2, 3, 5, 8, 16, 64)
            if count <= most_players(format)
        ),
        ("round_robin", 4),
        ("round_robin", 10),
    ],
)
async def test_a_whole_tournament_is_played_to_a_champion(
    storage: Storage, format: Format, count: int
) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(count, format=format)
    await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)

    over = await runner.play_all(made.id)

    assert over.status == "finished"
    assert over.bracket is not None
    assert over.bracket.finished
    assert over.champion in {player.user_id for player in entrants(count)}
    stored = await storage.tournaments.get(made.id)
    assert stored is not None
    assert stored.champion_id == over.champion
    # Its games count as any game does: every match played is a finished game with results.
    games = [p for matches in over.bracket.rounds for p in matches if p.b is not None]
    assert await storage.games.game_count("finished") == len(games)
    if count <= 8:  # the leaderboard's length
        board = await storage.stats.leaderboard(GUILD)
        assert sum(row.games for row in board) == 2 * len(games)


async def test_the_knockout_champion_won_the_final_game(storage: Storage) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(4)
    await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)

    over = await runner.play_all(made.id)

    assert over.bracket is not None
    final = over.bracket.current[0]
    assert advancing(over.bracket, final) == over.champion
    thread = over.threads[0]
    assert thread is not None
    last = await storage.games.last_finished(GUILD, thread)
    assert last is not None
    assert last.result is not None
    (seat,) = last.result["winners"]
    assert last.players[seat] == over.champion


async def test_a_best_of_three_match_deals_its_games_in_its_thread(storage: Storage) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(2, best_of=3)
    await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
    (first,) = await runner.open_round(made)

    await runner.play_out(first.channel_id)
    second = await storage.games.active_game(first.channel_id)

    assert second is not None
    assert second.extra["tournament"] == first.extra["tournament"]
    assert second.extra["match"]["id"] == first.id
    await runner.play_matches(first.channel_id)
    over = await runner.service.tournaments.get(made.id)
    assert over is not None
    assert over.status == "finished"


async def test_the_round_deadline_counts_out_unfinished_matches_and_pairs_the_next(
    storage: Storage,
) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(4, best_of=3, match_minutes=15)
    started = await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
    assert started.round_ends_at == runner.clock.now + timedelta(minutes=15)
    pending = runner.service.deadlines.pending(made.id, "tournament_round")
    assert pending is not None
    assert pending.at == started.round_ends_at
    rows = await runner.open_round(started)
    await runner.play_matches(rows[0].channel_id)  # one match is played, one sleeps

    early = await runner.service.tournaments.round_due(made.id)
    assert early is not None
    assert early.bracket is not None
    assert len(early.bracket.rounds) == 1  # not yet: the clock has not reached the deadline
    runner.clock.advance(minutes=16)
    moved = await runner.service.tournaments.round_due(made.id)

    assert moved is not None
    assert moved.bracket is not None
    assert len(moved.bracket.rounds) == 2
    asleep = await storage.games.last_finished(GUILD, rows[1].channel_id)
    assert asleep is not None
    assert asleep.result is not None
    assert asleep.result["reason"] == "time_limit"
    assert await storage.games.active_game(rows[1].channel_id) is None  # no next game dealt
    assert moved.round_ends_at == runner.clock.now + timedelta(minutes=15)


async def test_a_round_whose_thread_could_not_be_opened_waits_for_it_rather_than_draw(
    storage: Storage,
) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(4, match_minutes=15)
    started = await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
    assert started.bracket is not None
    # Discord opened the first match's thread, and would not open the second's.
    first = await runner.service.tournaments.open_match(made.id, 0, next(runner.threads))
    assert first is not None
    await runner.play_matches(first[0].channel_id)

    runner.clock.advance(minutes=16)
    waiting = await runner.service.tournaments.round_due(made.id)

    assert waiting is not None
    assert waiting.bracket is not None
    assert len(waiting.bracket.rounds) == 1
    assert not waiting.bracket.current[1].done  # not counted as a draw
    assert waiting.round_ends_at is None
    assert runner.service.deadlines.pending(made.id, "tournament_round") is None
    runner.clock.advance(hours=2)
    opened = await runner.service.tournaments.open_match(made.id, 1, next(runner.threads))
    assert opened is not None
    again = await runner.service.tournaments.get(made.id)
    assert again is not None
    # Its players have the round's whole time from when their thread opened.
    assert again.round_ends_at == runner.clock.now + timedelta(minutes=15)
    assert runner.service.deadlines.pending(made.id, "tournament_round") is not None
    await runner.play_matches(opened[0].channel_id)
    over = await runner.service.tournaments.get(made.id)
    assert over is not None
    assert over.bracket is not None
    assert len(over.bracket.rounds) == 2


async def test_a_player_who_leaves_forfeits_the_match_and_the_rest(storage: Storage) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(3, format="round_robin")
    started = await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
    assert started.bracket is not None
    rows = await runner.open_round(started)
    (playing,) = [p for p in started.bracket.current if p.b is not None]
    leaver = playing.a

    after = await runner.service.tournaments.leave(made.id, leaver)

    game = await storage.games.get_game(rows[0].id)
    assert game is not None
    assert game.status == "finished"
    assert game.result is not None
    assert game.result["reason"] == "forfeit"
    over = await runner.play_all(made.id)
    assert over.bracket is not None
    for matches in over.bracket.rounds:
        for pairing in matches:
            if leaver in pairing.players and pairing.b is not None:
                assert pairing.winner != leaver
    assert after.left == (leaver,)
    assert over.champion != leaver


async def test_signup_closes_at_its_time_starting_or_cancelling(storage: Storage) -> None:
    runner = Runner(storage)
    service = runner.service.tournaments
    lone = await service.create(
        guild_id=GUILD, channel_id=1, organiser=ORGANISER, name="Lone", signup_minutes=10
    )
    pair = await service.create(
        guild_id=GUILD, channel_id=2, organiser=ORGANISER, name="Pair", signup_minutes=10
    )
    await service.join(lone.id, entrants(1)[0])
    for player in entrants(2):
        await service.join(pair.id, player)
    assert runner.service.deadlines.pending(lone.id, "tournament_signup") is not None

    assert (await service.signup_due(pair.id)) is not None
    assert (await service.get(pair.id)).status == "signup"  # type: ignore[union-attr]
    runner.clock.advance(minutes=10)
    closed = await service.signup_due(lone.id)
    begun = await service.signup_due(pair.id)

    assert closed is not None
    assert (closed.status, closed.reason) == ("cancelled", "too_few")
    assert begun is not None
    assert begun.status == "running"


async def test_a_restart_counts_a_match_that_ended_while_the_bot_was_away(
    storage: Storage,
) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(2)
    started = await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
    (row,) = await runner.open_round(started)
    # The game ends and the process stops before the tournament hears of it.
    runner.service.registry.on_finish.clear()
    await runner.play_out(row.channel_id)
    assert (await storage.tournaments.get(made.id)).status == "running"  # type: ignore[union-attr]

    later = runner.restarted()
    (restored,) = await later.service.tournaments.restore()

    assert restored.status == "finished"
    assert restored.champion is not None


async def test_a_restart_between_pairing_and_dealing_deals_in_the_remembered_thread(
    storage: Storage,
) -> None:
    runner = Runner(storage)
    made = await runner.signed_up(2)
    started = await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
    # The process stopped before any match was dealt.
    later = runner.restarted()
    (restored,) = await later.service.tournaments.restore()
    assert later.service.deadlines.pending(made.id, "tournament_round") is not None
    assert restored.threads == (None,)

    dealt = await later.service.tournaments.open_match(started.id, 0, 777)
    again = await later.restarted().service.tournaments.open_match(started.id, 0)

    assert dealt is not None
    assert again is not None
    assert dealt[0].id == again[0].id
    assert dealt[0].channel_id == 777


async def test_refusals_name_what_is_wrong(storage: Storage) -> None:
    runner = Runner(storage)
    service = runner.service.tournaments
    made = await runner.signed_up(2, size=2)

    async def refused(work: object) -> str:
        with pytest.raises(Refusal) as caught:
            await work  # type: ignore[misc]
        return caught.value.key

    assert await refused(service.join(made.id, entrants(3)[2])) == "tournament.err.full"
    assert await refused(service.join(made.id, entrants(1)[0])) == "tournament.err.joined"
    assert await refused(service.join(made.id, Player(77, "Bot", bot=True))) in {
        "tournament.err.bot",
        "tournament.err.full",
    }
    assert await refused(service.leave(made.id, 4242)) == "tournament.err.not_joined"
    assert await refused(service.begin(made.id, Actor(4242))) == "tournament.err.organiser"
    assert await refused(service.cancel(made.id, Actor(4242))) == "tournament.err.organiser"
    assert (
        await refused(
            service.create(guild_id=GUILD, channel_id=CHANNEL, organiser=ORGANISER, name="x")
        )
        == "tournament.err.busy"
    )
    assert (
        await refused(
            service.create(
                guild_id=GUILD, channel_id=3, organiser=ORGANISER, name="x", variant="lag"
            )
        )
        == "tournament.err.teams"
    )
    assert (
        await refused(
            service.create(
                guild_id=GUILD,
                channel_id=3,
                organiser=ORGANISER,
                name="x",
                format="round_robin",
                size=11,
            )
        )
        == "tournament.err.size"
    )
    for channel in range(MOST_OPEN_PER_SERVER - 1):
        await service.create(
            guild_id=GUILD, channel_id=200 + channel, organiser=ORGANISER, name="x"
        )
    assert (
        await refused(service.create(guild_id=GUILD, channel_id=300, organiser=ORGANISER, name="x"))
        == "tournament.err.cap"
    )
    lone = await service.get(made.id)
    assert lone is not None
    await service.leave(made.id, entrants(1)[0].user_id)
    assert await refused(service.begin(made.id, ORGANISER_ACTS)) == "tournament.err.too_few"
    cancelled = await service.cancel(made.id, Actor(4242, moderator=True))
    assert (cancelled.status, cancelled.reason) == ("cancelled", "organiser")
    assert await refused(service.join(made.id, entrants(1)[0])) == "tournament.err.closed"


async def test_a_process_that_lost_the_servers_shard_changes_no_tournament(
    pg_dsn: str, postgres: Cluster
) -> None:
    async with await Storage.open(pg_dsn) as storage:
        runner = Runner(storage)
        epochs = (await storage.claims.beat("me", 1, 10.0)).held
        runner.service.registry.hold_shards(Shards(1, (0,), auto=True), epochs)
        made = await runner.signed_up(2)
        postgres.psql(
            "UPDATE shard_claims SET expires_at = clock_timestamp() - INTERVAL '1 second'",
            pg_dsn,
        )

        with pytest.raises(LostWrite):
            await runner.service.tournaments.begin(made.id, ORGANISER_ACTS)
        with pytest.raises(LostWrite):
            await runner.service.tournaments.join(made.id, Player(9, "Late"))

        stored = await runner.service.tournaments.get(made.id)
        assert stored is not None
        assert stored.status == "signup"
        assert [entrant.name for entrant in stored.players] == ["P1", "P2"]


async def test_a_tournament_whose_channel_went_ends_its_games_and_is_listed_for_a_day(
    storage: Storage,
) -> None:
    runner = Runner(storage)
    service = runner.service.tournaments
    made = await runner.signed_up(4)
    await service.begin(made.id, ORGANISER_ACTS)
    rows = await runner.open_round(made)
    await runner.play_out(rows[0].channel_id)  # one match decided, the other still played

    ended = await service.channel_gone(made.id)

    assert [row.id for row in ended or []] == [rows[1].id]
    called_off = await storage.games.get_game(rows[1].id)
    assert called_off is not None
    assert called_off.status == "cancelled"
    assert await service.channel_gone(made.id) is None  # over already
    (listed,) = await service.in_server(GUILD)
    assert (listed.status, listed.channel_gone) == ("cancelled", True)
    other = await runner.signed_up(2)
    await service.cancel(other.id, ORGANISER_ACTS)
    assert [each.id for each in await service.in_server(GUILD)] == [made.id]
    runner.clock.advance(hours=25)
    assert await service.in_server(GUILD) == []


async def test_status_lists_no_more_than_the_three_latest_tournaments_whose_channel_went(
    storage: Storage,
) -> None:
    runner = Runner(storage)
    service = runner.service.tournaments
    gone = []
    for _ in range(MOST_OPEN_PER_SERVER + 2):
        made = await runner.signed_up(1)
        await service.channel_gone(made.id)
        gone.append(made.id)
    still = await runner.signed_up(1)

    listed = [each.id for each in await service.in_server(GUILD)]

    # One message carries at most ten embeds: the open ones, then the latest gone.
    assert listed == [still.id, *gone[-MOST_OPEN_PER_SERVER:]]
