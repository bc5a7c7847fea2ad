"""Tournaments: sign-up, rounds of matches played as ordinary games, a deadline each round.

A tournament is durable state like a game (``storage.tournaments``): every change is written
before anyone is told of it, under the tournament's lock, over the version it read. The pairings
are the engine's (:mod:`krigbot.engine.tournament`). Each match of a round is a game (or a
best-of match) dealt at once in a thread of its own, which the edge opens and hands to
:meth:`Tournaments.open_match`; the game counts like any other. When a match game finishes,
the registry's finish hook records the match's result, and the round's last result pairs the
next round or crowns the champion. At the round's deadline the matches still being played are
ended by counting the cards, as a time limit ends a game (rules §7). Whatever the edge must show
(a sign-up list, a new round's threads, the champion) it hears through :attr:`on_change`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from krigbot.config import Shards
from krigbot.engine import EngineError, Outcome, Rules, RulesError, Variant, new_game
from krigbot.engine.game import outcome_from_dict
from krigbot.engine.match import MatchInfo
from krigbot.engine.tournament import (
    FORMATS,
    Bracket,
    Format,
    TournamentError,
    champion,
    most_players,
    next_round,
    record,
    start,
)
from krigbot.sessions.authority import Actor
from krigbot.sessions.deadlines import Deadline, Deadlines
from krigbot.sessions.matches import LAST_GAME
from krigbot.sessions.play import Play
from krigbot.sessions.registry import Registry
from krigbot.sessions.results import FlipResult, LostWrite, Player, Refusal
from krigbot.storage import ChannelBusyError, GameRow, StorageError
from krigbot.storage.tournaments import (
    MatchDeal,
    TournamentBusyError,
    TournamentConflictError,
    TournamentLeaseLostError,
    TournamentRow,
    TournamentStatus,
)

log = logging.getLogger(__name__)

BEST_OF = (1, 3, 5)
MOST_OPEN_PER_SERVER = 3
"""How many tournaments a server may have signing up or playing at once."""
SIGNUP_MINUTES = 30
MATCH_MINUTES = 15
RETRY = timedelta(seconds=5)
"""How soon a round's deadline looks again at a match it could not end yet (a battle)."""
CREATORS_SETTING = "tournament_creators"
"""The server setting of who may create a tournament: ``moderators`` (the default) or
``everyone``."""
CREATORS = ("moderators", "everyone")
CHANNEL_GONE = "channel_gone"
"""The reason of a tournament cancelled because its channel was deleted."""
GONE_SHOWN = timedelta(days=1)
"""How long ``/krig tournament status`` lists a tournament cancelled because its channel was
deleted: nobody was told of it in a channel."""
KEY = "tournament"
"""The key in a match game's extra naming its tournament, round and match."""

Change = Literal["signup", "started", "result", "round", "clock", "finished", "cancelled"]
"""What happened: the sign-up list changed, the first round began, a match ended, a new round
began, the round's deadline moved (held while a thread is missing, or its whole time given again
once the last one opened), the champion is known, the tournament was called off."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player who signed up, with the name they had then."""

    user_id: int
    name: str


