"""The game service without Discord: damaged saves, restarts and challenges that ran out of time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from krigbot.engine import Game, Rules
from krigbot.sessions import ENDING, DeadlineKind, GameService, Player, Refusal
from krigbot.storage import GameRow, PartnerRecord, Storage
from tests.support.deals import deal
from tests.support.players import Clock
from tests.support.sessions import GUILD, dealt

ALICE, BOB = Player(1, "Alice"), Player(2, "Bob")
CAROL, DAVE = Player(3, "Carol"), Player(4, "Dave")


async def damage(storage: Storage, row: GameRow, **broken: object) -> None:
    """Overwrite a running game's saved state with a damaged copy."""
    current = await storage.games.get_game(row.id)
    assert current is not None
    assert current.state is not None
    saved = await storage.games.save_round(
        row.id,
        expected_round=current.round,
        state={**current.state, **broken},
        round=current.round,
        now=current.updated_at,
    )
    assert saved


async def test_a_game_whose_save_cannot_be_read_is_ended_and_frees_its_channel(
    storage: Storage,
) -> None:
    row = await dealt(GameService(storage), channel_id=100)
    await damage(storage, row, piles=[[999]])
    fresh = GameService(storage)  # another process: nothing of the game in memory

    with pytest.raises(Refusal) as refused:
        await fresh.play.flip(100, ALICE.user_id)

    assert refused.value.key == "err.unreadable"
    ended = await storage.games.get_game(row.id)
    assert ended is not None
    assert (ended.status, ended.result) == ("abandoned", {"error": "unreadable"})
    assert (await dealt(fresh, channel_id=100)).status == "running"  # as the refusal promises


async def test_restore_keeps_good_games_and_challenges_and_ends_damaged_ones(
    storage: Storage,
) -> None:
    first = GameService(storage)
    good = await dealt(first, channel_id=100)
    await first.play.flip(100, BOB.user_id, 5)
    damaged = await dealt(first, channel_id=200)
    await damage(storage, damaged, piles="not piles")
    odd = await dealt(first, channel_id=300)
    await damage(storage, odd, piles=[[999]])  # the engine fails on this with AttributeError
    challenge = await first.challenges.challenge(
        guild_id=GUILD,
        channel_id=400,
        challenger=BOB,
        opponents=[ALICE],
        variant="standard",
        options={},
    )

    restarted = GameService(storage)
    challenges, broken = await restarted.recovery.restore()
    # Standard games are read when first used; the check for damaged ones runs after start-up.
    unreadable = await restarted.recovery.find_unreadable()

    assert [row.id for row in challenges] == [challenge.row.id]
    assert broken == []
    assert sorted(row.id for row in unreadable) == sorted([damaged.id, odd.id])
    played = await restarted.play.flip(100, ALICE.user_id)
    expected = Game.new(Rules.from_dict(good.rules), good.seed)
    for _ in range(6):
        expected.play_round()
    assert played.game.to_dict() == expected.to_dict()


async def test_a_challenge_answered_after_its_time_is_reported_expired_for_its_message(
    storage: Storage,
) -> None:
    clock = Clock()
    service = GameService(storage, clock=clock)
    made = await service.challenges.challenge(
        guild_id=GUILD, channel_id=100, challenger=ALICE, opponents=[BOB], variant="fem", options={}
    )
    clock.advance(minutes=5)

    with pytest.raises(Refusal) as refused:
        await service.challenges.accept(made.row.id, BOB.user_id)

    assert refused.value.key == "err.challenge_over"
    expired = await service.challenges.expire(made.row.id)
    assert expired is not None
    assert expired.id == made.row.id


async def test_expiry_leaves_answered_challenges_alone(storage: Storage) -> None:
    service = GameService(storage)
    declined = await service.challenges.challenge(
        guild_id=GUILD, channel_id=100, challenger=ALICE, opponents=[BOB], variant="fem", options={}
    )
    await service.challenges.decline(declined.row.id, BOB.user_id)
    accepted = await dealt(service, channel_id=200)

    assert await service.challenges.expire(declined.row.id) is None
    assert await service.challenges.expire(accepted.id) is None
    running = await storage.games.get_game(accepted.id)
    assert running is not None
    assert running.status == "running"


