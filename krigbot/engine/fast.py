"""Playing without per-round objects, and exact detection of games that repeat forever.

The common two-player battle and the two-player war are played inline here; every other
round goes through the game's general path (``play_unrecorded``). Both take the face-down count,
the shortage order, the shuffle, the points and the counting of a round from ``engine.core``
(the hottest loop spells the last two out, a call costing more than a round). The inline path
plays only rules whose every option is declared in :data:`FAST_OPTIONS`: an option added to
``Rules`` and not declared there sends its games down the general path. Tests check that both
paths give the same game for every value of every option.

`eternal` (rules §7) uses Brent's cycle detection: it keeps one saved position and a counter,
so its memory does not grow with the length of the cycle. Brent gives the cycle length λ; the
first repeated round is then found by playing two copies λ rounds apart in lockstep until their
positions agree (after μ rounds): the game ends after round μ + λ.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import sys
from collections import deque
from collections.abc import Sequence
from typing import Any, Protocol, Self

from .compare import order_of, winner_of_two
from .core import GameState, fewest_holding, points_for, shuffle, war_face_down
from .events import Outcome
from .rules import Rules

EVERY = None
"""In :data:`FAST_OPTIONS`: every valid value of an option that the fast path only passes on."""

FAST_OPTIONS: dict[str, frozenset[Any] | None] = {
    "players": frozenset({2}),
    "face_down": frozenset({1, 3, 5, "rank"}),
    "shortage": frozenset({"lose", "last_card"}),
    "pickup": frozenset({"winner_first", "table", "shuffled"}),
    "shuffle_won": frozenset({False}),
    "jokers": frozenset({0, 2}),
    "decks": frozenset({1, 2}),
    "max_rounds": EVERY,
    "time_limit": EVERY,  # the engine has no clock: whoever runs the game ends it by counting
    "target_tricks": EVERY,
    "points": frozenset({False, True}),
    "war_players": frozenset({"tied", "all"}),  # the same with two players
    "wide_war": frozenset({False, True}),  # nothing with two players
    # A 2 beating an ace orders no values (2 < 3 < ... < A < 2: compare.order_of has none), and
    # one more test in every inline round would cost all games, so the general path plays it.
    "two_beats_ace": frozenset({False}),
    # Peace is the reverse order (compare.order_of), played by the same `>` as the plain one.
    "lowest_wins": frozenset({False, True}),
    "teams": frozenset({False}),
    "variant": frozenset({"krig"}),
    "preset_name": EVERY,
}
"""The one statement of what the inline two-player path plays: each option of ``Rules`` with
the values it handles. Any option or value not here goes down the general path."""


class Krig(GameState, Protocol):
    """What the fast path needs of a game of Krig beside the shared state (``Game`` is one)."""

    piles: list[deque[int]]
    rng: random.Random | None
    eternal_checked: bool
    eternal_at: int | None
    eternal_cycle: int | None

    @property
    def players(self) -> int:
        """Return the number of seats."""

    def copy(self) -> Self:
        """Return an independent copy with the same future."""

    def restore_from(self, other: Self) -> None:
        """Become a copy taken earlier."""

    def in_play(self) -> tuple[int, ...]:
        """Return the seats still playing."""

    def play_unrecorded(self) -> None:
        """Play one round by the general path without building its value."""

    def credit(self, winner: int | None, taken: int, war_steps: int) -> None:
        """Count a round collected."""

    def eliminate_empty(self) -> list[int]:
        """Take every seat left with no cards out of the game."""

    def check_end(self, winner: int | None, shortage: bool, drawn: Sequence[int]) -> None:
        """End the game after a round if it is over."""


@functools.lru_cache(maxsize=256)
def plays_inline(rules: Rules) -> bool:
    """Tell whether the inline two-player path plays these rules: every option is declared.

    Iterating the fields of ``Rules`` (not the keys above) is what makes a new option safe.
    """
    for field in dataclasses.fields(Rules):
        if field.name not in FAST_OPTIONS:
            return False
        allowed = FAST_OPTIONS[field.name]
        if allowed is not EVERY and getattr(rules, field.name) not in allowed:
            return False
    return True


_NO_LIMIT = sys.maxsize - 1
"""No limit: one less than the largest C long, so that ``range(..., _NO_LIMIT + 1)`` still counts
in C longs (with ``sys.maxsize`` itself Python falls back to a much slower counter)."""


_BATTLE_POINTS = points_for(war_steps=0)
_WAR_POINTS = points_for(war_steps=1)

_CHECKPOINT_FROM = 1024
"""Brent windows shorter than this get no checkpoint of their own: copying the game (its random
generator above all) at every power of two cost more than a game of a few hundred rounds, and a
cycle found that early is found again from the start in a few milliseconds."""


class _Watch:
    """Brent's checkpoints: copies of the game at two tortoise positions, and at the start.

    Three copies, whatever the cycle length: constant memory. The older checkpoint lets the
    search for the first repeated round start late instead of at the deal (see :func:`_meet`).
    Any earlier tortoise position with its window does, so windows shorter than
    ``_CHECKPOINT_FROM`` are skipped.
    """

    __slots__ = ("current", "current_window", "previous", "previous_window", "start")

    def __init__(self, game: Krig) -> None:
        self.start = _probe(game)
        self.current = self.start
        self.current_window = 1
        self.previous: Krig | None = None
        self.previous_window = 0

    def moved(self, game: Krig, window: int) -> None:
        """Record that the tortoise moved to the game's position, with a new window."""
        if window < _CHECKPOINT_FROM:
            return
        self.previous, self.previous_window = self.current, self.current_window
        self.current, self.current_window = _probe(game), window

    def first_repeat(self, cycle: int) -> Krig:
        """Return the game at the first round whose position repeats an earlier one."""
        # The previous window compared its tortoise with the next `previous_window` positions
        # and found no match; if the cycle fits in that window, the repeat starts after it.
        if self.previous is not None and cycle <= self.previous_window:
            return _meet(self.previous.copy(), cycle)
        return _meet(self.start.copy(), cycle)


