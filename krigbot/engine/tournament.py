"""A tournament's pairings and standings, as plain values: knockout, Swiss and round robin.

A :class:`Bracket` holds the players in seed order (their join order shuffled by the
tournament's seed, so the same seed and sign-up give the same tournament) and every round's
:class:`Pairing`. :func:`next_round` pairs the next round from the results so far and
:func:`record` enters a match's result; nothing here is random after the seeding, so a bracket
is reproduced from its seed, its players and its results.

- **Knockout:** the bracket is the next power of two; the best seeds get the byes, all in round
  one, and the seeds are placed so that the first two can meet only in the final. A drawn match
  sends the better seed through.
- **Swiss:** ⌈log₂ n⌉ rounds. Each round pairs players of equal score where it can, top down,
  never two who have met; with an odd number the lowest-ranked player without a bye gets one
  (a bye is a win). Ties are broken by Buchholz (the sum of one's opponents' points), then by the
  points won among the tied players (head-to-head), then by seed.
- **Round robin** (at most :data:`ROUND_ROBIN_MOST` players): everyone meets everyone once (the
  circle method); with an odd number each round one player sits out, for no points.

Points are counted in halves, so a draw needs no fractions: a win is 2, a draw 1.

>>> bracket = start("knockout", [10, 11, 12], seed=1)
>>> [(p.a, p.b) for p in next_round(bracket).rounds[0]]
[(11, None), (12, 10)]
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

Format = Literal["knockout", "swiss", "round_robin"]
FORMATS: tuple[Format, ...] = ("knockout", "swiss", "round_robin")
ROUND_ROBIN_MOST = 10
"""The most players a round robin takes (45 matches, 9 rounds)."""
MOST_PLAYERS = 64
LEAST_PLAYERS = 2
WIN, DRAW = 2, 1
"""Points of a win and of a draw, in halves."""


class TournamentError(ValueError):
    """A bracket asked for something its format or state does not allow."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One match of a round: ``a`` against ``b`` (None: ``a`` has a bye)."""

    a: int
    b: int | None
    done: bool = False
    """Whether its result is in (a bye's is from the start)."""
    winner: int | None = None
    """The player who won it; None once done is a draw."""

    @property
    def players(self) -> tuple[int, ...]:
        """Return the players of the match (one for a bye)."""
        return (self.a,) if self.b is None else (self.a, self.b)

    def points(self, player: int, *, bye_points: int) -> int:
        """Return the points (in halves) the match gave ``player``."""
        if not self.done:
            return 0
        if self.b is None:
            return bye_points
        if self.winner is None:
            return DRAW
        return WIN if self.winner == player else 0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON kept for the match."""
        return {"a": self.a, "b": self.b, "done": self.done, "winner": self.winner}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pairing:
        """Return the match from its JSON."""
        b, winner = data.get("b"), data.get("winner")
        return cls(
            int(data["a"]),
            None if b is None else int(b),
            bool(data.get("done", False)),
            None if winner is None else int(winner),
        )


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's place in the standings."""

    player: int
    points: int
    """In halves: a win 2, a draw 1."""
    buchholz: int
    """The sum of the points of the players they met (byes count nothing)."""
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True, slots=True)
class Bracket:
    """A tournament's players in seed order and its rounds so far."""

    format: Format
    seed: int
    players: tuple[int, ...]
    rounds: tuple[tuple[Pairing, ...], ...] = ()

    @property
    def total_rounds(self) -> int:
        """Return how many rounds the tournament has."""
        return total_rounds(self.format, len(self.players))

    @property
    def current(self) -> tuple[Pairing, ...]:
        """Return the matches of the round being played (none before the first)."""
        return self.rounds[-1] if self.rounds else ()

    @property
    def round_over(self) -> bool:
        """Tell whether every match of the current round has its result."""
        return all(pairing.done for pairing in self.current)

    @property
    def finished(self) -> bool:
        """Tell whether the last round is played."""
        return len(self.rounds) == self.total_rounds and self.round_over

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON kept for the bracket."""
        return {
            "format": self.format,
            "seed": self.seed,
            "players": list(self.players),
            "rounds": [[pairing.to_dict() for pairing in matches] for matches in self.rounds],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Bracket:
        """Return the bracket from its JSON."""
        kind = str(data["format"])
        if kind not in FORMATS:
            raise TournamentError(f"unknown format {kind!r}")
        return cls(
            _format(kind),
            int(data["seed"]),
            tuple(int(player) for player in data["players"]),
            tuple(
                tuple(Pairing.from_dict(pairing) for pairing in matches)
                for matches in data["rounds"]
            ),
        )


def _format(name: str) -> Format:
    for each in FORMATS:
        if each == name:
            return each
    raise TournamentError(f"unknown format {name!r}")


def most_players(format: Format) -> int:
    """Return the most players ``format`` takes."""
    return ROUND_ROBIN_MOST if format == "round_robin" else MOST_PLAYERS


def total_rounds(format: Format, players: int) -> int:
    """Return how many rounds ``players`` play in ``format``.

    >>> total_rounds("knockout", 5), total_rounds("swiss", 9), total_rounds("round_robin", 5)
    (3, 4, 5)
    """
    if players < LEAST_PLAYERS:
        return 0
    if format == "round_robin":
        return players - 1 if players % 2 == 0 else players
    return (players - 1).bit_length()


def start(format: Format, players: Iterable[int], seed: int) -> Bracket:
    """Return a tournament's bracket before its first round: the players in seed order."""
    entrants = list(players)
    if len(set(entrants)) != len(entrants):
        raise TournamentError("a player is entered twice")
    if not LEAST_PLAYERS <= len(entrants) <= most_players(format):
        raise TournamentError(f"{format} takes 2 to {most_players(format)} players")
    random.Random(seed).shuffle(entrants)
    return Bracket(format, seed, tuple(entrants))