async def test_a_team_draw_is_a_draw_for_both_members_of_both_teams(storage: Storage) -> None:
    service = GameService(storage)
    made = await service.challenges.challenge(
        guild_id=GUILD,
        channel_id=100,
        challenger=ALICE,
        opponents=[BOB, CAROL, DAVE],
        variant="lag",
        options={"face_down": 5},
    )
    for player in (BOB, CAROL, DAVE):
        accepted = await service.challenges.accept(made.row.id, player.user_id)
    # Carol and Dave (one of each team) lose their only card in round 1; in round 2 Alice and
    # Bob tie, both too short for a war of 5 down with the same cards left: both teams are out
    # together, a draw (rules §5, §9), though only Alice and Bob went out in that round.
    service.registry.adopt(
        accepted.row,
        deal(Rules.from_dict(made.row.rules), "AS 7S", "KH 7H 2H 3H 4H 5H", "2D", "3C"),
    )

    played = await service.play.flip(100, ALICE.user_id, count=2)

    assert played.outcome is not None
    assert played.outcome.is_draw
    board = await storage.stats.leaderboard(GUILD)
    assert sorted((row.user_id, row.draws, row.losses) for row in board) == [
        (ALICE.user_id, 1, 0),
        (BOB.user_id, 1, 0),
        (CAROL.user_id, 1, 0),
        (DAVE.user_id, 1, 0),
    ]
    for player, partner in ((ALICE, CAROL), (BOB, DAVE), (CAROL, ALICE), (DAVE, BOB)):
        stats = await storage.stats.player_stats(GUILD, player.user_id)
        assert (stats.wins, stats.draws, stats.losses) == (0, 1, 0), player.name
        assert stats.top_partner == PartnerRecord(partner.user_id, 1, 0, 1, 0)
        assert stats.top_opponent is not None
        assert (stats.top_opponent.won, stats.top_opponent.lost) == (0, 0)
    (history,) = await storage.stats.recent_games(GUILD)
    assert history.result is not None
    assert history.result["winners"] == []


async def test_deadlines_follow_the_games_and_a_restart_finds_them_again(
    storage: Storage,
) -> None:
    clock = Clock()
    first = GameService(storage, clock=clock)
    try:
        open_ = await first.challenges.challenge(
            guild_id=GUILD,
            channel_id=100,
            challenger=ALICE,
            opponents=[BOB],
            variant="standard",
            options={},
        )
        await first.challenges.challenge_shown(open_.row, message_id=555)
        timed = await first.challenges.challenge(
            guild_id=GUILD,
            channel_id=200,
            challenger=ALICE,
            opponents=[BOB],
            variant="standard",
            options={"time_limit": 3},
        )
        await first.challenges.challenge_shown(timed.row, message_id=556)
        await first.challenges.accept(timed.row.id, BOB.user_id)
        stolen = await dealt(first, "stjel", channel_id=300)
        battle = await first.choices.begin_battle(300, ALICE.user_id)
        first.choices.watch_choices(battle.row, battle.game)

        expiry = first.deadlines.pending(open_.row.id, "challenge")
        assert expiry is not None
        assert (expiry.at, expiry.message_id) == (
            open_.row.created_at + first.challenges.challenge_ttl,
            555,
        )
        assert first.deadlines.pending(timed.row.id, "challenge") is None  # accepted
        limit = first.deadlines.pending(timed.row.id, "time_limit")
        assert limit is not None
        assert limit.at == first.time_limits.deadline(await first_row(storage, timed.row.id))
        choice = first.deadlines.pending(stolen.id, "choice")
        assert choice is not None
        assert choice.at == first.choices.choice_deadline(battle.row)

        restarted = GameService(storage, clock=clock)
        try:
            await restarted.recovery.restore()
            kept: list[tuple[int, DeadlineKind]] = [
                (open_.row.id, "challenge"),
                (timed.row.id, "time_limit"),
                (stolen.id, "choice"),
            ]
            for game_id, kind in kept:
                assert restarted.deadlines.pending(game_id, kind) == first.deadlines.pending(
                    game_id, kind
                )

            await restarted.play.cancel(200, ALICE.user_id, moderator=True)
            assert restarted.deadlines.pending(timed.row.id, "time_limit") is None
        finally:
            await restarted.deadlines.close()
    finally:
        await first.deadlines.close()


