"""Game rows: challenges, accepting, starting, rounds, finishing and ending."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from krigbot.storage.base import Coalesced, Store
from krigbot.storage.errors import ChannelBusyError, RoundConflictError, StorageError
from krigbot.storage.models import (
    ACTIVE_STATUSES,
    END_STATUSES,
    GAME_COLUMNS,
    GameRow,
    GameStatus,
    JSONDict,
    PlayerResult,
    check_int64,
    check_statuses,
    decode_dict,
    encode_json,
    encode_time,
    game_from_row,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from krigbot.config import Shards
    from krigbot.storage.base import Connection, Dialect

_SELECT_GAME: Final = f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?"
_IDS_A_QUERY: Final = 500
"""The most games one query of :meth:`GameStore.get_games` names."""

_SELECT_ACTIVE: Final = f"""
SELECT {GAME_COLUMNS} FROM games WHERE channel_id = ? AND status IN ('challenge', 'running')
"""

_SELECT_LAST_FINISHED: Final = f"""
SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND channel_id = ? AND status = 'finished'
ORDER BY finished_at DESC, id DESC LIMIT 1
"""

_SELECT_ALL_ACTIVE: Final = f"""
SELECT {GAME_COLUMNS} FROM games WHERE status IN ('challenge', 'running') ORDER BY id
"""


@cache
def _select_to_resume(d: Dialect) -> str:
    return f"""
SELECT {GAME_COLUMNS} FROM games
WHERE (status = 'challenge'
       OR (status = 'running'
           AND (variant IN ({d.json_values()})
                OR EXISTS (SELECT 1 FROM {d.json_keys("games.extra", "k")}
                           WHERE k.key IN ({d.json_values()})))))