def run_to_end(game: Krig) -> Outcome:
    """Play the game to its end without building round objects, and return the outcome."""
    if game.outcome is not None:
        return game.outcome
    if game.eternal_checked:
        _advance(game)
    else:
        # Watch the real game for a cycle instead of looking ahead on a copy: most games end,
        # and then they were played only once.
        watch = _Watch(game)
        cycle = _advance(game, watch=watch)
        if cycle is not None:
            repeat = watch.first_repeat(cycle)
            repeat.outcome = Outcome("eternal", repeat.round, drawn=repeat.in_play(), cycle=cycle)
            repeat.eternal_at = repeat.round
            repeat.eternal_cycle = cycle
            game.restore_from(repeat)
        game.eternal_checked = True
    assert game.outcome is not None
    return game.outcome


def find_repetition(game: Krig) -> tuple[int, int] | None:
    """Return (rounds until the first repeated position, cycle length), or None if it ends."""
    probe = _probe(game)
    watch = _Watch(game)
    cycle = _advance(probe, watch=watch)
    if cycle is None:
        return None
    return watch.first_repeat(cycle).round - game.round, cycle


def advance(game: Krig, until: int) -> None:
    """Play without round objects until round ``until`` or the game's end, whichever is first."""
    _advance(game, until=until)


def _probe(game: Krig) -> Krig:
    """Return a copy that plays on without ending as `eternal` (it is the one looking)."""
    probe = game.copy()
    probe.eternal_checked = True
    probe.eternal_at = None
    return probe


