"""The session parts as the game service builds them on a real database."""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from krigbot.sessions import Autoplay, Player, Refusal
from krigbot.sessions.service import GameService
from krigbot.storage import GameRow, Storage
from tests.support.players import Clock
from tests.support.sessions import CHANNEL, GUILD, dealt

ALICE, BOB = Player(1, "Alice"), Player(2, "Bob")
CHOICE_TTL = timedelta(seconds=60)


def build(storage: Storage, clock: Clock) -> GameService:
    """One process's session parts, wired as the bot wires them."""
    return GameService(storage, clock=clock, seeds=lambda: 7, choice_ttl=CHOICE_TTL)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def parts(storage: Storage, clock: Clock) -> AsyncIterator[GameService]:
    built = build(storage, clock)
    yield built
    await built.deadlines.close()


async def stored(storage: Storage, game_id: int) -> GameRow:
    row = await storage.games.get_game(game_id)
    assert row is not None
    return row


async def test_a_challenge_waits_for_its_answer_and_the_accept_deals_the_game(
    parts: GameService, storage: Storage
) -> None:
    made = await parts.challenges.challenge(
        guild_id=GUILD,
        channel_id=CHANNEL,
        challenger=ALICE,
        opponents=[BOB],
        variant="standard",
        options={},
    )
    with pytest.raises(Refusal) as early:
        await parts.play.flip(CHANNEL, ALICE.user_id)
    assert early.value.key == "err.not_running"

    accepted = await parts.challenges.accept(made.row.id, BOB.user_id)

    assert accepted.game is not None
    assert (await stored(storage, made.row.id)).status == "running"
    played = await parts.play.flip(CHANNEL, ALICE.user_id)
    assert played.row.round == 1


async def test_a_flip_for_a_round_already_played_is_refused_and_plays_nothing(
    parts: GameService, storage: Storage
) -> None:
    row = await dealt(parts)
    await parts.play.flip(CHANNEL, ALICE.user_id, game_id=row.id, expected_round=0)

    with pytest.raises(Refusal) as stale:
        await parts.play.flip(CHANNEL, BOB.user_id, game_id=row.id, expected_round=0)

    assert stale.value.key == "flip.raced"
    assert (await stored(storage, row.id)).round == 1


async def test_a_deal_with_a_time_limit_is_watched_and_ended_by_counting_when_it_is_up(
    parts: GameService, storage: Storage, clock: Clock
) -> None:
    row = await dealt(parts, time_limit=3)
    limit = parts.deadlines.pending(row.id, "time_limit")
    assert limit is not None
    assert limit.at == clock.now + timedelta(minutes=3)

    clock.advance(minutes=3)
    ended = await parts.time_limits.end_in_time(CHANNEL, row.id)

    assert ended is not None
    assert ended.outcome is not None
    assert ended.outcome.reason == "time_limit"
    assert (await stored(storage, row.id)).status == "finished"


async def test_steal_war_choices_left_open_are_made_by_default_once_their_time_is_up(
    parts: GameService, storage: Storage, clock: Clock
) -> None:
    row = await dealt(parts, "stjel")
    battle = await parts.choices.begin_battle(CHANNEL, ALICE.user_id)
    assert battle.game.pending()
    before = (await stored(storage, row.id)).state

    clock.advance(seconds=CHOICE_TTL.total_seconds() - 1)
    early = await parts.choices.time_out(CHANNEL, row.id)
    assert early is not None
    assert early.timed_out == ()
    assert (await stored(storage, row.id)).state == before

    clock.advance(seconds=1)
    late = await parts.choices.time_out(CHANNEL, row.id)

    assert late is not None
    assert late.timed_out
    assert (await stored(storage, row.id)).state != before


async def test_autoplay_paused_and_resumed_is_kept_with_the_game(
    parts: GameService, storage: Storage
) -> None:
    row = await dealt(parts)
    await parts.hands_free.start_autoplay(CHANNEL, row.id, Autoplay("running", 555, by="Alice"))

    paused = await parts.hands_free.pause_autoplay(CHANNEL, row.id, 555, by="Bob")
    assert Autoplay.of((await stored(storage, row.id)).extra) == paused
    assert (paused.state, paused.by) == ("paused", "Bob")
    with pytest.raises(Refusal) as twice:
        await parts.hands_free.pause_autoplay(CHANNEL, row.id, 555, by="Bob")
    assert twice.value.key == "auto.not_running"

    resumed = await parts.hands_free.resume_autoplay(CHANNEL, row.id, by="Alice")

    assert Autoplay.of((await stored(storage, row.id)).extra) == resumed
    assert (resumed.state, resumed.message, resumed.by) == ("running", 555, "Alice")


async def test_a_restart_picks_up_a_running_battle_and_times_its_choices_out(
    parts: GameService, storage: Storage, clock: Clock
) -> None:
    row = await dealt(parts, "stjel")
    await parts.choices.begin_battle(CHANNEL, ALICE.user_id)
    await parts.deadlines.close()

    restarted = build(storage, clock)
    try:
        challenges, broken = await restarted.recovery.restore()
        assert (challenges, broken) == ([], [])
        assert restarted.registry.holds(CHANNEL)
        choice = restarted.deadlines.pending(row.id, "choice")
        assert choice is not None

        clock.advance(seconds=CHOICE_TTL.total_seconds())
        timed = await restarted.choices.time_out(CHANNEL, row.id)
        assert timed is not None
        assert timed.timed_out
    finally:
        await restarted.deadlines.close()


def test_no_session_part_is_built_on_another_class_of_ours() -> None:
    ours = {
        node.name
        for path in Path("krigbot").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    }
    built_on: dict[str, list[str]] = {}
    for path in Path("krigbot/sessions").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
                # Exceptions may be: a LostWrite is a Refusal.
                mine = [base for base in bases if base in ours and base != "Refusal"]
                if mine:
                    built_on[node.name] = mine

    assert built_on == {}
