"""The running games of every channel: their locks, the cache, reading and committing them.

The shared core of the session parts: every change to a running game goes through here under
the channel's lock and updates the cache after it is committed, so a flip reads nothing from
the database. It knows no other part; the parts that need it are given it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from krigbot.config import EVERY_SHARD, Shards, shard_of
from krigbot.engine import EngineError, Variant, load_game
from krigbot.engine.game import outcome_to_dict
from krigbot.logs import about, context
from krigbot.monitoring import Metrics
from krigbot.sessions.deadlines import Deadlines
from krigbot.sessions.live import LiveHub
from krigbot.sessions.results import LostWrite, Refusal, player_results
from krigbot.storage import GameRow, RoundConflictError, Storage, StorageError

log = logging.getLogger(__name__)

ENDING = "ending"
"""Key in a finished game's extra while the message that shows its end is not yet out: its
value says why, ``"unshown"`` (not yet, or the bot stopped first) or :data:`UNREACHED`."""

UNREACHED = "unreached"
"""The end went unshown because nothing reached the game's chat (the tokens of its interactions
had run out), not because the bot stopped: a restart since does not change that."""

NO_LEASE = 0
"""The lease epoch a write names for a shard this process does not hold (``KRIG_SHARDS=auto``):
no lease has it (the epochs count from 1), so the database refuses the write."""

T = TypeVar("T")

Seeds = Callable[[], int]
"""Where new deals come from: each call returns the seed of the next one."""


def random_seed() -> int:
    """Return a fresh seed that nobody can guess (every real deal comes from here)."""
    return secrets.randbits(63)


@dataclass(slots=True)
class _Running:
    row: GameRow
    game: Variant
    saved_moves: int = field(init=False)
    """The moves the saved game has had: made with the game as read or as just saved."""

    def __post_init__(self) -> None:
        self.saved_moves = self.game.moves_made


def lean(row: GameRow) -> GameRow:
    """Return the row without its saved state, which the engine game in memory replaces."""
    return dataclasses.replace(row, state=None)


class Registry:
    """Hold the running games in memory, read them when first used, commit their changes."""

    def __init__(
        self,
        storage: Storage,
        *,
        clock: Callable[[], datetime],
        seeds: Seeds = random_seed,
        metrics: Metrics | None = None,
        shards: Shards = EVERY_SHARD,
        deadlines: Deadlines | None = None,
        live: LiveHub | None = None,
    ) -> None:
        self.storage = storage
        self.live = LiveHub() if live is None else live
        """The viewers of the games' live pages, told of every round committed here."""
        self.clock = clock
        self.shards = shards
        """The shards this process runs: it restores and times out only their servers' games.
        With ``KRIG_SHARDS=auto`` the ones it holds a lease of now (:meth:`hold_shards`)."""
        self.epochs: dict[int, int] = {}
        """The epoch of each held shard's lease (``KRIG_SHARDS=auto``): every write names it."""
        self.seeds = seeds
        """The seed of each new deal (a test injects its own, as it does the clock)."""
        self.metrics = metrics
        self.krigbot_id: int | None = None
        """The bot's own user id once it is known: a player the bot plays itself."""
        self.deadlines = Deadlines(lambda: self.clock()) if deadlines is None else deadlines
        """Every game's pending deadlines; by default on this registry's clock (read at each
        look). A game that ends here has its deadlines cancelled, and a deadline of a server
        whose shard this process no longer runs is dropped when it falls due."""
        self.deadlines.owns = self.owns
        self._locks: dict[int, asyncio.Lock] = {}
        self._running: dict[int, _Running] = {}
        """Running games by channel: the stored row and the engine game behind it.

        Cached rows drop the saved state (the engine game is the state) to keep memory small.
        """
        self._unsure: dict[int, tuple[int, int, int, datetime]] = {}
        """By channel, a save that failed with no answer and may have landed all the same: the
        game, the round it followed, the round it wrote and its time (``updated_at``)."""
        self.on_finish: list[Callable[[GameRow, Variant], Awaitable[None]]] = []
        """Called with a game just finished, under its channel's lock (a match deals the next)."""
        self.on_deal: list[Callable[[GameRow], None]] = []
        """Called with a game just dealt (a challenge accepted, a match's next game); the time
        limits watch each deal's deadline here."""

    def owns(self, guild_id: int | None) -> bool:
        """Tell whether this process runs the shard of a server (None: a chat, shard 0's)."""
        return self.shards.owns(guild_id)

    def fence(self, row: GameRow) -> int | None:
        """Return the lease epoch a write of the game names (None: static shards, no lease)."""
        return self.server_fence(row.server_id)

    def server_fence(self, server_id: int | None) -> int | None:
        """Return the lease epoch a write for a server names (None: static shards, no lease)."""
        if not self.shards.auto or self.shards.count is None:
            return None
        return self.epochs.get(shard_of(server_id, self.shards.count), NO_LEASE)

    def hold_shards(self, shards: Shards, epochs: dict[int, int]) -> None:
        """Run ``shards`` from now on, by these leases; forget the games of any others.

        A game of a shard given up is another process's from now on: its copy here would be
        behind the first round that process plays, so it is dropped, not kept.
        """
        self.shards = shards
        self.epochs = dict(epochs)
        for channel_id, entry in list(self._running.items()):
            if not shards.owns(entry.row.server_id):
                self._running.pop(channel_id, None)

    def count_abandoned(self, row: GameRow) -> None:
        """Count a running game that ended without a result."""
        if self.metrics is not None:
            self.metrics.games_abandoned.labels(row.variant).inc()

    def holds(self, channel_id: int) -> bool:
        """Tell whether the channel's running game is in memory (it was read already)."""
        return channel_id in self._running

    def running_count(self) -> int:
        """Return how many running games this process holds."""
        return len(self._running)

    def running(self) -> list[tuple[GameRow, Variant]]:
        """Return the running games in memory, with their rows."""
        return [(entry.row, entry.game) for entry in self._running.values()]

    def lock(self, channel_id: int) -> asyncio.Lock:
        """Return the lock that serialises changes to the game of a channel."""
        lock = self._locks.get(channel_id)
        if lock is None:
            lock = self._locks[channel_id] = asyncio.Lock()
        return lock

    async def game_in(self, channel_id: int) -> tuple[GameRow, Variant | None] | None:
        """Return the channel's active game row and, once dealt, its engine game."""
        running = self._running.get(channel_id)
        if running is not None:
            return running.row, running.game
        row = await self.storage.games.active_game(channel_id)
        if row is None:
            return None
        if row.status != "running":
            return row, None
        game = await self.read(row)
        if game is None:
            raise Refusal("err.unreadable")
        self._running[channel_id] = _Running(lean(row), game)
        return row, game

    async def stored_game(
        self, channel_id: int
    ) -> tuple[tuple[GameRow, Variant | None] | None, bool]:
        """Return the channel's active game as stored, for a read, and whether the database was
        out of reach (then the copy in memory stands in, if this process holds one).

        Not the copy in memory: during a hand-off another process of the bot may have played
        on, and every process must show the same game. A copy found behind is dropped, so the
        next press reads the game again too.
        """
        try:
            row = await self.storage.games.active_game(channel_id)
        except StorageError:
            running = self._running.get(channel_id)
            if running is None:
                raise
            return (running.row, running.game), True
        if row is None or row.status != "running":
            return (None if row is None else (row, None)), False
        self.catch_up(row)
        try:
            game = load_game(row.state or {})
        except Exception:
            return await self.game_in(channel_id), False  # which ends a game it cannot read
        return (lean(row), game), False

    async def read(self, row: GameRow) -> Variant | None:
        """Rebuild a game from its saved state; end it without a result if that cannot be read."""
        try:
            if row.state is None:
                raise EngineError("no saved state")
            return load_game(row.state)
        except Exception:
            # Whatever is wrong with one saved game, it must not block its channel (or, at
            # start-up, the whole bot): end it, so a new game can be started there.
            log.exception(
                "game %s in channel %s cannot be read", row.id, row.channel_id, extra=about(row)
            )
            await self.storage.games.end_game(
                row.id,
                "abandoned",
                self.clock(),
                result={"error": "unreadable"},
                fence=self.fence(row),
            )
            self.count_abandoned(row)
            return None

    def hold(self, row: GameRow, game: Variant) -> None:
        """Hold ``game`` in memory as the channel's running game, as ``row`` stores it."""
        self._running[row.channel_id] = _Running(lean(row), game)

    def forget(self, channel_id: int) -> None:
        """Drop a channel's game from memory (it ran ahead of what was saved, or it ended)."""
        self._running.pop(channel_id, None)

    def check_round(self, row: GameRow, expected_round: int | None) -> None:
        """Refuse a press for another round than the game's (``flip.raced``).

        A press for a round ahead of the copy in memory means another process played it: the
        copy is behind, so :meth:`retrying` reads the game again and checks once more. A press
        for the round before a save of this process that was told to the players as failed,
        but reached the database (the connection dropped after the commit), plays on: its
        button is the newest table they were shown.
        """
        if expected_round is None or expected_round == row.round:
            return
        if expected_round > row.round:
            raise LostWrite
        if self._unsure.get(row.channel_id) == (row.id, expected_round, row.round, row.updated_at):
            return
        raise Refusal("flip.raced")

    def catch_up(self, row: GameRow) -> None:
        """Drop the copy in memory of a game that the stored ``row`` shows has moved on."""
        running = self._running.get(row.channel_id)
        if running is not None and running.row.id == row.id and running.row.round != row.round:
            self.forget(row.channel_id)

    async def retrying(self, channel_id: int, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` and, if another process won its write, run it once more on the game
        read again (the caller holds the channel's lock).

        Another process holding the same shard for a moment (a hand-off) moved the game past
        the copy in memory: the copy is dropped, so the second attempt reads the saved game.
        Nothing of the lost attempt was saved, so no round is played twice. A press that the
        game read again shows to be out of date refuses as :class:`LostWrite` too: another
        process, not this one, moved the game on.
        """
        try:
            return await attempt()
        except LostWrite:
            log.info(
                "game in channel %s was moved by another process; reading it again",
                channel_id,
                extra=context(channel_id=channel_id),
            )
            self.forget(channel_id)
        try:
            return await attempt()
        except Refusal as refusal:
            if refusal.key == "flip.raced" and not isinstance(refusal, LostWrite):
                raise LostWrite from None
            raise

    async def set_table(self, row: GameRow, message_id: int) -> GameRow:
        """Remember the message that shows a game's table now; return the row that says so."""
        if row.table_message_id == message_id:
            return row  # a press on the table: its message shows the new round, as stored
        try:
            await self.storage.games.set_table_message(row.id, message_id)
        except StorageError as exc:
            # The change it shows is committed; failing now would tell the players that nothing
            # changed. Only the link to the newest message is lost (its button still plays).
            log.warning(
                "could not remember the table message of game %s: %s", row.id, exc, extra=about(row)
            )
            return row
        row = dataclasses.replace(row, table_message_id=message_id)
        running = self._running.get(row.channel_id)
        if running is not None and running.row.id == row.id:
            running.row = row
        return row

    async def show_table(
        self, channel_id: int, game_id: int, round_shown: int, message_id: int
    ) -> None:
        """Remember a new message showing the table, unless it already shows an old round.

        Replies to flips racing each other reach Discord in any order; the newest table is the
        one showing the current round, whichever of them arrived last.
        """
        async with self.lock(channel_id):
            running = self._running.get(channel_id)
            if (
                running is not None
                and running.row.id == game_id
                and running.row.round == round_shown
            ):
                await self.set_table(running.row, message_id)

    async def commit(self, row: GameRow, game: Variant, *, autoplay: int | None = None) -> GameRow:
        """Save the game's new state in one transaction; refuse if another writer won.

        An autoplay's step names its message: it is refused as well if the game's autoplay no
        longer runs there (another process of the bot recorded a Pause or Stop meanwhile).
        """
        now = self.clock()
        state = game.to_dict()
        held = self._running.get(row.channel_id)
        # Inside a Steal War battle the round stands still: the moves tell a save from another
        # process apart (None: a copy not held here, checked by its round alone).
        expected_moves = held.saved_moves if held is not None and held.game is game else None
        try:
            try:
                await self._store(row, game, state, now, row.round, expected_moves, autoplay)
            except RoundConflictError as lost:
                if lost.status != "running" or lost.round is None or lost.round >= row.round:
                    raise
                # The database is behind a round this process saved and showed: it lost
                # acknowledged commits (stopped without flushing them, restored, failed over).
                # Rounds never go back, so no other process wrote this: the copy held here is
                # what the players saw, and it is saved again rather than played anew.
                log.warning(
                    "game %s is stored at round %s, behind the round %s saved here before; "
                    "saving the game held here again",
                    row.id,
                    lost.round,
                    row.round,
                    extra=about(row),
                )
                await self._store(row, game, state, now, lost.round, None, autoplay)
        except RoundConflictError:
            if self.metrics is not None:
                self.metrics.write_conflicts.inc()
            raise LostWrite from None
        except StorageError as exc:
            # Expected in bad weather (locked, read-only, full): one line that says which.
            log.error("could not save game %s: %s", row.id, exc, extra=about(row))
            self._unsure[row.channel_id] = (row.id, row.round, game.round, now)
            raise Refusal("err.storage") from None
        self._unsure.pop(row.channel_id, None)
        self.live.committed(row.id, game.round)
        if self.metrics is not None:
            self.metrics.rounds.inc(game.round - row.round)
            if game.outcome is not None:
                self.metrics.games_finished.labels(row.variant, game.outcome.reason).inc()
        # What the database now holds, without reading it back.
        updated = dataclasses.replace(
            row, round=game.round, state=None, updated_at=now, last_activity_at=now
        )
        if game.outcome is not None:
            updated = dataclasses.replace(
                updated,
                status="finished",
                result=outcome_to_dict(game.outcome),
                finished_at=now,
                state=state,
                extra={**row.extra, ENDING: "unshown"},
            )
            self._running.pop(row.channel_id, None)
            # However the game ended, nothing is left for its deadlines to do.
            self.deadlines.cancel(row.id)
            for hook in self.on_finish:
                try:
                    await hook(updated, game)
                except Exception:
                    # The game is committed; what follows it (a match's next deal) is redone at
                    # start-up, so a failure here must not turn the finished game into an error.
                    log.exception("after game %s finished", row.id, extra=about(row))
        else:
            self._running[row.channel_id] = _Running(updated, game)
        return updated

    async def _store(
        self,
        row: GameRow,
        game: Variant,
        state: dict[str, Any],
        now: datetime,
        expected_round: int,
        expected_moves: int | None,
        autoplay: int | None,
    ) -> None:
        """Write the game's state (a round, or its end) if the database holds it as expected."""
        fence = self.fence(row)
        if game.outcome is not None:
            # Marked in the write that ends it, cleared once its message is out: a bot
            # stopped in between shows the end when it starts again (unshown_endings).
            await self.storage.games.finish_game(
                row.id,
                expected_round=expected_round,
                state=state,
                round=game.round,
                result=outcome_to_dict(game.outcome),
                results=player_results(row, game, krigbot_id=self.krigbot_id),
                now=now,
                extra={ENDING: "unshown"},
                moves=game.moves_made,
                expected_moves=expected_moves,
                autoplay=autoplay,
                fence=fence,
            )
        else:
            await self.storage.games.save_round(
                row.id,
                expected_round=expected_round,
                state=state,
                round=game.round,
                now=now,
                moves=game.moves_made,
                expected_moves=expected_moves,
                autoplay=autoplay,
                fence=fence,
            )

    async def change_extra(
        self, channel_id: int, game_id: int, change: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> dict[str, Any]:
        """Change a game's ``extra`` under its channel's lock and return it as stored.

        ``change`` gets a copy of the extra as stored and returns the keys to set (it may raise
        a Refusal). It is called in the write's transaction, so a change another process makes
        meanwhile (during a hand-off) is not written over. The running game's cached row
        follows, so readers of the cache agree.
        """
        async with self.lock(channel_id):
            running = self._running.get(channel_id)
            # The stored row, not the cached one: during a hand-off another process of the bot
            # may have played on, and the write names the lease the row's server is under.
            current = await self.storage.games.get_game(game_id)
            if current is None:
                raise Refusal("err.game_over")
            merged = await self.storage.games.update_extra(
                game_id, change, now=self.clock(), fence=self.fence(current)
            )
            if merged is None:
                raise Refusal("err.game_over")
            if running is not None and running.row.id == game_id:
                if running.row.round != current.round:
                    # Another process played on meanwhile: what follows reads the game again,
                    # so an answer shows the table as saved, not the copy in memory.
                    self.forget(channel_id)
                else:
                    running.row = dataclasses.replace(running.row, extra=merged)
            return merged

    async def ending_unreached(self, game_id: int) -> None:
        """Record that nothing reached a finished game's chat to show its end (:data:`ENDING`)."""
        try:
            # Only if no message has shown it meanwhile (a press may have, in another task).
            await self.storage.games.update_extra(
                game_id,
                lambda stored: {} if stored.get(ENDING) is None else {ENDING: UNREACHED},
                now=self.clock(),
            )
        except StorageError as exc:
            # The next press shows the end all the same; only its title may blame a restart.
            log.warning("could not record why the end of game %s was not shown: %s", game_id, exc)

    async def ending_shown(self, game_id: int) -> None:
        """Record that the message showing a game's end is out (see :data:`ENDING`)."""
        try:
            await self.storage.games.update_extra(game_id, {ENDING: None}, now=self.clock())
        except StorageError as exc:
            # A restart shows the end once more: a repeat, never a loss.
            log.warning(
                "could not record that the end of game %s was shown: %s",
                game_id,
                exc,
                extra=context(game_id=game_id),
            )

    def adopt(self, row: GameRow, game: Variant) -> None:
        """Hold a game dealt outside a challenge (a match's next game) as its channel's game."""
        self._running[row.channel_id] = _Running(lean(row), game)
        self.dealt(row)

    def dealt(self, row: GameRow) -> None:
        """Tell the :attr:`on_deal` watchers of a game just dealt."""
        for hook in self.on_deal:
            try:
                hook(row)
            except Exception:
                # The deal is committed; a watcher's mistake must not undo it for the players.
                log.exception("after game %s was dealt", row.id, extra=about(row))