def _meet(tortoise: Krig, cycle: int) -> Krig:
    """Return the game at μ + λ: the first round whose position came ``cycle`` rounds before.

    Two copies ``cycle`` rounds apart go forward together; once their positions agree they
    agree forever, so they go in chunks and the last chunk is replayed one round at a time.
    """
    hare = tortoise.copy()
    _advance(hare, until=hare.round + cycle)
    chunk = 256
    while tortoise.piles != hare.piles:
        tortoise_before, hare_before = tortoise.copy(), hare.copy()
        _advance(tortoise, until=tortoise.round + chunk)
        _advance(hare, until=hare.round + chunk)
        if tortoise.piles == hare.piles:
            tortoise, hare = tortoise_before, hare_before
            while tortoise.piles != hare.piles:
                _advance(tortoise, until=tortoise.round + 1)
                _advance(hare, until=hare.round + 1)
    return hare


def _advance(game: Krig, *, watch: _Watch | None = None, until: int | None = None) -> int | None:
    """Play until the game ends or reaches round ``until``; with ``watch``, stop at a
    repeated position (Brent) and return the cycle length."""
    if plays_inline(game.rules) and game.in_game[0] and game.in_game[1]:
        return _advance_two(game, watch, until)
    return _advance_general(game, watch, until)


def _advance_general(game: Krig, watch: _Watch | None, until: int | None) -> int | None:
    stop = _NO_LIMIT if until is None else until
    piles = game.piles
    saved = [pile.copy() for pile in piles] if watch is not None else None
    power = 1
    lam = 0
    while game.outcome is None and game.round < stop:
        game.play_unrecorded()
        if watch is not None:
            lam += 1
            if piles == saved:
                return lam
            if lam == power:
                power <<= 1
                lam = 0
                saved = [pile.copy() for pile in piles]
                watch.moved(game, power)
    return None