@dataclass(frozen=True, slots=True)
class Tournament:
    """One tournament as the session layer sees it (its row's state, read whole)."""

    row: TournamentRow
    name: str
    organiser_id: int
    format: Format
    variant: str
    best_of: int
    size: int
    match_minutes: int
    role_id: int | None
    lang: str
    seed: int
    players: tuple[Entrant, ...] = ()
    left: tuple[int, ...] = ()
    """Players who left after the start: they forfeit every match still to come."""
    bracket: Bracket | None = None
    threads: tuple[int | None, ...] = ()
    """The thread of each match of the current round, once opened (None: not yet, or a bye)."""
    intents: tuple[str | None, ...] = ()
    """The name of the thread the edge set out to open for each match of the current round
    (None: not yet): a thread it made but could not remember before a restart is found by it."""
    closes_at: datetime | None = None
    round_ends_at: datetime | None = None
    signup_message_id: int | None = None
    board_message_id: int | None = None
    reason: str | None = None
    """Why it was cancelled: ``"organiser"``, ``"too_few"`` or ``"channel_gone"`` (its channel
    was deleted)."""
    told_forbidden: bool = False
    """The channel was told that the bot may not open threads there: it is told once, until a
    round's threads open again, however often the bot restarts meanwhile."""

    @property
    def id(self) -> int:
        return self.row.id

    @property
    def status(self) -> TournamentStatus:
        return self.row.status

    @property
    def guild_id(self) -> int:
        return self.row.guild_id

    @property
    def channel_id(self) -> int:
        return self.row.channel_id

    @property
    def channel_gone(self) -> bool:
        """Tell whether it was cancelled because its channel was deleted."""
        return self.reason == CHANNEL_GONE

    @property
    def champion(self) -> int | None:
        return None if self.bracket is None else champion(self.bracket)

    def unopened(self) -> list[int]:
        """Return the matches of the current round to play that have no thread yet."""
        if self.bracket is None:
            return []
        return [
            number
            for number, pairing in enumerate(self.bracket.current)
            if not pairing.done and pairing.b is not None and self.threads[number] is None
        ]

    def intent(self, number: int) -> str | None:
        """Return the name of the thread set out to be opened for a match, if any."""
        return self.intents[number] if number < len(self.intents) else None

    def name_of(self, user_id: int) -> str:
        """Return a player's name as they signed up."""
        for entrant in self.players:
            if entrant.user_id == user_id:
                return entrant.name
        return str(user_id)

    def state(self) -> dict[str, Any]:
        """Return the JSON kept in the row's state."""
        return {
            "name": self.name,
            "organiser": self.organiser_id,
            "format": self.format,
            "variant": self.variant,
            "best_of": self.best_of,
            "size": self.size,
            "match_minutes": self.match_minutes,
            "role": self.role_id,
            "lang": self.lang,
            "seed": self.seed,
            "players": [[entrant.user_id, entrant.name] for entrant in self.players],
            "left": list(self.left),
            "bracket": None if self.bracket is None else self.bracket.to_dict(),
            "threads": list(self.threads),
            "intents": list(self.intents),
            "closes_at": _time_text(self.closes_at),
            "round_ends_at": _time_text(self.round_ends_at),
            "signup_message": self.signup_message_id,
            "board_message": self.board_message_id,
            "reason": self.reason,
            "told_forbidden": self.told_forbidden,
        }

    @classmethod
    def of(cls, row: TournamentRow) -> Tournament:
        """Return the tournament a stored row holds."""
        state = row.state
        bracket = state.get("bracket")
        kind = str(state["format"])
        return cls(
            row=row,
            name=str(state["name"]),
            organiser_id=int(state["organiser"]),
            format=next(each for each in FORMATS if each == kind),
            variant=str(state["variant"]),
            best_of=int(state["best_of"]),
            size=int(state["size"]),
            match_minutes=int(state["match_minutes"]),
            role_id=None if state.get("role") is None else int(state["role"]),
            lang=str(state.get("lang", "nb")),
            seed=int(state["seed"]),
            players=tuple(Entrant(int(user), str(name)) for user, name in state["players"]),
            left=tuple(int(user) for user in state.get("left", ())),
            bracket=None if bracket is None else Bracket.from_dict(bracket),
            threads=tuple(None if t is None else int(t) for t in state.get("threads", ())),
            intents=tuple(None if n is None else str(n) for n in state.get("intents", ())),
            closes_at=_time_of(state.get("closes_at")),
            round_ends_at=_time_of(state.get("round_ends_at")),
            signup_message_id=state.get("signup_message"),
            board_message_id=state.get("board_message"),
            reason=state.get("reason"),
            told_forbidden=bool(state.get("told_forbidden", False)),
        )