def next_round(bracket: Bracket) -> Bracket:
    """Return the bracket with its next round paired (byes decided at once)."""
    if not bracket.round_over:
        raise TournamentError("the round is not over")
    if len(bracket.rounds) >= bracket.total_rounds:
        raise TournamentError("the tournament is over")
    pair = {"knockout": _knockout, "swiss": _swiss, "round_robin": _round_robin}[bracket.format]
    matches = tuple(
        Pairing(a, b, done=True, winner=a) if b is None else Pairing(a, b) for a, b in pair(bracket)
    )
    return replace(bracket, rounds=(*bracket.rounds, matches))


def record(bracket: Bracket, number: int, winner: int | None) -> Bracket:
    """Return the bracket with match ``number`` of the current round won by ``winner``.

    None is a draw. A result already in is kept (a repeat of the same write).
    """
    pairing = bracket.current[number]
    if pairing.done:
        return bracket
    if winner is not None and winner not in pairing.players:
        raise TournamentError(f"{winner} does not play match {number}")
    matches = list(bracket.current)
    matches[number] = replace(pairing, done=True, winner=winner)
    return replace(bracket, rounds=(*bracket.rounds[:-1], tuple(matches)))


def advancing(bracket: Bracket, pairing: Pairing) -> int | None:
    """Return who goes through from a decided knockout match (a draw: the better seed)."""
    if not pairing.done:
        return None
    if pairing.winner is not None:
        return pairing.winner
    return min(pairing.players, key=bracket.players.index)


def champion(bracket: Bracket) -> int | None:
    """Return the tournament's winner once it is over."""
    if not bracket.finished:
        return None
    if bracket.format == "knockout":
        return advancing(bracket, bracket.current[0])
    return standings(bracket)[0].player


def bye_points(format: Format) -> int:
    """Return what a bye is worth: a win in Swiss and knockout, nothing in a round robin."""
    return 0 if format == "round_robin" else WIN


def standings(bracket: Bracket) -> list[Standing]:
    """Return the players best first: points, Buchholz, head-to-head, seed."""
    given = bye_points(bracket.format)
    points = dict.fromkeys(bracket.players, 0)
    tally = {player: [0, 0, 0] for player in bracket.players}
    met: dict[int, list[int]] = {player: [] for player in bracket.players}
    for matches in bracket.rounds:
        for pairing in matches:
            for player in pairing.players:
                points[player] += pairing.points(player, bye_points=given)
            if pairing.b is None or not pairing.done:
                continue
            met[pairing.a].append(pairing.b)
            met[pairing.b].append(pairing.a)
            for player in pairing.players:
                if pairing.winner is None:
                    tally[player][1] += 1
                else:
                    tally[player][0 if pairing.winner == player else 2] += 1
    buchholz = {player: sum(points[other] for other in met[player]) for player in bracket.players}
    seed_rank = {player: rank for rank, player in enumerate(bracket.players)}
    groups: dict[tuple[int, int], list[int]] = {}
    for player in bracket.players:
        groups.setdefault((points[player], buchholz[player]), []).append(player)
    ordered: list[int] = []
    for key in sorted(groups, reverse=True):
        tied = set(groups[key])
        head = {player: _points_among(bracket, player, tied, given) for player in tied}
        ordered.extend(sorted(tied, key=lambda player: (-head[player], seed_rank[player])))
    return [
        Standing(player, points[player], buchholz[player], *tally[player]) for player in ordered
    ]


