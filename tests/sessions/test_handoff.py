"""Two processes holding one game during a hand-off: Steal War moves and timers, without Discord.

Each :class:`GameService` is one process's sessions with a copy of the game in memory; both use
the same database (SQLite and PostgreSQL), whose write checks decide which move counts.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from krigbot.engine import load_game
from krigbot.engine.events import TopChoice
from krigbot.sessions import ChoiceResult, GameService, Player, Refusal
from krigbot.storage import GameRow, Storage
from tests.support.players import Clock
from tests.support.sessions import CHANNEL, GUILD, dealt
from tests.support.settings import BACKENDS

pytestmark = pytest.mark.parametrize("backend", BACKENDS)

ALICE, BOB = Player(1, "Alice"), Player(2, "Bob")
SEED = 7


def pair(storage: Storage, clock: Clock) -> tuple[GameService, GameService]:
    """Return two processes' sessions on one database and one clock."""
    return (
        GameService(storage, clock=clock, seeds=lambda: SEED),
        GameService(storage, clock=clock, seeds=lambda: SEED),
    )


async def both_hold(first: GameService, second: GameService) -> None:
    """Let the second process read the game too, as a hand-off's restore does."""
    found = await second.registry.game_in(CHANNEL)
    assert found is not None
    assert found[1] is not None
    mine = await first.registry.game_in(CHANNEL)
    assert mine is not None
    assert mine[1] is not None
    assert found[1].to_dict() == mine[1].to_dict()


async def both_at_a_choice(
    storage: Storage,
) -> tuple[Clock, GameService, GameService, GameRow, ChoiceResult]:
    """Deal a Steal War game on one process, begin its first battle, and let both hold it."""
    clock = Clock()
    first, second = pair(storage, clock)
    await dealt(first, "stjel")
    battle = await first.choices.begin_battle(CHANNEL, ALICE.user_id)
    await both_hold(first, second)
    return clock, first, second, battle.row, battle


def top_choice(result: ChoiceResult) -> TopChoice:
    """Return the winner's open choice of the top of their loot pile."""
    (choice,) = result.game.pending()
    assert isinstance(choice, TopChoice), choice
    assert len(choice.cards) >= 2
    return choice


async def saved(storage: Storage, game_id: int) -> tuple[GameRow, list[list[object]]]:
    """Return the stored game and the moves its saved state holds."""
    row = await storage.games.get_game(game_id)
    assert row is not None
    assert row.state is not None
    return row, list(row.state["actions"])


async def test_a_choice_on_a_process_whose_copy_is_behind_is_made_on_the_saved_game(
    storage: Storage,
) -> None:
    _, first, second, row, battle = await both_at_a_choice(storage)
    # On the first process: the winner's top card, and the next battle, which is won too.
    top = top_choice(battle)
    winner = row.players[top.seat]
    await first.choices.choose(
        CHANNEL, winner, row.id, "top", seat=top.seat, card=top.cards[-1], expected_round=1
    )
    battle = await first.choices.begin_battle(CHANNEL, ALICE.user_id)
    again = top_choice(battle)
    assert battle.row.round == 2
    _, before = await saved(storage, row.id)

    # The next press reaches the second process, whose copy is still at the first battle.
    made = await second.choices.choose(
        CHANNEL,
        row.players[again.seat],
        row.id,
        "top",
        seat=again.seat,
        card=again.cards[-1],
        expected_round=2,
    )

    stored, moves = await saved(storage, row.id)
    game = load_game(stored.state or {})
    assert game.pending() == ()
    assert game.loot_top(again.seat) == again.cards[-1]
    assert moves[: len(before)] == before  # everything the first process saved is kept
    assert len(moves) == len(before) + 1
    assert made.game.to_dict() == game.to_dict()


async def test_the_same_press_reaching_both_processes_is_made_once(storage: Storage) -> None:
    _, first, second, row, battle = await both_at_a_choice(storage)
    top = top_choice(battle)
    winner = row.players[top.seat]

    async def press(service: GameService) -> ChoiceResult:
        return await service.choices.choose(
            CHANNEL, winner, row.id, "top", seat=top.seat, card=top.cards[0], expected_round=1
        )

    await press(first)
    _, before = await saved(storage, row.id)
    with pytest.raises(Refusal) as refused:
        await press(second)

    assert refused.value.key == "steal.stale"  # made already: nothing of it is open any more
    _, after = await saved(storage, row.id)
    assert after == before


async def test_a_time_out_on_a_copy_behind_leaves_the_choice_made_elsewhere(
    storage: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    clock, first, second, row, battle = await both_at_a_choice(storage)
    top = top_choice(battle)
    # Not what a time-out would choose (the default is the top the winner has now).
    (chosen,) = [card for card in top.cards if card != battle.game.loot_top(top.seat)][:1]
    clock.advance(seconds=30)
    await first.choices.choose(
        CHANNEL, row.players[top.seat], row.id, "top", seat=top.seat, card=chosen, expected_round=1
    )
    # Both processes set the time-out from their copies: the second's copy is due first.
    clock.advance(seconds=31)

    with caplog.at_level(logging.INFO):
        timed_out = await second.choices.time_out(CHANNEL, row.id)

    assert timed_out is None  # nothing is open on the saved game: nothing to say
    stored, _ = await saved(storage, row.id)
    assert load_game(stored.state or {}).loot_top(top.seat) == chosen
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_time_limit_both_processes_watch_ends_the_game_once(
    storage: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    first, second = pair(storage, clock)
    row = await dealt(first, time_limit=1)
    await both_hold(first, second)
    clock.advance(minutes=2)

    ended = await first.time_limits.end_in_time(CHANNEL, row.id)
    with caplog.at_level(logging.INFO):
        again = await second.time_limits.end_in_time(CHANNEL, row.id)

    assert ended is not None
    assert ended.outcome is not None
    assert again is None  # ended by the other process: nothing to announce
    assert second.registry.running_count() == 0
    stats = await storage.stats.player_stats(GUILD, ALICE.user_id)
    assert stats.games == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_two_different_presses_at_once_on_both_processes_make_one_choice_and_say_so(
    storage: Storage,
) -> None:
    # Both processes read the game before either saves: each copy passes its check against the
    # saved state, and a battle's choice leaves the round alone. The moves decide: the second
    # save is refused, read again, and finds the choice made.
    _, first, second, row, battle = await both_at_a_choice(storage)
    top = top_choice(battle)
    winner = row.players[top.seat]
    _, before = await saved(storage, row.id)

    async def press(service: GameService, card: int) -> ChoiceResult | Refusal:
        try:
            return await service.choices.choose(
                CHANNEL, winner, row.id, "top", seat=top.seat, card=card, expected_round=1
            )
        except Refusal as refusal:
            return refusal

    answers = await asyncio.gather(press(first, top.cards[-1]), press(second, top.cards[0]))

    made = [a for a in answers if isinstance(a, ChoiceResult)]
    refused = [a for a in answers if isinstance(a, Refusal)]
    assert len(made) == 1, answers
    assert [r.key for r in refused] == ["steal.stale"]
    stored, after = await saved(storage, row.id)
    assert len(after) == len(before) + 1  # one choice, never both, never neither
    game = load_game(stored.state or {})
    assert made[0].game.to_dict() == game.to_dict()  # the one answered as made is the one saved