"""


_SELECT_ACTIVE_PAGE: Final = f"""
SELECT {GAME_COLUMNS} FROM games WHERE status IN ('challenge', 'running') AND id > ?
"""


def on_shards(shards: Shards | None) -> tuple[str, tuple[int, ...]]:
    """Return the condition (``AND ...``) and parameters that keep the games of ``shards``.

    A process reads only its own servers' games at start: with 16 shards in 4 processes, each
    reads a quarter of the table instead of all of it. A chat's game (``guild_id`` is the
    channel's, :attr:`GameRow.server_id`) is shard 0's, as Discord sends shard 0 what has no
    server.
    """
    if shards is None or shards.ids is None or shards.count is None:
        return "", ()
    if not shards.ids:
        return " AND 1 = 0", ()  # KRIG_SHARDS=auto, holding none (yet)
    marks = ", ".join("?" * len(shards.ids))
    shard = "CASE WHEN guild_id = channel_id THEN 0 ELSE (guild_id >> 22) % ? END"
    return f" AND {shard} IN ({marks})", (shards.count, *shards.ids)


# A second active game in the channel is refused by the partial unique index; DO NOTHING
# instead of an error, so the transaction goes on (PostgreSQL aborts it on an error).
ONE_PER_CHANNEL: Final = (
    "ON CONFLICT (channel_id) WHERE status IN ('challenge', 'running') DO NOTHING"
)

_INSERT_GAME: Final = f"""
INSERT INTO games (
    guild_id, channel_id, challenger_id, status, variant, rules, seed, players, names,
    accepted, round, created_at, updated_at, last_activity_at, extra
) VALUES (?, ?, ?, 'challenge', ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
{ONE_PER_CHANNEL} RETURNING {GAME_COLUMNS}
"""

_INSERT_RUNNING: Final = f"""
INSERT INTO games (
    guild_id, channel_id, challenger_id, status, variant, rules, seed, players, names,
    accepted, state, round, created_at, updated_at, last_activity_at, extra
) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
{ONE_PER_CHANNEL} RETURNING id
"""


# One statement each, atomic without a transaction around it, and one trip to aiosqlite's
# thread: several trips holding the connection made a rush of new games queue every write.
# The accepted list read before must still be there (else another accept came first).
@cache
def _accept(d: Dialect) -> str:
    return f"""
UPDATE games SET accepted = ?, updated_at = ?, last_activity_at = ?
WHERE id = ? AND status = 'challenge' AND {d.json_same("accepted")}
RETURNING {GAME_COLUMNS}
"""


_ACCEPT_ATTEMPTS: Final = 8
"""Each failed attempt means another player accepted meanwhile; a game has at most 4."""


@cache
def _start(d: Dialect) -> str:
    return f"""
UPDATE games
SET status = 'running', state = ?, round = 0, moves = 0, updated_at = ?, last_activity_at = ?,
    extra = json_patch(extra, ?)
WHERE id = ? AND status = 'challenge' AND {d.fenced()}
RETURNING {GAME_COLUMNS}
"""


# The hot path: one statement, always this exact text so sqlite3's statement cache
# reuses the prepared statement. The WHERE clause is the optimistic lock, and the fence: the
# lease epoch the writer holds its shard by (NULL with static shards) must still hold.
@cache
def _save_round(d: Dialect) -> str:
    return f"""
UPDATE games SET state = ?, round = ?, moves = ?, updated_at = ?, last_activity_at = ?
WHERE id = ? AND round = ? AND (moves IS NULL OR moves = COALESCE(?, moves))
    AND status = 'running' AND {d.fenced()}
"""


# Under load, many games' rounds as one statement: each row as _save_round, same parameters.
@cache
def _save_rounds(d: Dialect) -> Coalesced:
    return Coalesced(
        single=_save_round(d),
        update=f"""
UPDATE games SET state = batch.state, round = batch.round, moves = batch.moves,
    updated_at = batch.updated_at, last_activity_at = batch.last_activity_at
FROM {{batch}} WHERE games.id = batch.id AND games.round = batch.expected
    AND (games.moves IS NULL OR games.moves = COALESCE(batch.expected_moves, games.moves))
    AND games.status = 'running' AND {d.fenced("batch.fence")}
RETURNING games.id
""",
        columns=(
            ("state", "json"),
            ("round", "integer"),
            ("moves", "integer"),
            ("updated_at", "text"),
            ("last_activity_at", "text"),
            ("id", "bigint"),
            ("expected", "integer"),
            ("expected_moves", "integer"),
            ("fence", "bigint"),
        ),
        key=5,
    )


def _autoplay_runs(d: Dialect, extra: str, message: str) -> str:
    """A condition: ``extra`` says the game's autoplay runs in ``message`` (an expression)."""
    return (
        f"{d.json_int(extra, 'autoplay', 'message')} = {message}"
        f" AND {d.json_text(extra, 'autoplay', 'state')} = 'running'"
    )


@cache
def _save_autoplay_rounds(d: Dialect) -> Coalesced:
    """Autoplay's rounds: each as in _save_rounds, and only while it runs in its message.

    During a hand-off the press of Pause or Stop may reach the other process of the shard,
    which records it: the next step of the autoplay that runs here then writes nothing.
    """
    where = _autoplay_runs(d, "games.extra", "batch.autoplay")
    # The batch's text is formatted with the relation it reads: jsonb paths' braces doubled.
    escaped = where.replace("{", "{{").replace("}", "}}")
    plain = _save_rounds(d)
    update, returning = plain.update.rsplit("RETURNING", 1)
    return Coalesced(
        single=f"{plain.single.rstrip()}\n    AND {_autoplay_runs(d, 'extra', '?')}\n",
        update=f"{update.rstrip()}\n    AND {escaped}\nRETURNING{returning}",
        columns=(*plain.columns, ("autoplay", "bigint")),
        key=plain.key,
    )


_STORED_ROUND: Final = "SELECT round, status FROM games WHERE id = ?"

_SET_TABLE: Final = "UPDATE games SET table_message_id = ?, updated_at = ? WHERE id = ?"

_SET_TABLES = Coalesced(
    single=_SET_TABLE,
    update="""
UPDATE games SET table_message_id = batch.message, updated_at = batch.updated_at
FROM {batch} WHERE games.id = batch.id
RETURNING games.id
""",
    columns=(("message", "bigint"), ("updated_at", "text"), ("id", "bigint")),
    key=2,
)


@cache
def _finish(d: Dialect) -> str:
    return f"""
UPDATE games
SET status = 'finished', state = ?, round = ?, moves = ?, result = ?,
    updated_at = ?, last_activity_at = ?, finished_at = ?, extra = json_patch(extra, ?)
WHERE id = ? AND round = ? AND (moves IS NULL OR moves = COALESCE(?, moves))
    AND status = 'running' AND {d.fenced()}
"""


@cache
def _finish_autoplay(d: Dialect) -> str:
    """_finish for autoplay's last step: only while it runs in its message (as above)."""
    return f"{_finish(d).rstrip()}\n    AND {_autoplay_runs(d, 'extra', '?')}\n"


# guild_id is copied from the game so the stats queries need no join.
_INSERT_RESULT: Final = """
INSERT INTO results (
    game_id, guild_id, user_id, seat, team, outcome, rounds, wars_won, biggest_pot,
    finished_at
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

_INSERT_KRIGBOT_RESULT: Final = """
INSERT INTO krigbot_results (game_id, guild_id, user_id, outcome, finished_at)
VALUES (?, ?, ?, ?, ?)
"""


def _now() -> datetime:
    """Return the current aware UTC time."""
    return datetime.now(UTC)


class GameStore(Store):
    """Create games and move them through their life cycle."""

    async def create_game(
        self,
        *,
        guild_id: int,
        channel_id: int,
        challenger_id: int,
        players: Sequence[int],
        names: Sequence[str],
        variant: str,
        rules: JSONDict,
        seed: int,
        now: datetime,
        extra: JSONDict | None = None,
    ) -> GameRow:
        """Store a new challenge, accepted by its challenger; refuse a busy channel."""
        players = tuple(players)
        names = tuple(names)
        if not players:
            raise ValueError("a game needs at least one player")
        if len(set(players)) != len(players):
            raise ValueError("players must be distinct")
        if len(names) != len(players):
            raise ValueError("names must have one entry per player")
        if challenger_id not in players:
            raise ValueError("the challenger must be one of the players")
        check_int64("seed", seed)
        # Encoded before the transaction: a value that is not JSON fails here, before any write.
        rules_json = encode_json(rules)
        extra_json = encode_json({} if extra is None else extra)
        stamp = encode_time(now)
        async with self._database.transaction() as db:
            inserted = await db.fetch(
                _INSERT_GAME,
                (
                    guild_id,
                    channel_id,
                    challenger_id,
                    variant,
                    rules_json,
                    seed,
                    encode_json(players),
                    encode_json(names),
                    encode_json((challenger_id,)),
                    stamp,
                    stamp,
                    stamp,
                    extra_json,
                ),
            )
            if not inserted:
                # The partial unique index refused a second active game. SQLite's IMMEDIATE
                # transaction keeps the holder as it is; PostgreSQL waited for the holder's
                # transaction, and this statement sees what it committed.
                busy = await db.fetch(_SELECT_ACTIVE, (channel_id,))
                if not busy:
                    raise StorageError(f"the game in channel {channel_id} just ended; try again")
                raise ChannelBusyError(channel_id, busy[0]["id"])
        # The row as stored, so it equals what get_game() reads (tuples were written as lists).
        (row,) = inserted
        return game_from_row(row)

    async def get_game(self, game_id: int) -> GameRow | None:
        """Return a game by id, or None."""
        row = await self._database.fetchone(_SELECT_GAME, (game_id,))
        return None if row is None else game_from_row(row)

    async def get_games(self, game_ids: Sequence[int]) -> dict[int, GameRow]:
        """Return the games of these ids that exist, by id: one query for up to 500."""
        found: dict[int, GameRow] = {}
        for start in range(0, len(game_ids), _IDS_A_QUERY):
            ids = game_ids[start : start + _IDS_A_QUERY]
            marks = ", ".join("?" * len(ids))
            sql = f"SELECT {GAME_COLUMNS} FROM games WHERE id IN ({marks})"
            for row in await self._database.fetchall(sql, ids):
                game = game_from_row(row)
                found[game.id] = game
        return found

    async def active_game(self, channel_id: int) -> GameRow | None:
        """Return the channel's game in the challenge or running state, or None."""
        row = await self._database.fetchone(_SELECT_ACTIVE, (channel_id,))
        return None if row is None else game_from_row(row)

    async def last_finished(self, guild_id: int, channel_id: int) -> GameRow | None:
        """Return the channel's game that finished last, or None."""
        row = await self._database.fetchone(_SELECT_LAST_FINISHED, (guild_id, channel_id))
        return None if row is None else game_from_row(row)

    async def accept(self, game_id: int, user_id: int, now: datetime) -> GameRow | None:
        """Record that a player accepted; None if not an open challenge or not a player."""
        stamp = encode_time(now)
        for _ in range(_ACCEPT_ATTEMPTS):
            game = await self.get_game(game_id)
            if game is None or game.status != "challenge" or user_id not in game.players:
                return None
            if user_id in game.accepted:
                return game  # Idempotent: a second click changes nothing.
            accepted = (*game.accepted, user_id)
            row = await self._database.fetchone(
                _accept(self._database.dialect),
                (encode_json(accepted), stamp, stamp, game_id, encode_json(game.accepted)),
            )
            if row is not None:
                return game_from_row(row)
            # Another player accepted (or the challenge ended) in between: look again.
        raise StorageError(f"the challenge of game {game_id} kept changing; try again")

    async def start_game(
        self,
        game_id: int,
        *,
        state: JSONDict,
        now: datetime,
        extra: JSONDict | None = None,
        fence: int | None = None,
    ) -> GameRow | None:
        """Move a challenge to running with the dealt state; None if it is not a challenge.

        ``extra`` is merged into the game's extra in the same write (the time of the deal);
        ``fence`` is as in :meth:`save_round` (None here too where the lease no longer holds).
        """
        stamp = encode_time(now)
        merged = encode_json({} if extra is None else extra)
        row = await self._database.fetchone(
            _start(self._database.dialect),
            (encode_json(state), stamp, stamp, merged, game_id, fence),
        )
        return None if row is None else game_from_row(row)

    async def save_round(
        self,
        game_id: int,
        *,
        expected_round: int,
        state: JSONDict,
        round: int,
        now: datetime,
        moves: int | None = None,
        expected_moves: int | None = None,
        autoplay: int | None = None,
        fence: int | None = None,
    ) -> Literal[True]:
        """Store a played round if the game is running at ``expected_round``; return True.

        ``moves`` is how many moves the game has had, ``expected_moves`` how many it had when
        the writer read it: a Steal War battle's moves leave the round alone, and only the
        moves tell that another process saved one meanwhile (None: not checked). An
        autoplay's step names its message (``autoplay``): the round is stored only while the
        game's autoplay runs there. Raises RoundConflictError, having written nothing, if the
        game is not there (see there).

        ``fence`` is the epoch of the lease its shard is held by (``KRIG_SHARDS=auto``; None with
        static shards): the round is stored only while that lease is the shard's and has not
        run out, so a process that lost its shard (paused, cut off) writes nothing.
        """
        stamp = encode_time(now)
        params = (
            encode_json(state),
            round,
            moves,
            stamp,
            stamp,
            game_id,
            expected_round,
            expected_moves,
            fence,
        )
        if autoplay is None:
            written = await self._database.coalesced(_save_rounds(self._database.dialect), params)
        else:
            kind = _save_autoplay_rounds(self._database.dialect)
            written = await self._database.coalesced(kind, (*params, autoplay))
        if not written:
            raise await self._conflict(game_id, expected_round)
        return True

    async def _conflict(self, game_id: int, expected_round: int) -> RoundConflictError:
        """Describe a write that lost its round check, from what the database holds now."""
        row = await self._database.fetchone(_STORED_ROUND, (game_id,))
        if row is None:
            return RoundConflictError(game_id, expected_round, None, None)
        return RoundConflictError(game_id, expected_round, row["round"], row["status"])

    async def finish_game(
        self,
        game_id: int,
        *,
        expected_round: int,
        state: JSONDict,
        round: int,
        result: JSONDict,
        results: Sequence[PlayerResult],
        now: datetime,
        extra: JSONDict | None = None,
        moves: int | None = None,
        expected_moves: int | None = None,
        autoplay: int | None = None,
        fence: int | None = None,
    ) -> Literal[True]:
        """Finish a running game at ``expected_round``, record each player's result; return True.

        A result ``against_krigbot`` goes to the record against Krigbot, not to ``results``.

        ``extra`` is merged into the game's extra in the same write (a key set to None goes);
        ``moves``, ``expected_moves``, ``autoplay`` and ``fence`` are as in :meth:`save_round`.
        Raises RoundConflictError, having written nothing, if the game is not running there.
        """
        users = [r.user_id for r in results]
        seats = [r.seat for r in results]
        if len(set(users)) != len(users) or len(set(seats)) != len(seats):
            raise ValueError("results must name each user and each seat at most once")
        stamp = encode_time(now)
        async with self._database.transaction() as db:
            params = (
                encode_json(state),
                round,
                moves,
                encode_json(result),
                stamp,
                stamp,
                stamp,
                encode_json(extra or {}),
                game_id,
                expected_round,
                expected_moves,
                fence,
            )
            if autoplay is None:
                changed = await db.run(_finish(self._database.dialect), params)
            else:
                changed = await db.run(
                    _finish_autoplay(self._database.dialect), (*params, autoplay)
                )
            if changed == 1:
                game = await _read_game(db, game_id)
                assert game is not None  # We just updated it inside this transaction.
                strangers = set(users) - set(game.players)
                if strangers:
                    # Raising rolls the whole transaction back, the status change included.
                    raise ValueError(f"results name users who are not players: {sorted(strangers)}")
                await db.run_many(
                    _INSERT_RESULT,
                    [
                        (
                            game_id,
                            game.guild_id,
                            r.user_id,
                            r.seat,
                            r.team,
                            r.outcome,
                            r.rounds,
                            r.wars_won,
                            r.biggest_pot,
                            stamp,
                        )
                        for r in results
                        if not r.against_krigbot
                    ],
                )
                await db.run_many(
                    _INSERT_KRIGBOT_RESULT,
                    [
                        (game_id, game.guild_id, r.user_id, r.outcome, stamp)
                        for r in results
                        if r.against_krigbot
                    ],
                )
        if changed == 0:
            raise await self._conflict(game_id, expected_round)  # nothing was written
        return True

    async def end_game(
        self,
        game_id: int,
        status: GameStatus,
        now: datetime,
        *,
        expected_statuses: Iterable[GameStatus] = ACTIVE_STATUSES,
        expected_round: int | None = None,
        result: JSONDict | None = None,
        fence: int | None = None,
    ) -> bool:
        """End a game without results (cancelled, abandoned, declined, expired).

        ``fence``: the epoch of the lease its shard is held by, as in :meth:`save_round`.
        """
        if status not in END_STATUSES:
            raise ValueError(f"end_game status must be one of {sorted(END_STATUSES)}")
        expected = check_statuses(expected_statuses)
        stamp = encode_time(now)
        marks = ", ".join("?" * len(expected))
        sql = (
            "UPDATE games SET status = ?, result = COALESCE(?, result), "
            "updated_at = ?, last_activity_at = ?, finished_at = ? "
            f"WHERE id = ? AND status IN ({marks})"
        )
        params: list[Any] = [
            status,
            None if result is None else encode_json(result),
            stamp,
            stamp,
            stamp,
            game_id,
            *expected,
        ]
        if expected_round is not None:
            # Lets an inactivity sweep lose gracefully to a round played meanwhile.
            sql += " AND round = ?"
            params.append(expected_round)
        if fence is not None:
            sql += f" AND {self._database.dialect.fenced()}"
            params.append(fence)
        return await self._database.write(sql, params) == 1

    async def set_table_message(
        self, game_id: int, message_id: int | None, *, now: datetime | None = None
    ) -> bool:
        """Remember the message showing the game table; False if the game is unknown."""
        stamp = encode_time(_now() if now is None else now)
        return await self._database.coalesced(_SET_TABLES, (message_id, stamp, game_id))

    async def set_challenge_message(
        self, game_id: int, message_id: int | None, *, now: datetime | None = None
    ) -> bool:
        """Remember the message holding the challenge; False if the game is unknown."""
        stamp = encode_time(_now() if now is None else now)
        return (
            await self._database.write(
                "UPDATE games SET challenge_message_id = ?, updated_at = ? WHERE id = ?",
                (message_id, stamp, game_id),
            )
            == 1
        )

    async def update_extra(
        self,
        game_id: int,
        extra: JSONDict | Callable[[JSONDict], JSONDict],
        *,
        now: datetime | None = None,
        fence: int | None = None,
    ) -> JSONDict | None:
        """Merge keys into the game's extra dict and return it; None if the game is unknown
        (or ``fence``, as in :meth:`save_round`, names a lease that no longer holds).

        ``extra`` may be a function of the extra as stored that returns the keys to merge: it
        is called in the same transaction, so no other process's write comes between what it
        reads and what it writes. What it raises rolls the transaction back.
        """
        stamp = encode_time(_now() if now is None else now)
        dialect = self._database.dialect
        async with self._database.transaction() as db:
            rows = await db.fetch(
                f"SELECT extra FROM games WHERE id = ? AND {dialect.fenced()}{dialect.for_update}",
                (game_id, fence),
            )
            if not rows:
                return None
            merged = decode_dict(rows[0]["extra"])
            merged.update(extra(dict(merged)) if callable(extra) else extra)
            await db.run(
                "UPDATE games SET extra = ?, updated_at = ? WHERE id = ?",
                (encode_json(merged), stamp, game_id),
            )
            return merged

    async def _games(self, sql: str, params: Iterable[Any] = ()) -> list[GameRow]:
        """Return the games a SELECT of ``GAME_COLUMNS`` finds, in its order."""
        return [game_from_row(row) for row in await self._database.fetchall(sql, params)]

    async def running_games(self) -> list[GameRow]:
        """Return every game in the challenge or running state, oldest first."""
        return await self._games(_SELECT_ALL_ACTIVE)

    async def games_to_resume(
        self,
        *,
        variants: Iterable[str] = (),
        extra_keys: Iterable[str] = (),
        shards: Shards | None = None,
    ) -> list[GameRow]:
        """Return open challenges and the running games with timers to start after a restart.

        A running game counts if it is of one of ``variants`` or has one of ``extra_keys`` in
        its extra; the others are not read (their saved states are most of the database). With
        ``shards``, only the games of servers on those shards.
        """
        where, on = on_shards(shards)
        return await self._games(
            f"{_select_to_resume(self._database.dialect)}{where} ORDER BY id",
            (encode_json(list(variants)), encode_json(list(extra_keys)), *on),
        )

    async def active_games_after(
        self, after: int, limit: int, *, shards: Shards | None = None
    ) -> list[GameRow]:
        """Return a page of active games: up to ``limit`` with ids above ``after``, by id.

        With ``shards``, only the games of servers on those shards.
        """
        where, on = on_shards(shards)
        return await self._games(
            f"{_SELECT_ACTIVE_PAGE}{where} ORDER BY id LIMIT ?", (after, *on, limit)
        )

    async def stale_games(
        self,
        older_than: datetime,
        *,
        statuses: Iterable[GameStatus] = ("running",),
    ) -> list[GameRow]:
        """Return games in the given states with no activity since older_than, oldest first."""
        wanted = check_statuses(statuses)
        marks = ", ".join("?" * len(wanted))
        return await self._games(
            f"SELECT {GAME_COLUMNS} FROM games "
            f"WHERE status IN ({marks}) AND last_activity_at < ? "
            "ORDER BY last_activity_at, id",
            (*wanted, encode_time(older_than)),
        )

    async def finished_unshown(
        self, key: str, *, since: datetime, shards: Shards | None = None
    ) -> list[GameRow]:
        """Return the games finished since ``since`` whose extra has ``key`` set, oldest first.

        With ``shards``, only the games of servers on those shards.
        """
        where, on = on_shards(shards)
        return await self._games(
            f"{_finished_unshown(self._database.dialect)}{where} ORDER BY id",
            (encode_time(since), key, *on),
        )

    async def game_count(self, status: GameStatus | None = None) -> int:
        """Count all games, or those in one state."""
        if status is None:
            row = await self._database.fetchone("SELECT COUNT(*) FROM games")
        else:
            row = await self._database.fetchone(
                "SELECT COUNT(*) FROM games WHERE status = ?", (status,)
            )
        assert row is not None  # COUNT(*) always yields a row
        return int(row[0])


@cache
def _finished_unshown(d: Dialect) -> str:
    return (
        f"SELECT {GAME_COLUMNS} FROM games {d.indexed_by('games_status_activity')} "
        "WHERE status = 'finished' AND last_activity_at >= ? "
        f"AND {d.json_key_set('extra')}"
    )


async def _read_game(db: Connection, game_id: int) -> GameRow | None:
    """Read a game on a connection the caller already holds."""
    rows = await db.fetch(_SELECT_GAME, (game_id,))
    return game_from_row(rows[0]) if rows else None


class Seated(Protocol):
    """Where a game dealt at once is played, and by whom."""

    @property
    def guild_id(self) -> int: ...
    @property
    def channel_id(self) -> int: ...
    @property
    def players(self) -> tuple[int, ...]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Deal:
    """What a game dealt at once starts from: a match's next game, a tournament match's game."""

    names: tuple[str, ...]
    variant: str
    rules: JSONDict
    seed: int
    state: JSONDict
    extra: JSONDict


async def insert_running(
    db: Connection, seated: Seated, deal: Deal, challenger_id: int, stamp: str
) -> int | None:
    """Store a game running from its deal (every player is in); None if the channel has one."""
    players = encode_json(seated.players)
    inserted = await db.fetch(
        _INSERT_RUNNING,
        (
            seated.guild_id,
            seated.channel_id,
            challenger_id,
            deal.variant,
            encode_json(deal.rules),
            deal.seed,
            players,
            encode_json(deal.names),
            players,
            encode_json(deal.state),
            stamp,
            stamp,
            stamp,
            encode_json(deal.extra),
        ),
    )
    return int(inserted[0][0]) if inserted else None