def _points_among(bracket: Bracket, player: int, tied: set[int], given: int) -> int:
    """Return the points ``player`` won in matches against the others in ``tied``."""
    return sum(
        pairing.points(player, bye_points=given)
        for matches in bracket.rounds
        for pairing in matches
        if pairing.b is not None
        and player in pairing.players
        and all(each in tied for each in pairing.players)
    )


def opponents(bracket: Bracket, player: int) -> list[int | None]:
    """Return whom ``player`` met, round by round (None: a bye)."""
    return [
        pairing.b if pairing.a == player else pairing.a
        for matches in bracket.rounds
        for pairing in matches
        if player in pairing.players
    ]


def _knockout(bracket: Bracket) -> list[tuple[int, int | None]]:
    if not bracket.rounds:
        size = 1 << (len(bracket.players) - 1).bit_length()
        slots: list[int | None] = [
            bracket.players[place] if place < len(bracket.players) else None
            for place in _bracket_order(size)
        ]
    else:
        slots = [advancing(bracket, pairing) for pairing in bracket.current]
    pairs: list[tuple[int, int | None]] = []
    for first, second in zip(slots[::2], slots[1::2], strict=True):
        assert first is not None  # a bye's empty place is always the second of a pair
        pairs.append((first, second))
    return pairs


def _bracket_order(size: int) -> list[int]:
    """Return seed places in bracket order: 1 meets 2 only in the final, 1 and 2 meet the last.

    >>> _bracket_order(8)
    [0, 7, 3, 4, 1, 6, 2, 5]
    """
    order = [0]
    while len(order) < size:
        total = len(order) * 2
        order = [place for seed in order for place in (seed, total - 1 - seed)]
    return order


def _swiss(bracket: Bracket) -> list[tuple[int, int | None]]:
    ranked = [standing.player for standing in standings(bracket)]
    met = {player: set(opponents(bracket, player)) for player in ranked}
    if len(ranked) % 2 == 0:
        pairs = _match_up(ranked, met)
        if pairs is None:
            raise TournamentError("no pairing without a rematch")
        return list(pairs)
    # The bye goes as low in the standings as a pairing of the others allows.
    for sitting in reversed(ranked):
        if None in met[sitting]:
            continue
        rest = [player for player in ranked if player != sitting]
        pairs = _match_up(rest, met)
        if pairs is not None:
            return [*pairs, (sitting, None)]
    raise TournamentError("no pairing without a rematch")


def _match_up(
    ranked: Sequence[int], met: Mapping[int, set[int | None]]
) -> list[tuple[int, int | None]] | None:
    """Pair ``ranked`` top down, each with the best-ranked player they have not met."""
    if not ranked:
        return []
    first, rest = ranked[0], ranked[1:]
    for place, other in enumerate(rest):
        if other in met[first]:
            continue
        others = _match_up([*rest[:place], *rest[place + 1 :]], met)
        if others is not None:
            return [(first, other), *others]
    return None


def _round_robin(bracket: Bracket) -> list[tuple[int, int | None]]:
    seats: list[int | None] = list(bracket.players)
    if len(seats) % 2:
        seats.append(None)
    # The circle method: the first seat stays, the others turn one place each round.
    turned = len(bracket.rounds) % (len(seats) - 1)
    moving = seats[1:]
    moving = moving[-turned:] + moving[:-turned] if turned else moving
    circle = [seats[0], *moving]
    half = len(circle) // 2
    pairs: list[tuple[int, int | None]] = []
    for a, b in zip(circle[:half], reversed(circle[half:]), strict=True):
        if a is None:
            a, b = b, a
        assert a is not None
        pairs.append((a, b))
    return pairs
