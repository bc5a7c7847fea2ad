"""One game of Krig: the deal, rounds with their war steps, and the end (rules §2–§9).

>>> from krigbot.engine.cards import parse_cards
>>> game = Game.from_piles(Rules.preset("standard"), [parse_cards(["QC"]), parse_cards(["TD"])])
>>> played = game.play_round()
>>> played.winner, played.taken, game.outcome.reason
(0, 2, 'all_cards')
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from . import fast
from .cards import (
    JOKER_VALUE,
    card_code,
    format_cards,
    full_deck,
    parse_cards,
)
from .compare import WonBy, best_of
from .core import (
    BaseGame,
    Table,
    check_saved,
    deal,
    fewest_holding,
    outcome_from_dict,
    outcome_to_dict,
    rng_from_json,
    rng_in_state,
    rng_to_json,
    shuffle,
    war_face_down,
    winner_first,
)
from .errors import ChoiceError, DealError, GameOverError, PlayerError, StateError
from .events import BattleView, EndReason, LookChoice, Outcome, Round, TopChoice, WarStep
from .rules import Rules
from .variant import Rebuilt, register


class Game(BaseGame):
    """A game of Krig between 2–4 seats; seat 0 started it (rules §2).

    It has no choices: the members of :class:`~krigbot.engine.variant.Variant` about choices
    say so (nothing pending, never in a battle, every choice refused).
    """

    name: ClassVar[str] = "krig"
    aliases: ClassVar[tuple[str, ...]] = ("war", "plain")
    has_choices: ClassVar[bool] = False
    autoplayable: ClassVar[bool] = True
    has_loot: ClassVar[bool] = False
    plays: ClassVar[frozenset[str]] = frozenset(
        {
            "face_down",
            "shortage",
            "pickup",
            "shuffle_won",
            "jokers",
            "decks",
            "max_rounds",
            "time_limit",
            "target_tricks",
            "points",
            "war_players",
            "wide_war",
            "two_beats_ace",
            "lowest_wins",
            "teams",
        }
    )

    __slots__ = (
        "_unit_seats",
        "eternal_at",
        "eternal_checked",
        "eternal_cycle",
        "rng",
        "won",
    )

    def _set_up(self, rng: random.Random | None) -> None:
        rules = self.rules
        n = rules.players
        self.won: list[deque[int]] = [deque() for _ in range(n)]
        # The RNG is kept only where something random happens after the deal, so that saving a
        # deterministic game does not carry 625 words of Mersenne Twister state.
        needs_rng = rules.pickup == "shuffled" or rules.shuffle_won
        if needs_rng and rng is None:
            rng = random.Random(self.seed)
        self.rng: random.Random | None = rng if needs_rng else None
        # Who competes for the win: each seat alone, or the two teams (rules §9).
        self._unit_seats: tuple[tuple[int, ...], ...] = (
            ((0, 2), (1, 3)) if rules.teams else tuple((s,) for s in range(n))
        )
        self.eternal_checked = not rules.detects_eternal
        self.eternal_at: int | None = None
        self.eternal_cycle: int | None = None

    # ----------------------------------------------------------------------------- creation

    @classmethod
    def from_piles(cls, rules: Rules, piles: Sequence[Sequence[int]], *, seed: int = 0) -> Game:
        """Start from a given deal, top card first (tests, the command line)."""
        if not 2 <= len(piles) <= 4:
            raise DealError(f"a deal has 2 to 4 piles, not {len(piles)}")
        if any(not pile for pile in piles):
            raise DealError("every pile needs at least one card")
        copies = Counter(card for pile in piles for card in pile)
        allowed = Counter(full_deck(decks=rules.decks, jokers=rules.jokers))
        for card, count in copies.items():
            if count > allowed[card]:
                if allowed[card] == 0:
                    raise DealError(f"{card_code(card)} is not in the deck of these rules")
                raise DealError(
                    f"{card_code(card)} appears {count} times; the deck holds {allowed[card]}"
                )
        if rules.players != len(piles):
            rules = rules.replace(players=len(piles))
        return cls(rules, piles, seed=seed)

    # ---------------------------------------------------------------------------- queries

    def holding(self, seat: int) -> int:
        """Return how many cards a seat owns that are not on the table (rules §5)."""
        return len(self.piles[seat]) + len(self.won[seat])

    @property
    def counts(self) -> tuple[int, ...]:
        """Return the cards each seat holds."""
        if not self.rules.shuffle_won:
            return tuple(map(len, self.piles))
        return tuple(len(p) + len(w) for p, w in zip(self.piles, self.won, strict=True))

    def team_of(self, seat: int) -> int:
        """Return a seat's team (seats 0 and 2 are team 0, seats 1 and 3 team 1)."""
        return seat % 2

    @property
    def moves_made(self) -> int:
        """Return how many moves the game has had: its rounds and forfeits."""
        return self.round + len(self.forfeits)

    @property
    def replays_from_seed(self) -> bool:
        """Tell whether the rules and the seed alone play this game again: no one gave up."""
        return not self.forfeits

    # ---------------------------------------------------------- choices: a plain game has none

    @property
    def in_battle(self) -> bool:
        """Tell whether a round waits for choices: never, every round resolves at once."""
        return False

    def pending(self) -> tuple[LookChoice | TopChoice, ...]:
        """Return the choices the game is waiting for: none."""
        return ()

    def begin_battle(self) -> Round:
        """Play the next round, which needs no choice."""
        return self.play_round()

    def steal(self, seat: int, from_seats: Sequence[int]) -> Round | None:
        """Refuse: Krig has no steals."""
        raise ChoiceError(f"seat {seat} has no card to steal with in this game")

    def play(self, seat: int) -> Round | None:
        """Refuse: every card is played by the round itself."""
        raise ChoiceError(f"seat {seat} has no card to steal or play now")

    def put_on_top(self, seat: int, card: int) -> None:
        """Refuse: won cards go under the pile in the order of the pickup."""
        raise ChoiceError(f"seat {seat} has no top card to choose")

    def apply_defaults(self) -> None:
        """Make every pending choice by default: there is none."""

    def look(self, seat: int) -> None:
        """Return no card: nobody looks at a card before playing it."""

    def loot_top(self, seat: int) -> None:
        """Return no card: Krig has no loot piles."""

    def loot_size(self, seat: int) -> int:
        """Return 0: Krig has no loot piles."""
        return 0

    def battle_view(self) -> BattleView:
        """Return the round under way: none, between rounds."""
        return BattleView(battle=(), steals=(), war_steps=(), standing=(), waiting=())

    # ----------------------------------------------------------------------------- playing

    def play_round(self) -> Round:
        """Play one round, with all its war steps, and return what happened."""
        if self.outcome is not None:
            raise GameOverError("the game is over")
        self._ensure_eternal_known()
        played = self._play(record=True)
        assert played is not None
        return played

    def end_by_counting(self) -> Outcome:
        """End the game now, between rounds, counted as at the round limit (rules §7).

        For ``time_limit``: the engine has no clock, so whoever runs the game calls this once
        the time is up. The most cards wins (in a points game the most points, then cards),
        teams count as teams, and equal most is a draw; the reason is ``time_limit``.

        >>> piles = [parse_cards(["KS", "2D"]), parse_cards(["3C"])]
        >>> Game.from_piles(Rules.preset("standard"), piles).end_by_counting()
        Outcome(reason='time_limit', rounds=0, winners=(0,), drawn=(), cycle=None)
        """
        if self.outcome is not None:
            raise GameOverError("the game is over")
        self._end_at_round_limit("time_limit")
        assert self.outcome is not None
        return self.outcome

    def play_rounds(self, count: int) -> Round:
        """Play up to ``count`` rounds (fewer if the game ends) and return the last one.

        The same game as ``count`` calls of :meth:`play_round`, but only the last round builds
        its value object: the others take the lean path of ``engine.fast``. What they held is in
        the game's counters (``round``, ``war_rounds``, ``war_steps``, ...).
        """
        if count < 1:
            raise ValueError("count must be at least 1")
        if self.outcome is not None:
            raise GameOverError("the game is over")
        self._ensure_eternal_known()
        if count > 1:
            before = self.copy()
            fast.advance(self, self.round + count - 1)
            if self.outcome is not None:
                # It ended on a round played without its object: play up to that round again,
                # from the copy, and play the last one recorded.
                ended = self.round
                self.restore_from(before)
                fast.advance(self, ended - 1)
        played = self._play(record=True)
        assert played is not None
        return played

    def play_to_end(self) -> Outcome:
        """Play to the end on the fast path (no round objects) and return the outcome."""
        return fast.run_to_end(self)

    def forfeit(self, seat: int, *, alone: bool = False) -> Outcome | None:
        """Let a seat give up; return the outcome if that ends the game (rules §7, §9).

        ``alone`` lets a team member leave while the partner plays on, as forfeits did in team
        games saved before rules §9 made them the team's: only for replaying those.
        """
        if self.outcome is not None:
            raise GameOverError("the game is over")
        if not self.can_forfeit(seat) or (alone and not self.in_game[seat]):
            raise PlayerError(f"seat {seat} is not in the game")
        self.forfeits.append((seat, self.round))
        if self.rules.teams and not alone:
            # rules §9: a member gives up for the team, and the other team wins; the cards stay
            # where they are (nothing vanishes from a team game).
            self.outcome = Outcome("forfeit", self.round, winners=self._unit_seats[1 - seat % 2])
            return self.outcome
        # rules §7: with 3–4 players the game goes on without them; their cards leave play.
        self.set_aside += self.holding(seat)
        self.piles[seat].clear()
        self.won[seat].clear()
        self.in_game[seat] = False
        self.eliminated.append(seat)
        units = self._unit_seats
        alive = [u for u, seats in enumerate(units) if any(self.in_game[s] for s in seats)]
        if len(alive) == 1:
            self.outcome = Outcome("forfeit", self.round, winners=units[alive[0]])
        elif self.rules.detects_eternal:
            # Positions before the forfeit held this seat's cards, so none can come back:
            # forget the old prediction and look ahead again from here.
            self.eternal_checked = False
            self.eternal_at = None
            self.eternal_cycle = None
        return self.outcome

    # ------------------------------------------------------------------------ the round

    def _draw(self, seat: int) -> int:
        pile = self.piles[seat]
        if not pile:
            won = self.won[seat]
            cards = list(won)
            won.clear()
            assert self.rng is not None
            shuffle(self.rng, cards)
            pile.extend(cards)
        return pile.popleft()

    def play_unrecorded(self) -> None:
        """Play one round by the general path without building its value (the fast path)."""
        self._play(record=False)

    def _play(self, *, record: bool) -> Round | None:
        """Play one round; build the Round value only when asked (the fast path does not)."""
        rules = self.rules
        n = self.players
        in_game = self.in_game
        active = [s for s in range(n) if in_game[s]]
        battle = [(s, self._draw(s)) for s in active]
        table: Table = [battle]
        standing = dict(battle)  # the card each seat would compare now
        contenders = active
        steps: list[WarStep] = []
        out_groups: list[list[int]] = []  # seats knocked out in war steps, each group together
        winner: int | None = None
        won_by: WonBy | None = None
        team_no_war = False

        while True:
            tied_value, tied, why = best_of(standing, contenders, rules)
            if len(tied) == 1:
                winner = tied[0]
                won_by = why
                break
            if rules.teams and len({s % 2 for s in tied}) == 1:
                # rules §9: teammates never fight each other.
                winner = tied[0]
                won_by = "teammates"
                team_no_war = not steps
                break
            if steps or rules.war_players == "tied":
                fighters = tied
            else:
                fighters = [s for s in range(n) if in_game[s]]
            if rules.wide_war and not steps and len(tied) >= 3:
                f = 1  # rules §8: three or four tied in the battle fight one step of 1 down, 1 up
            else:
                f = war_face_down(rules, tied_value)
            step, winner = self._war_step(fighters, f, standing, table, out_groups)
            steps.append(step)
            if winner is not None:
                won_by = "shortage"  # the others ran short and went out
                break
            contenders = [s for s in step.fighters if s not in step.knocked_out]
            if len(contenders) == 0:
                break  # the last fighters went out together: the table is set aside

        return self._collect(
            battle, table, steps, winner, out_groups, team_no_war, won_by, record=record
        )

    def _war_step(
        self,
        fighters: list[int],
        f: int,
        standing: dict[int, int],
        table: Table,
        out_groups: list[list[int]],
    ) -> tuple[WarStep, int | None]:
        """Play one war step; return it and the seat that took the table early, if one did.

        Seats knocked out go to ``out_groups``, one group for those who went out together.
        """
        rules = self.rules
        need = f + 1
        borrowed = dict.fromkeys(fighters, 0)
        supplied: list[tuple[int, int, int]] = []
        if rules.teams:
            for s in fighters:
                missing = need - self.holding(s)
                mate = (s + 2) % 4
                if missing <= 0 or not self.in_game[mate]:
                    continue
                spare = self.holding(mate) - (need if mate in fighters else 0)
                if spare >= missing:  # rules §9: supply the missing cards if they can
                    borrowed[s] = missing
                    supplied.append((mate, s, missing))

        def available(seat: int) -> int:
            return self.holding(seat) + borrowed[seat]

        def take(seat: int, count: int) -> list[int]:
            own = min(count, self.holding(seat))
            cards = [self._draw(seat) for _ in range(own)]
            mate = (seat + 2) % 4
            cards.extend(self._draw(mate) for _ in range(count - own))
            return cards

        short = tuple(s for s in fighters if available(s) < need)
        down: dict[int, list[int]] = {}
        up: dict[int, int] = {}
        out_now: list[int] = []
        remaining = list(fighters)
        if rules.shortage == "lose":
            # rules §5: short fighters go out from the fewest holdings upward, equal together,
            # until everyone left can complete the step or one fighter is left.
            while len(remaining) > 1:
                lacking = [s for s in remaining if available(s) < need]
                if not lacking:
                    break
                group = fewest_holding(lacking, available)
                for s in group:
                    down[s] = take(s, available(s))
                out_now.extend(group)
                out_groups.append(group)
                remaining = [s for s in remaining if s not in group]
            if len(remaining) > 1:
                for s in remaining:
                    cards = take(s, need)
                    down[s], up[s] = cards[:-1], cards[-1]
        elif all(available(s) == 0 for s in fighters):
            # rules §5: nobody can place a card, so the standing cards would tie forever: the
            # fighters are out together and the table is set aside.
            out_now = remaining
            out_groups.append(remaining)
            remaining = []
        else:
            for s in fighters:
                have = available(s)
                if have == 0:
                    continue  # keeps their standing card (rules §5, last_card)
                cards = take(s, min(need, have))
                down[s], up[s] = cards[:-1], cards[-1]

        for s in out_now:
            self.in_game[s] = False
            self.eliminated.append(s)
        standing.update(up)
        step = self._make_step(fighters, down, up, standing, short, tuple(out_now), supplied)
        self._place(table, fighters, down, up)
        if len(remaining) == 1:
            return step, remaining[0]
        return step, None

    @staticmethod
    def _make_step(
        fighters: list[int],
        down: dict[int, list[int]],
        up: dict[int, int],
        standing: dict[int, int],
        short: tuple[int, ...],
        out_now: tuple[int, ...],
        supplied: list[tuple[int, int, int]],
    ) -> WarStep:
        return WarStep(
            fighters=tuple(fighters),
            face_down=tuple(tuple(down.get(s, ())) for s in fighters),
            face_up=tuple(up.get(s) for s in fighters),
            compared=tuple(standing[s] for s in fighters),
            short=short,
            knocked_out=out_now,
            supplied=tuple(supplied),
        )

    @staticmethod
    def _place(
        table: Table, fighters: list[int], down: dict[int, list[int]], up: dict[int, int]
    ) -> None:
        # Cards go down one at a time in lockstep, so each face-down position is a layer.
        order = sorted(fighters)
        depth = max((len(down.get(s, ())) for s in order), default=0)
        for k in range(depth):
            table.append([(s, down[s][k]) for s in order if len(down.get(s, ())) > k])
        face_up = [(s, up[s]) for s in order if s in up]
        if face_up:
            table.append(face_up)

    def _pickup_order(self, table: Table, winner: int) -> list[int]:
        pickup = self.rules.pickup
        if pickup == "winner_first" and len(table) == 1:
            # A round without a war: the winner's card, then the others' in seat order.
            (layer,) = table
            return [c for s, c in layer if s == winner] + [c for s, c in layer if s != winner]
        if pickup == "table":
            return [card for layer in table for _, card in layer]
        if pickup == "winner_first":
            by_seat: dict[int, list[int]] = {}
            for layer in table:
                for seat, card in layer:
                    by_seat.setdefault(seat, []).append(card)
            return winner_first(by_seat, winner)
        cards = [card for layer in table for _, card in layer]
        assert self.rng is not None
        shuffle(self.rng, cards)
        return cards

    def _collect(
        self,
        battle: list[tuple[int, int]],
        table: Table,
        steps: list[WarStep],
        winner: int | None,
        out_groups: list[list[int]],
        team_no_war: bool,
        won_by: WonBy | None,
        *,
        record: bool,
    ) -> Round | None:
        rules = self.rules
        on_table = len(battle) if len(table) == 1 else sum(len(layer) for layer in table)
        taken = 0
        aside = 0
        if winner is not None:
            cards = self._pickup_order(table, winner)
            (self.won if rules.shuffle_won else self.piles)[winner].extend(cards)
            taken = on_table
        else:
            aside = on_table
        self.credit(winner, on_table, len(steps))
        self.round += 1

        eliminated = self.eliminate_empty()
        if steps and (out_groups or eliminated):
            # Who went out, group by group: those knocked out in the war, then the empty-handed.
            moments = [*out_groups, eliminated] if eliminated else out_groups
            eliminated = [s for group in moments for s in group]
            short = {seat for step in steps for seat in step.short}
            drawn = self._unit_members(out_groups[-1]) if out_groups else ()
            self.check_end(winner, self._last_out_was_short(moments, short), drawn)
        else:
            self.check_end(winner, False, ())
        if not record:
            return None
        return self._round(
            tuple(battle),
            tuple(steps),
            winner,
            taken,
            aside,
            tuple(eliminated),
            team_no_war=team_no_war,
            won_by=won_by,
        )

    # ------------------------------------------------------------------------ the end

    def eliminate_empty(self) -> list[int]:
        """Take every seat left with no cards out of the game; return them in seat order."""
        piles, won, in_game = self.piles, self.won, self.in_game
        if all(piles):
            return []  # the common case, without a Python loop
        out = [s for s in range(len(piles)) if in_game[s] and not piles[s] and not won[s]]
        for s in out:
            self.in_game[s] = False
            self.eliminated.append(s)
        return out

    def _unit_members(self, seats: Sequence[int]) -> tuple[int, ...]:
        """Return the seats of every unit (a seat, or a team) with a seat among ``seats``."""
        if not self.rules.teams:
            return tuple(sorted(seats))
        return tuple(s for s in range(4) if any(s % 2 == o % 2 for o in seats))

    def _last_out_was_short(self, moments: list[list[int]], short: set[int]) -> bool:
        """Tell whether the last player or team put out in this round was short (rules §7).

        ``moments`` holds the seats that went out this round, each group at one moment: the
        groups knocked out in war steps, then those left with no cards after the round. A team
        is put out with its last member, and was short if either member was.
        """
        latest = -1
        units: list[tuple[int, ...]] = []
        for seats in self._unit_seats:
            if any(self.in_game[s] for s in seats):
                continue
            went = [i for i, group in enumerate(moments) if not set(seats).isdisjoint(group)]
            if not went:
                continue  # out before this round
            if went[-1] > latest:
                latest, units = went[-1], [seats]
            elif went[-1] == latest:
                units.append(seats)
        return any(s in short for seats in units for s in seats)

    def check_end(self, winner: int | None, shortage: bool, drawn: Sequence[int]) -> None:
        """End the game after a round if it is over (rules §7, the first reason in its list).

        ``shortage`` says that the last player or team put out was short in a war step;
        ``drawn`` who share the draw if nobody is left (the last knocked out, with their team).
        """
        rules = self.rules
        units = self._unit_seats
        in_game = self.in_game
        # A unit is one seat or a team of two: it is alive while its first or last seat is.
        alive = [u for u, seats in enumerate(units) if in_game[seats[0]] or in_game[seats[-1]]]
        if len(alive) == 1:
            reason: EndReason = "war_shortage" if shortage else "all_cards"
            self.outcome = Outcome(reason, self.round, winners=units[alive[0]])
            return
        if not alive:
            self.outcome = Outcome("war_shortage", self.round, drawn=tuple(drawn))
            return
        # rules §7: the target comes before the round limit; a round reaching both on the
        # limit's last round is won by the rounds, not counted by cards.
        if rules.target_tricks is not None and winner is not None:
            unit = winner % 2 if rules.teams else winner
            if sum(self.tricks[s] for s in units[unit]) >= rules.target_tricks:
                self.outcome = Outcome("target", self.round, winners=units[unit])
                return
        if rules.max_rounds is not None and self.round >= rules.max_rounds:
            self._end_at_round_limit()
            return
        if self.eternal_at is not None and self.round >= self.eternal_at:
            self.outcome = Outcome(
                "eternal", self.round, drawn=self.in_play(), cycle=self.eternal_cycle
            )

    def in_play(self) -> tuple[int, ...]:
        """Return the seats still playing, for themselves or (rules §9) through a teammate."""
        return tuple(
            sorted(
                s
                for seats in self._unit_seats
                if any(self.in_game[s] for s in seats)
                for s in seats
            )
        )

    def _end_at_round_limit(self, reason: EndReason = "round_limit") -> None:
        """End the game by counting: the round limit or the time limit (rules §7, §9)."""
        units = {
            u: seats
            for u, seats in enumerate(self._unit_seats)
            if any(self.in_game[s] for s in seats)
        }

        def score(seats: tuple[int, ...]) -> tuple[int, int]:
            cards = sum(self.holding(s) for s in seats)
            # rules §7: points first, then cards; without points only the cards count.
            return (sum(self.points[s] for s in seats), cards) if self.rules.points else (cards, 0)

        best = max(score(seats) for seats in units.values())
        top = [seats for seats in units.values() if score(seats) == best]
        if len(top) == 1:
            self.outcome = Outcome(reason, self.round, winners=top[0])
        else:
            drawn = tuple(sorted(s for seats in top for s in seats))
            self.outcome = Outcome(reason, self.round, drawn=drawn)

    # ----------------------------------------------------------- eternal (rules §7)

    def _ensure_eternal_known(self) -> None:
        if self.eternal_checked:
            return
        found = fast.find_repetition(self)
        self.eternal_checked = True
        if found is not None:
            rounds_until, cycle = found
            self.eternal_at = self.round + rounds_until
            self.eternal_cycle = cycle

    def position(self) -> tuple[tuple[int, ...], ...]:
        """Return the position that decides the future: every pile, in order (rules §7)."""
        return tuple(tuple(pile) for pile in self.piles) + tuple(tuple(w) for w in self.won)

    # ------------------------------------------------------------------- copy and save

    def restore_from(self, other: Game) -> None:
        """Become ``other`` (a copy taken earlier), sharing its piles and counters from now on."""
        for name in _GAME_SLOTS:
            setattr(self, name, getattr(other, name))

    def copy(self) -> Game:
        """Return an independent copy with the same future."""
        other = Game.__new__(Game)
        for name in _SHARED_SLOTS:
            setattr(other, name, getattr(self, name))
        other.piles = [pile.copy() for pile in self.piles]
        other.won = [pile.copy() for pile in self.won]
        other.in_game = self.in_game[:]
        other.tricks = self.tricks[:]
        other.points = self.points[:]
        other.wars_won = self.wars_won[:]
        other.biggest_pot = self.biggest_pot[:]
        other.eliminated = self.eliminated[:]
        other.forfeits = self.forfeits[:]
        if self.rng is not None:
            other.rng = rng_in_state(self.rng.getstate())
        return other

    def to_dict(self) -> dict[str, Any]:
        """Return the whole game as a JSON-safe dict; :meth:`from_dict` restores its future."""
        return {
            **self._base_to_dict("krig"),
            "piles": [format_cards(pile) for pile in self.piles],
            "won": [format_cards(pile) for pile in self.won],
            "rng": None if self.rng is None else rng_to_json(self.rng),
            "eternal": {
                "checked": self.eternal_checked,
                "at": self.eternal_at,
                "cycle": self.eternal_cycle,
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Game:
        """Restore a game saved with :meth:`to_dict`."""
        check_saved(data, "krig")
        try:
            rules = Rules.from_dict(data["rules"])
            game = cls(rules, [parse_cards(pile) for pile in data["piles"]], seed=data["seed"])
            game.won = [deque(parse_cards(pile)) for pile in data["won"]]
            game._base_from_dict(data)
            if data["rng"] is not None:
                game.rng = rng_from_json(data["rng"])
            eternal = data["eternal"]
            game.eternal_checked = bool(eternal["checked"])
            game.eternal_at = eternal["at"]
            game.eternal_cycle = eternal["cycle"]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise StateError(f"damaged saved game: {exc}") from exc
        return game

    @classmethod
    def replay(cls, saved: dict[str, Any]) -> Iterator[Round]:
        """Yield every round of a save again: the deal fixes the game, only forfeits change it."""
        rules = Rules.from_dict(saved["rules"])
        game = cls.new(rules, int(saved["seed"]))
        forfeits = sorted(((int(rnd), int(seat)) for seat, rnd in saved["forfeits"]), reverse=True)
        last = int(saved["round"])
        # rules §9 now ends a team game at its forfeit; one saved earlier may have gone on after
        # it (the partner played on), and is replayed as it was played.
        alone = rules.teams and bool(forfeits) and (len(forfeits) > 1 or forfeits[0][0] < last)
        while game.outcome is None and game.round < last:
            while forfeits and forfeits[-1][0] == game.round:
                game.forfeit(forfeits.pop()[1], alone=alone)
            if game.outcome is not None:
                return
            yield game.play_round()

    @classmethod
    def rebuild(cls, saved: dict[str, Any]) -> Rebuilt:
        """Replay a save and keep its deal in play, to follow its later saves."""
        return _FollowedGame(cls.new(Rules.from_dict(saved["rules"]), int(saved["seed"])), saved)


class _FollowedGame:
    """A Krig game replayed up to its latest save, played on round by round as it is saved.

    A forfeit changes the game's course: a save with one is replayed whole, and not followed.
    """

    __slots__ = ("_game", "rounds")

    def __init__(self, game: Game, saved: dict[str, Any]) -> None:
        self._game: Game | None = game
        self.rounds: list[Round] = []
        if not self.follow(saved):
            self._game = None
            self.rounds = list(Game.replay(saved))

    def follow(self, saved: dict[str, Any]) -> bool:
        game = self._game
        last = int(saved["round"])
        if game is None or saved["forfeits"] or last < len(self.rounds):
            return False
        while game.outcome is None and game.round < last:
            self.rounds.append(game.play_round())
        return True


register(Game)

_GAME_SLOTS = (*BaseGame.__slots__, *Game.__slots__)
"""Every attribute of a Game, for copying one whole."""
_COPIED_APART = {
    "piles",
    "won",
    "in_game",
    "tricks",
    "points",
    "wars_won",
    "biggest_pot",
    "eliminated",
    "forfeits",
}
_SHARED_SLOTS = tuple(name for name in _GAME_SLOTS if name not in _COPIED_APART)
"""The attributes a copy shares (values that never change in place, and the rules); the
others it copies apart, and setting them twice would cost the fast path's every probe."""

__all__ = [
    "JOKER_VALUE",
    "BaseGame",
    "Game",
    "check_saved",
    "deal",
    "outcome_from_dict",
    "outcome_to_dict",
    "rng_from_json",
    "rng_in_state",
    "rng_to_json",
    "shuffle",
    "war_face_down",
]