def _advance_two(game: Krig, watch: _Watch | None, until: int | None) -> int | None:
    """The two-player loop: a battle, or a war decided in one step, is played inline; any other
    war by _war_two."""
    rules = game.rules
    p0, p1 = game.piles
    pop0, pop1 = p0.popleft, p1.popleft
    put0, put1 = p0.append, p1.append  # two appends cost less than extending with a pair
    ext0, ext1 = p0.extend, p1.extend
    scoring = rules.points
    # The inline rounds count as BaseGame.credit does, spelled out: a call costs more than the
    # round (the sweep of tests/engine/test_fast.py holds them to it).
    battle_points = _BATTLE_POINTS
    war_points = _WAR_POINTS
    # With no target, no comparison with a huge number each round (it would not be specialised).
    targeted = rules.target_tricks is not None
    target = rules.target_tricks or 0
    shuffled = rules.pickup == "shuffled"
    own_first = rules.pickup == "winner_first"
    rng = game.rng
    rand = rng.random if rng is not None else _no_rng
    # Each card's strength by the one comparison (engine.compare): with it the loop decides a
    # battle by one `>`; indexing the table costs less than the shift.
    value = order_of(rules)
    assert value is not None, "the inline path plays only rules whose cards have an order"
    # Wars with a fixed number of cards down (not Război's rank) that one step decides.
    fixed = 0 if rules.face_down == "rank" else rules.face_down
    steps = range(fixed + 1)  # the cards down and the one turned up
    pot = 2 * (fixed + 2)
    # Any round at which the game may end for a reason other than cards runs through the check.
    limit = min(
        until if until is not None else _NO_LIMIT,
        rules.max_rounds if rules.max_rounds is not None else _NO_LIMIT,
        game.eternal_at if game.eternal_at is not None else _NO_LIMIT,
    )
    t0 = p0.copy() if watch is not None else None
    t1 = p1.copy() if watch is not None else None
    # Brent: the tortoise (t0, t1) is the position after round `mark`; it moves at `moves_at`.
    power = 1
    rnd = mark = start = game.round
    moves_at = start + power
    # Tricks and points live in locals inside the loop and go back to the game when it stops.
    tricks0, tricks1 = game.tricks
    points0, points1 = game.points
    try:
        # A for loop counts the rounds in C; rnd keeps the last round played after it.
        for rnd in range(start + 1, limit + 1):
            a = pop0()
            b = pop1()
            va = value[a]
            vb = value[b]
            if va > vb:
                # shuffle() of two cards swaps them when rand() < 0.5; winner_first and table
                # agree here: seat 0's card first.
                if shuffled and rand() < 0.5:
                    put0(b)
                    put0(a)
                else:
                    put0(a)
                    put0(b)
                tricks0 += 1
                if scoring:
                    points0 += battle_points
                if not p1 or (targeted and tricks0 >= target):
                    winner: int | None = 0
                    break
            elif vb > va:
                if rand() < 0.5 if shuffled else own_first:
                    put1(b)
                    put1(a)
                else:
                    put1(a)
                    put1(b)
                tricks1 += 1
                if scoring:
                    points1 += battle_points
                if not p0 or (targeted and tricks1 >= target):
                    winner = 1
                    break
            elif (
                fixed
                and len(p0) > fixed
                and len(p1) > fixed
                and value[p0[fixed]] != value[p1[fixed]]
            ):
                # The common war, also inline: one step, both can fight it, it is decided.
                if own_first:
                    own0 = [a]
                    own1 = [b]
                    for _ in steps:
                        own0.append(pop0())
                        own1.append(pop1())
                    won = 0 if value[own0[-1]] > value[own1[-1]] else 1
                    cards = own0 + own1 if won == 0 else own1 + own0  # winner_first, two seats
                else:
                    cards = [a, b]  # layer by layer, within a layer in seat order
                    put = cards.append
                    for _ in steps:
                        put(pop0())
                        put(pop1())
                    won = 0 if value[cards[-2]] > value[cards[-1]] else 1
                    if shuffled:
                        assert rng is not None
                        shuffle(rng, cards)
                game.war_rounds += 1
                game.war_steps += 1
                game.wars_won[won] += 1
                if pot > game.biggest_pot[won]:
                    game.biggest_pot[won] = pot
                if won == 0:
                    ext0(cards)
                    tricks0 += 1
                    if scoring:
                        points0 += war_points
                    if not p1 or (targeted and tricks0 >= target):
                        winner = 0
                        break
                else:
                    ext1(cards)
                    tricks1 += 1
                    if scoring:
                        points1 += war_points
                    if not p0 or (targeted and tricks1 >= target):
                        winner = 1
                        break
            else:
                _put_back(game, rnd - 1, (tricks0, tricks1), (points0, points1))
                _war_two(game, a, b, a >> 2)  # the value: Război counts the rank, not the strength
                if game.outcome is not None:
                    return None
                tricks0, tricks1 = game.tricks
                points0, points1 = game.points
            if t0 is not None:
                if p0 == t0 and p1 == t1:
                    return rnd - mark
                if rnd == moves_at:
                    t0 = p0.copy()
                    t1 = p1.copy()
                    power <<= 1
                    mark, moves_at = rnd, rnd + power
                    assert watch is not None
                    _put_back(game, rnd, (tricks0, tricks1), (points0, points1))
                    watch.moved(game, power)
        else:
            winner = None  # a limit was reached: the round limit ends the game here
        _put_back(game, rnd, (tricks0, tricks1), (points0, points1))
        game.eliminate_empty()
        game.check_end(winner, False, ())
        return None
    finally:
        if game.outcome is None or game.round != rnd:
            _put_back(game, rnd, (tricks0, tricks1), (points0, points1))
        for seat in (0, 1):
            # Inline battles skip the pot bookkeeping: any round won took at least 2 cards.
            if game.tricks[seat] and game.biggest_pot[seat] < 2:
                game.biggest_pot[seat] = 2


def _put_back(game: Krig, rnd: int, tricks: tuple[int, int], points: tuple[int, int]) -> None:
    """Give the game the round, tricks and points the two-player loop keeps in locals."""
    game.round = rnd
    game.tricks[:] = tricks
    game.points[:] = points