async def first_row(storage: Storage, game_id: int) -> GameRow:
    """Return a game as stored."""
    row = await storage.games.get_game(game_id)
    assert row is not None
    return row


async def test_a_press_on_the_table_stored_as_newest_writes_its_round_alone(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = GameService(storage)
    row = await dealt(service, channel_id=100)
    pressed = await service.play.flip(
        100, ALICE.user_id, game_id=row.id, expected_round=0, table_message_id=555
    )
    assert pressed.row.table_message_id == 555
    remembered: list[int | None] = []
    remember = type(storage.games).set_table_message

    async def counted(self: object, game_id: int, message_id: int | None, **kw: object) -> bool:
        remembered.append(message_id)
        return await remember(storage.games, game_id, message_id)

    monkeypatch.setattr(type(storage.games), "set_table_message", counted)

    again = await service.play.flip(
        100, BOB.user_id, game_id=row.id, expected_round=1, table_message_id=555
    )
    moved = await service.play.flip(
        100, ALICE.user_id, game_id=row.id, expected_round=2, table_message_id=556
    )

    assert (again.row.round, moved.row.round) == (2, 3)
    assert remembered == [556]  # the message that already showed the game wrote nothing more
    stored = await storage.games.get_game(row.id)
    assert stored is not None
    assert (stored.round, stored.table_message_id) == (3, 556)


async def test_an_end_shown_just_before_it_is_noted_unreached_stays_shown(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Autoplay found its token dead and notes that nothing showed the end; meanwhile a press, in
    # another task, showed it. Noted over that, a restart would show the end a second time.
    service = GameService(storage)
    row = await dealt(service, channel_id=100)
    ended = await service.play.forfeit(100, ALICE.user_id)
    assert ended.row.extra[ENDING] == "unshown"
    merge = storage.games.update_extra

    async def shown_first(game_id: int, extra: dict[str, Any], **kwargs: Any) -> Any:
        await merge(game_id, {ENDING: None})  # the press's message is out, and noted
        return await merge(game_id, extra, **kwargs)

    monkeypatch.setattr(storage.games, "update_extra", shown_first)
    await service.registry.ending_unreached(row.id)

    stored = await storage.games.get_game(row.id)
    assert stored is not None
    assert stored.extra.get(ENDING) is None


async def test_a_change_another_process_makes_to_a_games_extra_meanwhile_is_kept(
    storage: Storage, database: str | Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two players agree to something at once, each answered by another process of the bot (a
    # shard changing hands): the second change is made from what the first one wrote.
    other = await Storage.open(database)
    try:
        here, there = GameService(storage), GameService(other)
        row = await dealt(here, channel_id=100)
        read = storage.games.get_game

        def vote(who: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
            return lambda extra: {"votes": [*extra.get("votes", []), who]}

        async def read_then_the_other_votes(game_id: int) -> GameRow | None:
            found = await read(game_id)
            await there.registry.change_extra(100, game_id, vote("there"))
            return found

        monkeypatch.setattr(storage.games, "get_game", read_then_the_other_votes)
        merged = await here.registry.change_extra(100, row.id, vote("here"))
        stored = await other.games.get_game(row.id)
    finally:
        await other.close()

    assert merged["votes"] == ["there", "here"]
    assert stored is not None
    assert stored.extra["votes"] == ["there", "here"]
