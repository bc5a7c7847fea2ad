"""Steal War (rules §10): Krig with face-up loot piles, private looks and steals.

A battle is driven by choices. :meth:`StealGame.begin_battle` starts one; each seat whose top
card matches an opponent's loot top then has a :class:`LookChoice` (steal those piles, or play
the card). Seats with nothing to steal wait; when no choice is left, every waiting card is
played and the battle resolves, war steps included (a war's face-up card may steal first). The
winner then has a :class:`TopChoice` for the top of their loot pile. Any choice not made can be
filled in by the default of §10 (:meth:`StealGame.apply_defaults`): steal whenever possible,
otherwise play; won cards keep the order placed with the winning card on top.

>>> game = StealGame.new(Rules.preset("stjel"), seed=7)
>>> played = game.play_round()
>>> played.number, sum(game.counts) + game.set_aside
(1, 54)
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from .cards import card_code, format_cards, parse_card, parse_cards
from .compare import WonBy, best_of
from .core import BaseGame, Table, check_saved, rng_from_json, rng_to_json, shuffle
from .errors import ChoiceError, DealError, GameOverError, PlayerError, StateError
from .events import BattleView, EndReason, LookChoice, Outcome, Round, Steal, TopChoice, WarStep
from .rules import Rules
from .variant import Rebuilt, register


class StealGame(BaseGame):
    """A game of Steal War between 2–4 seats."""

    name: ClassVar[str] = "stjel"
    aliases: ClassVar[tuple[str, ...]] = ("steal",)
    has_choices: ClassVar[bool] = True
    autoplayable: ClassVar[bool] = False
    """Its choices are the game: autoplay would take them all from the players."""
    has_loot: ClassVar[bool] = True
    plays: ClassVar[frozenset[str]] = frozenset(
        {"jokers", "decks", "max_rounds", "time_limit", "target_tricks"}
    )
    """rules §10: the deck and when the game ends. Its wars (3 down, running short loses, only
    the tied), its loot piles and its plain comparison are fixed."""

    def _set_up(self, rng: random.Random | None) -> None:
        n = self.rules.players
        self.loot: list[list[int]] = [[] for _ in range(n)]
        """Each seat's face-up loot pile; the last card is on top."""
        self.actions: list[list[Any]] = []
        """Every move made, in order: with the seed, enough to replay the game exactly."""
        self._rng = rng if rng is not None else random.Random(self.seed)
        # The battle under way (empty between battles).
        self._battle: list[tuple[int, int]] = []
        self._table: Table = []
        self._standing: dict[int, int] = {}
        self._fighters: list[int] = []
        self._waiting: list[int] = []
        self._phase: list[int] = []
        """The seats turning a face-up card in this phase (the battle, or a war step)."""
        self._steps: list[WarStep] = []
        self._steals: list[Steal] = []
        self._knocked: list[int] = []
        self._together: list[int] = []
        """The group knocked out last, together (used only in the call that resolves)."""
        self._shortage = False
        self._top: TopChoice | None = None

    @classmethod
    def from_piles(
        cls, rules: Rules, piles: Sequence[Sequence[int]], *, seed: int = 0
    ) -> StealGame:
        """Start from a given deal, top card first (tests, the command line)."""
        if any(not pile for pile in piles):
            raise DealError("every pile needs at least one card")
        return cls(rules.replace(players=len(piles)), piles, seed=seed)

    # ------------------------------------------------------------------------- queries

    def battle_view(self) -> BattleView:
        """Return the battle under way, as everyone at the table may see it."""
        return BattleView(
            battle=tuple(self._battle),
            steals=tuple(self._steals),
            war_steps=tuple(self._steps),
            standing=tuple(self._standing.items()),
            waiting=tuple(self._waiting),
        )

    @property
    def in_battle(self) -> bool:
        """Tell whether a battle has begun and not yet resolved."""
        return bool(self._fighters)

    def holding(self, seat: int) -> int:
        """Return the cards a seat owns off the table: playing pile and loot pile."""
        return len(self.piles[seat]) + len(self.loot[seat])

    @property
    def counts(self) -> tuple[int, ...]:
        """Return the cards each seat holds."""
        return tuple(self.holding(s) for s in range(self.players))

    def loot_top(self, seat: int) -> int | None:
        """Return the card on top of a seat's loot pile, which everyone can see."""
        loot = self.loot[seat]
        return loot[-1] if loot else None

    def loot_size(self, seat: int) -> int:
        """Return how many cards a seat's loot pile holds."""
        return len(self.loot[seat])

    @property
    def moves_made(self) -> int:
        """Return how many moves the game has had: every one logged in ``actions``."""
        return len(self.actions)

    @property
    def replays_from_seed(self) -> bool:
        """Tell whether the rules and the seed alone play this game again: no, choices do."""
        return False

    def look(self, seat: int) -> int | None:
        """Return the card a seat would play next (only that player may be shown it)."""
        pile = self.piles[seat]
        return pile[0] if self.in_game[seat] and pile else None

    def pending(self) -> tuple[LookChoice | TopChoice, ...]:
        """Return the choices the game is waiting for."""
        if self._top is not None:
            return (self._top,)
        choices: list[LookChoice | TopChoice] = []
        for seat in self._waiting:
            card = self.look(seat)
            if card is None:
                continue
            targets = self._steal_targets(seat, card)
            if targets:
                choices.append(LookChoice(seat, card, targets))
        return tuple(choices)

    # ------------------------------------------------------------------------- moves

    def begin_battle(self) -> Round | None:
        """Start the next battle; return it if it resolved with no choice to make."""
        self._check_running()
        if self.in_battle:
            return None
        self.actions.append(["begin"])
        if self._top is not None:
            self._apply_top(self._top.seat, None)
        self._fighters = [s for s in range(self.players) if self.in_game[s]]
        self._waiting = list(self._fighters)
        self._phase = list(self._fighters)
        return self._advance()

    def steal(self, seat: int, from_seats: Sequence[int]) -> Round | None:
        """Let a seat steal loot piles with the card it looks at; then it looks again."""
        self._check_running()
        choice = self._look_choice(seat)
        targets = tuple(sorted(set(from_seats)))
        if not targets or any(t not in choice.can_steal for t in targets):
            raise ChoiceError(f"seat {seat} cannot steal from {list(from_seats)}")
        self.actions.append(["steal", seat, list(targets)])
        card = self.piles[seat].popleft()
        stolen: list[int] = []
        for target in targets:
            stolen.extend(self.loot[target])
            self.loot[target].clear()
        stolen.append(card)
        self.loot[seat].extend(stolen)
        self._steals.append(Steal(seat, card, targets, len(stolen)))
        self._refill_all()
        return self._advance()

    def play(self, seat: int) -> Round | None:
        """Let a seat play the card it looks at instead of stealing."""
        self._check_running()
        self._look_choice(seat)
        self.actions.append(["play", seat])
        self._play_card(seat)
        return self._advance()

    def put_on_top(self, seat: int, card: int) -> None:
        """Let the winner of the last battle choose the top card of their loot pile."""
        if self._top is None or self._top.seat != seat:
            raise ChoiceError(f"seat {seat} has no top card to choose")
        if card not in self._top.cards:
            raise ChoiceError(f"{card_code(card)} was not won in the last battle")
        self.actions.append(["top", seat, card_code(card)])
        self._apply_top(seat, card)

    def apply_defaults(self) -> Round | None:
        """Make every pending choice by the default of §10; return a battle that resolved."""
        self._check_running()
        if self._top is not None:
            self.actions.append(["top", self._top.seat, None])
            self._apply_top(self._top.seat, None)
            return None
        resolved: Round | None = None
        while resolved is None and self.in_battle:
            choices = [c for c in self.pending() if isinstance(c, LookChoice)]
            if not choices:
                break
            first = choices[0]
            resolved = self.steal(first.seat, first.can_steal)
        return resolved

    def play_round(self) -> Round:
        """Play one whole battle, making every choice by default (autoplay, simulations)."""
        played = self.begin_battle() if not self.in_battle else None
        while played is None:
            played = self.apply_defaults()
        return played

    def play_rounds(self, count: int) -> Round:
        """Play up to ``count`` battles by default (fewer if the game ends); return the last."""
        if count < 1:
            raise ValueError("count must be at least 1")
        start = self.round
        last = self.play_round()
        while self.round - start < count and self.outcome is None:
            last = self.play_round()
        return last

    def play_to_end(self) -> Outcome:
        """Play by defaults until the game ends."""
        while self.outcome is None:
            self.play_round()
        return self.outcome

    def end_by_counting(self) -> Outcome:
        """End the game between battles, counted as at the round limit (rules §7 time_limit).

        A battle under way is played out first (its choices are the players'), so this refuses
        during one; a top card still to choose no longer matters and is dropped.
        """
        self._check_running()
        if self.in_battle:
            raise ChoiceError("finish the battle under way first")
        self.actions.append(["count"])
        self._top = None
        self._count_up("time_limit")
        assert self.outcome is not None
        return self.outcome

    def forfeit(self, seat: int) -> Outcome | None:
        """Let a seat give up; the others play on, or win if only one is left."""
        if self.outcome is not None:
            raise GameOverError("the game is over")
        if not self.can_forfeit(seat):
            raise PlayerError(f"seat {seat} is not in the game")
        if self.in_battle:
            raise ChoiceError("finish the battle under way first")
        self.actions.append(["forfeit", seat])
        self.forfeits.append((seat, self.round))
        self.set_aside += self.holding(seat)
        self.piles[seat].clear()
        self.loot[seat].clear()
        self.in_game[seat] = False
        self.eliminated.append(seat)
        if self._top is not None and self._top.seat == seat:
            self._top = None
        alive = [s for s in range(self.players) if self.in_game[s]]
        if len(alive) == 1:
            self.outcome = Outcome("forfeit", self.round, winners=(alive[0],))
        return self.outcome

    # ---------------------------------------------------------------------- internals

    def _check_running(self) -> None:
        if self.outcome is not None:
            raise GameOverError("the game is over")

    def _refill(self, seat: int) -> None:
        # rules §10: an empty playing pile is replaced by the shuffled loot pile.
        if not self.piles[seat] and self.loot[seat]:
            cards = self.loot[seat][:]
            self.loot[seat].clear()
            shuffle(self._rng, cards)
            self.piles[seat].extend(cards)

    def _refill_all(self) -> None:
        # Refilling at once, in seat order, after every move (never inside a query) keeps the
        # RNG's use independent of who looked at what and when.
        for seat in range(self.players):
            self._refill(seat)

    def _draw(self, seat: int) -> int:
        self._refill(seat)
        return self.piles[seat].popleft()

    def _steal_targets(self, seat: int, card: int) -> tuple[int, ...]:
        value = card >> 2
        return tuple(
            other
            for other in range(self.players)
            if other != seat and self.loot[other] and self.loot[other][-1] >> 2 == value
        )

    def _look_choice(self, seat: int) -> LookChoice:
        for choice in self.pending():
            if isinstance(choice, LookChoice) and choice.seat == seat:
                return choice
        raise ChoiceError(f"seat {seat} has no card to steal or play now")

    def _play_card(self, seat: int) -> None:
        card = self._draw(seat)
        self._waiting.remove(seat)
        self._standing[seat] = card
        if not self._steps:
            self._battle.append((seat, card))

    def _advance(self) -> Round | None:
        """Play waiting cards and war steps until a choice is needed or the battle resolves."""
        while True:
            if self.pending():
                return None
            for seat in list(self._waiting):
                self._play_card(seat)
            self._table.append([(s, self._standing[s]) for s in sorted(self._phase)])
            if self._steps:
                # The war step's face-up cards are known only now that they were played.
                last = self._steps[-1]
                self._steps[-1] = dataclasses.replace(
                    last,
                    face_up=tuple(self._standing.get(s) for s in last.fighters),
                    compared=tuple(
                        self._standing.get(s, c)
                        for s, c in zip(last.fighters, last.compared, strict=True)
                    ),
                )
            contenders = [s for s in self._fighters if s in self._standing]
            _, tied, why = best_of(self._standing, contenders, self.rules)
            if len(tied) == 1:
                return self._resolve(tied[0], why)
            winner, done = self._war_step(tied)
            if done:
                # The others ran short and went out; or nobody is left to take the table.
                return self._resolve(winner, "shortage" if winner is not None else None)

    def _war_step(self, tied: list[int]) -> tuple[int | None, bool]:
        """Place the face-down cards of a war step; return (winner, done) when it ends early.

        When the last fighters go out together (nobody takes the table), they are the last
        group in ``_together``, who share a draw if nobody else is left.
        """
        need = self.rules.face_down + 1 if isinstance(self.rules.face_down, int) else 4
        remaining = list(tied)
        out_now: list[int] = []
        short = tuple(s for s in tied if self.holding(s) < need)
        down: dict[int, list[int]] = {}
        while len(remaining) > 1:
            shorts = [s for s in remaining if self.holding(s) < need]
            if not shorts:
                break
            fewest = min(self.holding(s) for s in shorts)
            group = [s for s in shorts if self.holding(s) == fewest]
            for s in group:
                down[s] = [self._draw(s) for _ in range(self.holding(s))]
                out_now.append(s)
            self._together = group
            remaining = [s for s in remaining if s not in group]
        if len(remaining) > 1:
            for s in remaining:
                down[s] = [self._draw(s) for _ in range(need - 1)]
        if short:
            self._shortage = True
        for s in out_now:
            self.in_game[s] = False
            self.eliminated.append(s)
            self._knocked.append(s)
        order = sorted(down)
        for k in range(max((len(down[s]) for s in order), default=0)):
            self._table.append([(s, down[s][k]) for s in order if len(down[s]) > k])
        self._steps.append(
            WarStep(
                fighters=tuple(tied),
                face_down=tuple(tuple(down.get(s, ())) for s in tied),
                face_up=tuple(None for _ in tied),
                compared=tuple(self._standing[s] for s in tied),
                short=short,
                knocked_out=tuple(out_now),
            )
        )
        if len(remaining) <= 1:
            return (remaining[0] if remaining else None), True
        # The war's face-up card may be looked at and used to steal first (rules §10).
        self._fighters = remaining
        self._waiting = list(remaining)
        self._phase = list(remaining)
        self._standing = {}
        self._refill_all()
        return None, False

    def _resolve(self, winner: int | None, why: WonBy | None) -> Round:
        """Give the table to the winner (or set it aside) and end the battle."""
        cards = [card for layer in self._table for _, card in layer]
        taken = 0
        aside = 0
        if winner is not None:
            winning = self._standing[winner]
            order = cards[:]
            order.remove(winning)
            order.append(winning)  # default: the order placed, the winning card on top
            self.loot[winner].extend(order)
            taken = len(order)
        else:
            aside = len(cards)
        self.credit(winner, len(cards), len(self._steps))
        self.round += 1
        empty = [s for s in range(self.players) if self.in_game[s] and self.holding(s) == 0]
        for s in empty:
            self.in_game[s] = False
            self.eliminated.append(s)
        eliminated = self._knocked + empty
        self._end_checks(winner, bool(empty))
        # A winner whose playing pile ran out gets the loot shuffled in at once: no top to pick.
        offer_top = winner is not None and self.outcome is None and bool(self.piles[winner])
        self._refill_all()
        if offer_top:
            assert winner is not None
            self._top = TopChoice(winner, tuple(cards))
        played = self._round(
            tuple(sorted(self._battle)),
            tuple(self._steps),
            winner,
            taken,
            aside,
            tuple(eliminated),
            steals=tuple(self._steals),
            won_by=why,
        )
        self._clear_battle()
        return played

    def _clear_battle(self) -> None:
        self._battle = []
        self._table = []
        self._standing = {}
        self._fighters = []
        self._waiting = []
        self._phase = []
        self._steps = []
        self._steals = []
        self._knocked = []
        self._together = []
        self._shortage = False

    def _end_checks(self, winner: int | None, emptied: bool) -> None:
        """End the game after a battle if it is over (rules §7, the first reason in its list).

        ``emptied`` tells that someone went out with no cards left after the battle: they were
        put out last, and not for running short (a short fighter is knocked out in the war).
        """
        alive = [s for s in range(self.players) if self.in_game[s]]
        if len(alive) == 1:
            short = self._shortage and bool(self._knocked) and not emptied
            reason: EndReason = "war_shortage" if short else "all_cards"
            self.outcome = Outcome(reason, self.round, winners=(alive[0],))
        elif not alive:
            together = tuple(sorted(self._together))
            self.outcome = Outcome("war_shortage", self.round, drawn=together)
        elif (
            self.rules.target_tricks is not None
            and winner is not None
            and self.tricks[winner] >= self.rules.target_tricks
        ):
            self.outcome = Outcome("target", self.round, winners=(winner,))
        elif self.rules.max_rounds is not None and self.round >= self.rules.max_rounds:
            self._count_up("round_limit")

    def _count_up(self, reason: EndReason) -> None:
        """End the game by counting: the most cards wins, equal most is a draw (rules §7)."""
        alive = [s for s in range(self.players) if self.in_game[s]]
        best = max(self.holding(s) for s in alive)
        top = tuple(s for s in alive if self.holding(s) == best)
        if len(top) == 1:
            self.outcome = Outcome(reason, self.round, winners=top)
        else:
            self.outcome = Outcome(reason, self.round, drawn=top)

    def _apply_top(self, seat: int, card: int | None) -> None:
        assert self._top is not None
        won = len(self._top.cards)
        if card is not None:
            loot = self.loot[seat]
            tail = loot[-won:]
            tail.remove(card)
            tail.append(card)
            loot[-won:] = tail
        self._top = None

    # ------------------------------------------------------------------------- saving

    def copy(self) -> StealGame:
        """Return an independent copy with the same future, pending choices included."""
        return StealGame.from_dict(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """Return the whole game, pending choices included, as a JSON-safe dict."""
        return {
            **self._base_to_dict("stjel"),
            "piles": [format_cards(pile) for pile in self.piles],
            "loot": [format_cards(pile) for pile in self.loot],
            "actions": [list(a) for a in self.actions],
            "rng": rng_to_json(self._rng),
            "battle": {
                "battle": [[s, card_code(c)] for s, c in self._battle],
                "table": [[[s, card_code(c)] for s, c in layer] for layer in self._table],
                "standing": [[s, card_code(c)] for s, c in self._standing.items()],
                "fighters": self._fighters[:],
                "waiting": self._waiting[:],
                "phase": self._phase[:],
                "steps": [_step_to_dict(step) for step in self._steps],
                "steals": [
                    [st.seat, card_code(st.card), list(st.from_seats), st.cards]
                    for st in self._steals
                ],
                "knocked": self._knocked[:],
                "shortage": self._shortage,
                "top": None
                if self._top is None
                else [self._top.seat, [card_code(c) for c in self._top.cards]],
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StealGame:
        """Restore a game saved with :meth:`to_dict`."""
        check_saved(data, "stjel")
        try:
            rules = Rules.from_dict(data["rules"])
            piles = [parse_cards(pile) for pile in data["piles"]]
            game = cls(rules, piles, seed=data["seed"])
            game.loot = [parse_cards(pile) for pile in data["loot"]]
            game._base_from_dict(data)
            game.actions = [list(action) for action in data["actions"]]
            game._rng = rng_from_json(data["rng"])
            battle = data["battle"]
            game._battle = [(s, parse_card(c)) for s, c in battle["battle"]]
            game._table = [[(s, parse_card(c)) for s, c in layer] for layer in battle["table"]]
            game._standing = {s: parse_card(c) for s, c in battle["standing"]}
            game._fighters = list(battle["fighters"])
            game._waiting = list(battle["waiting"])
            game._phase = list(battle["phase"])
            game._steps = [_step_from_dict(step) for step in battle["steps"]]
            game._steals = [
                Steal(seat, parse_card(card), tuple(froms), cards)
                for seat, card, froms, cards in battle["steals"]
            ]
            game._knocked = list(battle["knocked"])
            game._shortage = bool(battle["shortage"])
            top = battle["top"]
            game._top = (
                None if top is None else TopChoice(top[0], tuple(parse_card(c) for c in top[1]))
            )
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise StateError(f"damaged saved game: {exc}") from exc
        return game

    @classmethod
    def replay(cls, saved: dict[str, Any]) -> Iterator[Round]:
        """Yield every round of a save again, from its seed and the moves it logged."""
        game = cls.new(Rules.from_dict(saved["rules"]), int(saved["seed"]))
        for action in saved["actions"]:
            played = steal_move(game, action)
            if played is not None:
                yield played

    @classmethod
    def rebuild(cls, saved: dict[str, Any]) -> Rebuilt:
        """Make a save's logged moves again and keep the game, to follow its later moves."""
        return _FollowedSteal(cls.new(Rules.from_dict(saved["rules"]), int(saved["seed"])), saved)


def _step_to_dict(step: WarStep) -> dict[str, Any]:
    return {
        "fighters": list(step.fighters),
        "face_down": [[card_code(c) for c in cards] for cards in step.face_down],
        "face_up": [None if c is None else card_code(c) for c in step.face_up],
        "compared": [card_code(c) for c in step.compared],
        "short": list(step.short),
        "knocked_out": list(step.knocked_out),
    }


def _step_from_dict(data: dict[str, Any]) -> WarStep:
    return WarStep(
        fighters=tuple(data["fighters"]),
        face_down=tuple(tuple(parse_card(c) for c in cards) for cards in data["face_down"]),
        face_up=tuple(None if c is None else parse_card(c) for c in data["face_up"]),
        compared=tuple(parse_card(c) for c in data["compared"]),
        short=tuple(data["short"]),
        knocked_out=tuple(data["knocked_out"]),
    )


class _FollowedSteal:
    """A Steal War game whose logged moves were made again, followed as more are logged."""

    __slots__ = ("_actions", "_game", "rounds")

    def __init__(self, game: StealGame, saved: dict[str, Any]) -> None:
        self._game = game
        self._actions: list[Sequence[Any]] = []
        self.rounds: list[Round] = []
        self.follow(saved)

    def follow(self, saved: dict[str, Any]) -> bool:
        actions: Sequence[Sequence[Any]] = saved["actions"]
        done = len(self._actions)
        if actions[:done] != self._actions:
            return False  # not the log it followed
        for action in actions[done:]:
            played = steal_move(self._game, action)
            self._actions.append(action)
            if played is not None:
                self.rounds.append(played)
        return True


def steal_move(game: StealGame, action: Sequence[Any]) -> Round | None:
    """Make one logged move again; return the round it played, if it played one."""
    kind = action[0]
    if kind == "begin":
        return game.begin_battle()
    if kind == "steal":
        return game.steal(int(action[1]), [int(s) for s in action[2]])
    if kind == "play":
        return game.play(int(action[1]))
    if kind == "top" and action[2] is None:
        game.apply_defaults()
    elif kind == "top":
        game.put_on_top(int(action[1]), parse_card(action[2]))
    elif kind == "forfeit":
        game.forfeit(int(action[1]))
    elif kind == "count":
        game.end_by_counting()
    else:
        raise StateError(f"unknown Steal War move {kind!r}")
    return None


register(StealGame)


__all__ = ["StealGame", "steal_move"]