def _no_rng() -> float:
    raise AssertionError("a game without a random generator drew from one")


def _war_two(game: Krig, a: int, b: int, tied_value: int) -> None:
    """Play the war that follows a tie between two players, as the general path would.

    The two-player case of the general war step, lean (no value objects): wars are one round
    in fourteen but would otherwise take most of the time. The shortage order, the points and
    the counting come from ``engine.core``, as the general path's do (the two-seat
    ``winner_first`` is one line, inline: a call of ``core.winner_first`` costs 1.5 %);
    ``tests/engine/test_fast.py`` plays every value of every option both ways and compares.
    """
    rules = game.rules
    p0, p1 = game.piles
    pop0, pop1 = p0.popleft, p1.popleft
    fixed = 0 if rules.face_down == "rank" else rules.face_down
    # winner_first needs each seat's cards apart; the other pickups take the placing order.
    by_seat = rules.pickup == "winner_first"
    own0 = [a]
    own1 = [b]
    table = own0 if not by_seat else []
    if not by_seat:
        table.append(b)
    put0 = own0.append if by_seat else table.append
    put1 = own1.append if by_seat else table.append
    steps = 0
    winner = -1  # -1: still fighting; -2: nobody takes the table
    short: set[int] = set()
    knocked: list[int] = []
    while winner == -1:
        f = fixed or war_face_down(rules, tied_value)
        h0 = len(p0)
        h1 = len(p1)
        steps += 1
        if h0 > f and h1 > f:
            for _ in range(f):
                put0(pop0())
                put1(pop1())
            a = pop0()
            b = pop1()
            put0(a)
            put1(b)
        else:
            if h0 <= f:
                short.add(0)
            if h1 <= f:
                short.add(1)
            if rules.shortage == "lose":
                # rules §5: one short fighter loses; both short, the one holding fewer.
                out = (
                    list(short) if len(short) == 1 else fewest_holding((0, 1), (h0, h1).__getitem__)
                )
                for seat in out:
                    pile = p0 if seat == 0 else p1
                    put = put0 if seat == 0 else put1
                    for card in pile:
                        put(card)
                    pile.clear()
                knocked = out
                winner = 1 - out[0] if len(out) == 1 else -2
                break
            if h0 == 0 and h1 == 0:
                winner = -2
                break
            # last_card: a short fighter turns their last card up; with none, the standing card.
            k0 = min(f, h0 - 1) if h0 else 0
            k1 = min(f, h1 - 1) if h1 else 0
            for k in range(max(k0, k1)):
                if k < k0:
                    put0(pop0())
                if k < k1:
                    put1(pop1())
            if h0:
                a = pop0()
                put0(a)
            if h1:
                b = pop1()
                put1(b)
        va = a >> 2
        won = winner_of_two(va, b >> 2, rules)
        if won < 0:
            tied_value = va
        else:
            winner = won

    if winner >= 0:
        if by_seat:
            cards = own0 + own1 if winner == 0 else own1 + own0  # winner_first, two seats
        else:
            cards = table
            if rules.pickup == "shuffled":
                assert game.rng is not None
                shuffle(game.rng, cards)
        game.piles[winner].extend(cards)
        game.credit(winner, len(cards), steps)
    else:
        game.credit(None, len(own0) + len(own1) if by_seat else len(table), steps)
    game.round += 1
    for seat in knocked:
        game.in_game[seat] = False
        game.eliminated.append(seat)
    if winner == -2 and not knocked:
        game.eliminate_empty()
        game.outcome = Outcome("war_shortage", game.round, drawn=(0, 1))
        return
    target = rules.target_tricks
    if (
        knocked
        or not p0
        or not p1
        or (target is not None and winner >= 0 and game.tricks[winner] >= target)
    ):
        eliminated = knocked + game.eliminate_empty()
        # Two players: the one put out is the last; both put out together share the draw.
        game.check_end(
            winner if winner >= 0 else None, not short.isdisjoint(eliminated), eliminated
        )