def _time_text(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _time_of(text: object) -> datetime | None:
    return None if text is None else datetime.fromisoformat(str(text))


def match_of(extra: dict[str, Any]) -> tuple[int, int, int] | None:
    """Return the tournament, round and match a game's extra says it is played for."""
    entry = extra.get(KEY)
    if not isinstance(entry, dict):
        return None
    try:
        return int(entry["id"]), int(entry["round"]), int(entry["match"])
    except (KeyError, TypeError, ValueError):
        return None


Decided = tuple[bool, int | None]
"""Whether a match is over, and its winner (None: a draw)."""


def judge(row: GameRow, outcome: Outcome, left: tuple[int, ...] = ()) -> Decided:
    """Return what a finished game decides of its tournament match.

    A single game's winner wins the match. A best-of match is decided when a player has won
    the majority, or after its last game (the round's deadline, a player who left): then the
    one with more games wins, and on equal games the last game's winner.
    """
    gone = [player for player in row.players if player in left]
    if gone:
        stayed = [player for player in row.players if player not in left]
        return True, stayed[0] if len(stayed) == 1 else None
    last = outcome.winners[0] if len(outcome.winners) == 1 else None
    match = MatchInfo.of(row.extra)
    if match is None:
        return True, None if last is None else row.players[last]
    score = match.after(outcome.winners)
    if match.goes_on(outcome) and not row.extra.get(LAST_GAME):
        return False, None
    best = max(score)
    leaders = [seat for seat, won in enumerate(score) if won == best]
    if len(leaders) == 1:
        return True, row.players[leaders[0]]
    return True, None if last is None else row.players[last]


class Tournaments:
    """Run every tournament: sign-up, rounds, results, deadlines, the champion."""

    def __init__(self, registry: Registry, deadlines: Deadlines, play: Play) -> None:
        self.registry = registry
        self.storage = registry.storage
        self.deadlines = deadlines
        self.play = play
        self._locks: dict[int, asyncio.Lock] = {}
        self.on_change: list[Callable[[Tournament, Change], Awaitable[None]]] = []
        """Called after each change is written: the edge shows it (in a task of its own if long)."""
        self.on_ended: list[Callable[[FlipResult], Awaitable[None]]] = []
        """Called with each game the tournament ended itself (counted out at the round's
        deadline, or given up by a player who left), for the edge to show its end."""
        registry.on_finish.append(self._finished)

    def lock(self, tournament_id: int) -> asyncio.Lock:
        """Return the lock that serialises changes to a tournament."""
        lock = self._locks.get(tournament_id)
        if lock is None:
            lock = self._locks[tournament_id] = asyncio.Lock()
        return lock

    async def get(self, tournament_id: int) -> Tournament | None:
        """Return a tournament by id."""
        row = await self.storage.tournaments.get(tournament_id)
        return None if row is None else Tournament.of(row)

    async def in_channel(self, channel_id: int) -> Tournament | None:
        """Return the channel's open tournament, if any."""
        row = await self.storage.tournaments.open_in(channel_id)
        return None if row is None else Tournament.of(row)

    async def in_server(self, guild_id: int) -> list[Tournament]:
        """Return a server's open tournaments, oldest first, and those cancelled in the last
        ``GONE_SHOWN`` because their channel was deleted (the latest few)."""
        since = self.registry.clock() - GONE_SHOWN
        rows = await self.storage.tournaments.open_in_guild(guild_id)
        cancelled = await self.storage.tournaments.cancelled_in_guild(guild_id, since)
        gone = [each for each in map(Tournament.of, cancelled) if each.channel_gone]
        return [*map(Tournament.of, rows), *gone[-MOST_OPEN_PER_SERVER:]]

    async def may_create(self, guild_id: int, actor: Actor) -> None:
        """Refuse to create a tournament unless a moderator asks, or the server lets everyone."""
        if actor.moderator:
            return
        if await self.storage.settings.get_setting(guild_id, CREATORS_SETTING) != "everyone":
            raise Refusal("tournament.err.moderator")

    async def create(
        self,
        *,
        guild_id: int,
        channel_id: int,
        organiser: Player,
        name: str,
        format: Format = "knockout",
        variant: str = "standard",
        best_of: int = 1,
        size: int | None = None,
        signup_minutes: int = SIGNUP_MINUTES,
        match_minutes: int = MATCH_MINUTES,
        role_id: int | None = None,
        lang: str = "nb",
    ) -> Tournament:
        """Open a tournament's sign-up in a channel; refuse what cannot be run."""
        if best_of not in BEST_OF:
            raise Refusal("tournament.err.best_of")
        size = most_players(format) if size is None else size
        if not 2 <= size <= most_players(format):
            raise Refusal("tournament.err.size", most=most_players(format))
        if signup_minutes < 0 or match_minutes < 1:
            raise Refusal("tournament.err.minutes")
        try:
            if Rules.preset(variant).teams:
                raise Refusal("tournament.err.teams", variant=variant)
            rules = Rules.preset(variant, players=2)
        except RulesError:
            raise Refusal("tournament.err.variant", given=variant) from None
        if len(await self.storage.tournaments.open_in_guild(guild_id)) >= MOST_OPEN_PER_SERVER:
            raise Refusal("tournament.err.cap", most=MOST_OPEN_PER_SERVER)
        now = self.registry.clock()
        draft = Tournament(
            row=TournamentRow(0, guild_id, channel_id, "signup", {}, 0, None, now, now, None),
            name=name.strip()[:80] or "Krig",
            organiser_id=organiser.user_id,
            format=format,
            variant=rules.preset_name,
            best_of=best_of,
            size=size,
            match_minutes=match_minutes,
            role_id=role_id,
            lang=lang,
            seed=self.registry.seeds(),
            closes_at=now + timedelta(minutes=signup_minutes) if signup_minutes else None,
        )
        try:
            row = await self.storage.tournaments.create(
                guild_id=guild_id, channel_id=channel_id, state=draft.state(), now=now
            )
        except TournamentBusyError:
            raise Refusal("tournament.err.busy") from None
        tournament = Tournament.of(row)
        self._watch(tournament)
        return tournament

    async def join(self, tournament_id: int, player: Player) -> Tournament:
        """Sign a player up."""

        def change(t: Tournament) -> Tournament:
            if t.status != "signup":
                raise Refusal("tournament.err.closed")
            if player.bot:
                raise Refusal("tournament.err.bot")
            if any(entrant.user_id == player.user_id for entrant in t.players):
                raise Refusal("tournament.err.joined")
            if len(t.players) >= t.size:
                raise Refusal("tournament.err.full", size=t.size)
            entrant = Entrant(player.user_id, player.name[:80])
            return dataclasses.replace(t, players=(*t.players, entrant))

        return await self._change(tournament_id, change, "signup")

    async def leave(self, tournament_id: int, user_id: int) -> Tournament:
        """Take a player off the list; after the start, they forfeit what is left to play."""

        def change(t: Tournament) -> Tournament:
            if not t.row.is_open:
                raise Refusal("tournament.err.over")
            if all(entrant.user_id != user_id for entrant in t.players) or user_id in t.left:
                raise Refusal("tournament.err.not_joined")
            if t.status == "signup":
                kept = tuple(entrant for entrant in t.players if entrant.user_id != user_id)
                return dataclasses.replace(t, players=kept)
            return dataclasses.replace(t, left=(*t.left, user_id))

        tournament = await self._change(tournament_id, change, "signup")
        if tournament.status == "running":
            await self._forfeit_current(tournament, user_id)
        return tournament

    async def begin(self, tournament_id: int, actor: Actor | None) -> Tournament:
        """Close the sign-up and pair the first round (``actor`` None: the sign-up's time)."""

        def change(t: Tournament) -> Tournament:
            if t.status != "signup":
                raise Refusal("tournament.err.not_signup")
            if actor is not None and not (actor.moderator or actor.user_id == t.organiser_id):
                raise Refusal("tournament.err.organiser")
            if len(t.players) < 2:
                if actor is not None:
                    raise Refusal("tournament.err.too_few")
                return dataclasses.replace(t, reason="too_few")
            bracket = start(t.format, (entrant.user_id for entrant in t.players), t.seed)
            return self._paired(dataclasses.replace(t, bracket=bracket, closes_at=None))

        return await self._change(tournament_id, change, "started")

    async def cancel(self, tournament_id: int, actor: Actor) -> Tournament:
        """Call a tournament off (organiser or moderator); its games go on as ordinary ones."""

        def change(t: Tournament) -> Tournament:
            if not t.row.is_open:
                raise Refusal("tournament.err.over")
            if not (actor.moderator or actor.user_id == t.organiser_id):
                raise Refusal("tournament.err.organiser")
            return dataclasses.replace(t, reason="organiser")

        return await self._change(tournament_id, change, "cancelled")

    async def channel_gone(self, tournament_id: int) -> list[GameRow] | None:
        """Cancel a tournament whose channel was deleted; return the match games this ended.

        Its match games still running end with no result, as a cancel ends a game: their
        threads went with the channel. None: it was over already.
        """

        def change(t: Tournament) -> Tournament:
            if not t.row.is_open:
                raise _Unchanged
            return dataclasses.replace(t, reason=CHANNEL_GONE)

        try:
            tournament = await self._change(tournament_id, change, "cancelled")
        except _Unchanged:
            return None
        ended: list[GameRow] = []
        for number in range(len(tournament.threads)):
            row = await self.match_game(tournament, number)
            if row is not None and row.status == "running":
                called_off = await self.play.call_off(row.channel_id, row.id)
                ended += [] if called_off is None else [called_off]
        return ended

    async def thread_gone(self, tournament_id: int, number: int, thread_id: int) -> None:
        """Forget a match's thread that was deleted before its game could be shown there.

        Its game ends with no result, as a cancel ends a game, and the match is dealt again in a
        new thread (its round waits for it, as for any thread still to open).
        """
        tournament = await self.get(tournament_id)
        if tournament is None or tournament.status != "running":
            return
        row = await self.match_game(tournament, number)
        if row is not None and row.status == "running" and row.channel_id == thread_id:
            await self.play.call_off(thread_id, row.id)

        def change(t: Tournament) -> Tournament:
            if t.status != "running" or number >= len(t.threads) or t.threads[number] != thread_id:
                raise _Unchanged
            threads = list(t.threads)
            threads[number] = None
            intents = list(t.intents) + [None] * (len(t.threads) - len(t.intents))
            intents[number] = None
            return dataclasses.replace(t, threads=tuple(threads), intents=tuple(intents))

        with contextlib.suppress(_Unchanged):
            await self._change(tournament_id, change, None)

    async def set_messages(
        self, tournament_id: int, *, signup: int | None = None, board: int | None = None
    ) -> Tournament:
        """Remember the message of the sign-up or of the bracket, edited as things change."""

        def change(t: Tournament) -> Tournament:
            return dataclasses.replace(
                t,
                signup_message_id=t.signup_message_id if signup is None else signup,
                board_message_id=t.board_message_id if board is None else board,
            )

        return await self._change(tournament_id, change, None)

    async def intend(self, tournament_id: int, number: int, name: str) -> Tournament:
        """Remember, before it is made, the name of the thread a match's is to be."""

        def change(t: Tournament) -> Tournament:
            intents = list(t.intents) + [None] * (len(t.threads) - len(t.intents))
            intents[number] = name
            return dataclasses.replace(t, intents=tuple(intents))

        return await self._change(tournament_id, change, None)

    async def note_told_forbidden(self, tournament_id: int, told: bool) -> bool:
        """Remember whether the channel was told the bot may not open threads; False if it was
        remembered so already (nothing to tell, or nothing to clear)."""

        def change(t: Tournament) -> Tournament:
            if t.told_forbidden == told or not t.row.is_open:
                raise _Unchanged
            return dataclasses.replace(t, told_forbidden=told)

        try:
            await self._change(tournament_id, change, None)
        except _Unchanged:
            return False
        return True

    async def open_match(
        self, tournament_id: int, number: int, thread_id: int | None = None
    ) -> tuple[GameRow, Variant] | None:
        """Deal match ``number`` of the current round in its thread; return its game.

        The thread is remembered first, so a restart deals in the same one; a thread that has
        the game already returns it. None: the match needs no game (decided, or not running).
        A round whose deadline came (or went) while a thread could not be opened waits for it:
        its time runs again from when the last of its threads is opened.
        """
        tournament = await self.get(tournament_id)
        if tournament is None or tournament.status != "running" or tournament.bracket is None:
            return None
        pairing = tournament.bracket.current[number]
        if pairing.done:
            return None
        if thread_id is not None and tournament.threads[number] != thread_id:

            def remember(t: Tournament) -> Tournament:
                threads = list(t.threads)
                threads[number] = thread_id
                opened = dataclasses.replace(t, threads=tuple(threads))
                now = self.registry.clock()
                due = t.round_ends_at
                if t.status == "running" and (due is None or due <= now) and not opened.unopened():
                    ends = now + timedelta(minutes=t.match_minutes)
                    return dataclasses.replace(opened, round_ends_at=ends)
                return opened

            tournament = await self._change(tournament_id, remember, None)
        thread = tournament.threads[number]
        if thread is None:
            return None
        assert tournament.bracket is not None
        game_round = len(tournament.bracket.rounds)
        wanted = (tournament_id, game_round, number)
        async with self.registry.lock(thread):
            found = await self.registry.game_in(thread)
            if found is not None and found[1] is not None:
                if match_of(found[0].extra) == wanted:
                    return found[0], found[1]
                return None  # another game holds the thread: the deadline decides the match
            # Read again under the thread's lock: a game of this match that finished since the
            # caller read the tournament was recorded by then (the finish hook runs under it).
            fresh = await self.get(tournament_id)
            if (
                fresh is None
                or fresh.status != "running"
                or fresh.bracket is None
                or len(fresh.bracket.rounds) != game_round
                or fresh.bracket.current[number].done
            ):
                return None
            last = await self.storage.games.last_finished(tournament.guild_id, thread)
            if last is not None and match_of(last.extra) == wanted and last.result is not None:
                # Played, but not recorded (the hook failed): record it rather than deal again.
                decided = judge(last, outcome_from_dict(last.result), fresh.left)
                await self._record(tournament_id, game_round, number, decided)
                return None
            rules = Rules.preset(tournament.variant, players=2)
            seed = self.registry.seeds()
            game = new_game(rules, seed=seed)
            players = pairing.players
            deal = MatchDeal(
                guild_id=tournament.guild_id,
                channel_id=thread,
                players=players,
                names=tuple(tournament.name_of(player) for player in players),
                variant=rules.preset_name,
                rules=rules.to_dict(),
                seed=seed,
                state=game.to_dict(),
                extra={
                    "lang": tournament.lang,
                    KEY: {"id": tournament_id, "round": game_round, "match": number},
                },
                best_of=tournament.best_of,
            )
            try:
                row = await self.storage.tournaments.deal(deal, now=self.registry.clock())
            except ChannelBusyError:
                return None
            self.registry.adopt(row, game)
        return row, game

    async def match_game(self, tournament: Tournament, number: int) -> GameRow | None:
        """Return the game being played (or last played) for a match of the current round."""
        thread = tournament.threads[number] if number < len(tournament.threads) else None
        if thread is None or tournament.bracket is None:
            return None
        wanted = (tournament.id, len(tournament.bracket.rounds), number)
        row = await self.storage.games.active_game(thread)
        if row is None:
            row = await self.storage.games.last_finished(tournament.guild_id, thread)
        return row if row is not None and match_of(row.extra) == wanted else None

    async def round_due(self, tournament_id: int) -> Tournament | None:
        """End the round at its deadline: the matches still being played are counted out.

        Their games end by counting the cards (rules §7), which records each match through the
        finish hook; a match that never got a game is a draw. A Steal War battle under way is
        played out first: the deadline looks again shortly.
        """
        tournament = await self.get(tournament_id)
        if tournament is None or tournament.status != "running" or tournament.bracket is None:
            return None
        due = tournament.round_ends_at
        if due is None or due > self.registry.clock():
            self._watch(tournament)
            return tournament
        if tournament.unopened():
            # Discord would not open a thread (the edge keeps trying): the round waits for it,
            # rather than count a match nobody could play as a draw.
            try:
                return await self._change(tournament_id, _wait_for_threads, None)
            except _Unchanged:
                return await self.round_due(tournament_id)  # the last one opened meanwhile
        round_now = len(tournament.bracket.rounds)
        later = False
        for number, pairing in enumerate(tournament.bracket.current):
            if pairing.done:
                continue
            row = await self.match_game(tournament, number)
            if row is None:
                await self._record(tournament_id, round_now, number, (True, None))
            elif row.status == "running":
                later |= not await self._count_out(row)
            elif row.result is not None:
                await self._record(
                    tournament_id,
                    round_now,
                    number,
                    judge(row, outcome_from_dict(row.result), tournament.left),
                )
        if later:
            self.deadlines.set(
                Deadline(
                    "tournament_round",
                    tournament_id,
                    tournament.channel_id,
                    self.registry.clock() + RETRY,
                )
            )
        return await self.get(tournament_id)

    async def signup_due(self, tournament_id: int) -> Tournament | None:
        """Close the sign-up at its time: start with two players or more, else call it off."""
        tournament = await self.get(tournament_id)
        if tournament is None or tournament.status != "signup":
            return None
        if tournament.closes_at is not None and tournament.closes_at > self.registry.clock():
            self._watch(tournament)
            return tournament
        return await self.begin(tournament_id, None)

    async def restore(self, shards: Shards | None = None) -> list[Tournament]:
        """At start-up: watch every open tournament's deadline, count matches ended meanwhile.

        Returns the open tournaments of this process's servers, as they stand after that;
        ``shards``: only those of these, taken over from another process while this one runs
        (``KRIG_SHARDS=auto``).
        """
        restored: list[Tournament] = []
        held = self.registry.shards if shards is None else shards
        for row in await self.storage.tournaments.open_tournaments(held):
            tournament = Tournament.of(row)
            self._watch(tournament)
            if tournament.status == "running" and tournament.bracket is not None:
                round_now = len(tournament.bracket.rounds)
                for number, pairing in enumerate(tournament.bracket.current):
                    game = None if pairing.done else await self.match_game(tournament, number)
                    if game is not None and game.status == "finished" and game.result:
                        outcome = outcome_from_dict(game.result)
                        decided = judge(game, outcome, tournament.left)
                        await self._record(tournament.id, round_now, number, decided)
                tournament = await self.get(tournament.id) or tournament
            restored.append(tournament)
        return restored

    async def _count_out(self, row: GameRow) -> bool:
        """End a running match game by counting, as its last; False if it must wait (a battle)."""
        try:
            await self.registry.change_extra(row.channel_id, row.id, lambda _: {LAST_GAME: True})
        except Refusal:
            return True  # it ended meanwhile; its finish was recorded
        async with self.registry.lock(row.channel_id):
            found = await self.registry.game_in(row.channel_id)
            if found is None or found[0].id != row.id:
                return True
            held, game = found
            if game is None or game.finished:
                return True
            try:
                game.end_by_counting()
            except EngineError:
                self.registry.forget(row.channel_id)
                return False
            try:
                ended = await self.registry.commit(held, game)
            except BaseException:
                self.registry.forget(row.channel_id)
                raise
        await self._tell_ended(FlipResult(ended, game))
        return True

    async def _tell_ended(self, result: FlipResult) -> None:
        for hook in self.on_ended:
            try:
                await hook(result)
            except Exception:
                log.exception("after tournament game %s ended", result.row.id)

    async def _forfeit_current(self, tournament: Tournament, user_id: int) -> None:
        """Give up a leaving player's match of the current round."""
        if tournament.bracket is None:
            return
        for number, pairing in enumerate(tournament.bracket.current):
            if pairing.done or user_id not in pairing.players:
                continue
            row = await self.match_game(tournament, number)
            if row is not None and row.status == "running":
                try:
                    await self.registry.change_extra(
                        row.channel_id, row.id, lambda _: {LAST_GAME: True}
                    )
                    given_up = await self.play.forfeit(row.channel_id, user_id, row.id)
                    await self._tell_ended(given_up)
                    continue  # the finish hook recorded the match
                except Refusal:
                    pass  # it ended meanwhile: recorded as it ended, or below
            decided = (True, next((p for p in pairing.players if p != user_id), None))
            await self._record(tournament.id, len(tournament.bracket.rounds), number, decided)

    async def _finished(self, row: GameRow, game: Variant) -> None:
        # The registry's finish hook, under the thread's lock, after the game was committed.
        where = match_of(row.extra)
        if where is None or game.outcome is None:
            return
        tournament_id, round_number, number = where
        tournament = await self.get(tournament_id)
        if tournament is None:
            return
        decided = judge(row, game.outcome, tournament.left)
        await self._record(tournament_id, round_number, number, decided)

    async def _record(
        self, tournament_id: int, round_number: int, number: int, decided: Decided
    ) -> None:
        """Enter a match's result, and pair the next round (or crown) once the round is over."""
        over, winner = decided
        if not over:
            return

        def change(t: Tournament) -> Tournament:
            bracket = t.bracket
            if (
                t.status != "running"
                or bracket is None
                or len(bracket.rounds) != round_number
                or bracket.current[number].done
            ):
                raise _Unchanged
            bracket = record(bracket, number, winner)
            moved = dataclasses.replace(t, bracket=bracket)
            return self._paired(moved) if bracket.round_over else moved

        try:
            await self._change(tournament_id, change, "result")
        except _Unchanged:
            return

    def _paired(self, t: Tournament) -> Tournament:
        """Pair rounds until one has a match to play (or the tournament is over)."""
        bracket = t.bracket
        assert bracket is not None
        while bracket.round_over and not bracket.finished:
            bracket = next_round(bracket)
            for number, pairing in enumerate(bracket.current):
                gone = [player for player in pairing.players if player in t.left]
                if gone and not pairing.done:
                    stayed = [player for player in pairing.players if player not in t.left]
                    bracket = record(bracket, number, stayed[0] if len(stayed) == 1 else None)
        if bracket.finished:
            return dataclasses.replace(t, bracket=bracket, round_ends_at=None)
        ends = self.registry.clock() + timedelta(minutes=t.match_minutes)
        return dataclasses.replace(
            t,
            bracket=bracket,
            threads=(None,) * len(bracket.current),
            intents=(None,) * len(bracket.current),
            round_ends_at=ends,
        )

    async def _change(
        self,
        tournament_id: int,
        change: Callable[[Tournament], Tournament],
        told: Change | None,
    ) -> Tournament:
        """Apply ``change`` to the stored tournament and write it; tell :attr:`on_change`.

        Another process's write in between (a hand-off) is read and the change made again. A
        process that lost the server's shard writes nothing: LostWrite, as a game's writes.
        """
        async with self.lock(tournament_id):
            for attempt in range(2):
                row = await self.storage.tournaments.get(tournament_id)
                if row is None:
                    raise Refusal("tournament.err.none")
                before = Tournament.of(row)
                after = change(before)
                status, happened = self._status(before, after, told)
                # The players it starts with are recorded with the write that starts it.
                entrants = (
                    after.bracket.players
                    if before.bracket is None and after.bracket is not None
                    else ()
                )
                try:
                    saved = await self.storage.tournaments.save(
                        row,
                        status=status,
                        state=after.state(),
                        now=self.registry.clock(),
                        champion_id=after.champion,
                        entrants=entrants,
                        fence=self.registry.server_fence(before.guild_id),
                    )
                except TournamentLeaseLostError:
                    # This process no longer holds the server's shard: the one that does runs
                    # the tournament now, and nothing was written.
                    raise LostWrite from None
                except TournamentConflictError:
                    if attempt:
                        raise Refusal("err.storage") from None
                    continue
                except StorageError:
                    raise Refusal("err.storage") from None
                tournament = dataclasses.replace(after, row=saved)
                break
        self._watch(tournament)
        if happened is not None:
            for hook in self.on_change:
                try:
                    await hook(tournament, happened)
                except Exception:
                    log.exception("after tournament %s changed (%s)", tournament_id, happened)
        return tournament

    @staticmethod
    def _status(
        before: Tournament, after: Tournament, told: Change | None
    ) -> tuple[TournamentStatus, Change | None]:
        """Return the status to store and what to tell of the change."""
        if after.reason is not None and before.reason is None:
            return "cancelled", "cancelled"
        bracket = after.bracket
        if bracket is not None and bracket.finished:
            return "finished", "finished"
        if before.bracket is None and bracket is not None:
            return "running", "started"
        if (
            before.bracket is not None
            and bracket is not None
            and len(bracket.rounds) > len(before.bracket.rounds)
        ):
            return "running", "round"
        if (
            told is None
            and before.status == "running"
            and before.round_ends_at != after.round_ends_at
        ):
            return "running", "clock"
        return before.status, told

    def _watch(self, tournament: Tournament) -> None:
        """Set (or drop) the tournament's deadline: the sign-up's close or the round's end."""
        self.deadlines.cancel(tournament.id, "tournament_signup")
        self.deadlines.cancel(tournament.id, "tournament_round")
        if not self.registry.owns(tournament.guild_id):
            return
        if tournament.status == "signup" and tournament.closes_at is not None:
            self.deadlines.set(
                Deadline(
                    "tournament_signup",
                    tournament.id,
                    tournament.channel_id,
                    tournament.closes_at,
                    server_id=tournament.guild_id,
                )
            )
        elif tournament.status == "running" and tournament.round_ends_at is not None:
            self.deadlines.set(
                Deadline(
                    "tournament_round",
                    tournament.id,
                    tournament.channel_id,
                    tournament.round_ends_at,
                    server_id=tournament.guild_id,
                )
            )


def _wait_for_threads(t: Tournament) -> Tournament:
    """Hold the round's deadline until its matches' threads are open (see ``open_match``)."""
    if t.status != "running" or not t.unopened():
        raise _Unchanged
    return dataclasses.replace(t, round_ends_at=None)


class _Unchanged(Exception):
    """The result was in already (or the round moved on): nothing to write."""


def checked_format(name: str) -> Format:
    """Return a format by name, refusing an unknown one."""
    for each in FORMATS:
        if each == name:
            return each
    raise Refusal("tournament.err.format")


__all__ = [
    "BEST_OF",
    "CHANNEL_GONE",
    "MOST_OPEN_PER_SERVER",
    "Change",
    "Entrant",
    "Tournament",
    "TournamentError",
    "Tournaments",
    "checked_format",
    "judge",
    "match_of",
]
