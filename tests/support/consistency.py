"""Reading the database from outside the bot: every game whole, every card accounted for."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krigbot.engine import Rules, load_game

if TYPE_CHECKING:
    from tests.support.postgres import Cluster


@dataclass(frozen=True, slots=True)
class StoredGame:
    """What the database holds about one game."""

    id: int
    guild_id: int
    channel_id: int
    status: str
    round: int
    players: tuple[int, ...]
    table_message_id: int | None
    results: int
    """Rows in the results table (the leaderboard) for this game."""


_GAMES = (
    "SELECT g.id, g.guild_id, g.channel_id, g.status, g.round, g.players, g.table_message_id, "
    "g.state, (SELECT COUNT(*) FROM results r WHERE r.game_id = g.id) AS n_results "
    "FROM games g ORDER BY g.id"
)


def check_database(path: Path) -> dict[int, StoredGame]:
    """Check that every game stored in an SQLite file is whole, and return them by id.

    Opened read-only (``mode=ro``): the bot may be running.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        rows = [dict(row) for row in conn.execute(_GAMES).fetchall()]
    finally:
        conn.close()
    return check_rows(rows)


def check_postgres(cluster: Cluster, url: str) -> dict[int, StoredGame]:
    """Check that every game stored in a PostgreSQL database is whole, and return them by id."""
    found = cluster.psql(f"SELECT coalesce(json_agg(row_to_json(g)), '[]') FROM ({_GAMES}) g", url)
    return check_rows(json.loads(found))


def check_rows(rows: list[dict[str, Any]]) -> dict[int, StoredGame]:
    """Check that every stored game is whole, and return them by id.

    A challenge has no dealt state; a running game's state loads, is at the round its row says
    and holds every card of its deck; a finished game has one result per player and a game in
    any other state has none.
    """
    games: dict[int, StoredGame] = {}
    for row in rows:
        players = tuple(_json(row["players"]))
        game = StoredGame(
            id=row["id"],
            guild_id=row["guild_id"],
            channel_id=row["channel_id"],
            status=row["status"],
            round=row["round"],
            players=players,
            table_message_id=row["table_message_id"],
            results=row["n_results"],
        )
        where = f"game {game.id} ({game.status}, round {game.round})"
        if game.status == "challenge":
            assert row["state"] is None, f"{where}: dealt before everyone accepted"
        if game.status in ("running", "finished"):
            state = _json(row["state"])
            assert state["round"] == game.round, f"{where}: its state is at {state['round']}"
            engine = load_game(state)
            assert (engine.outcome is None) == (game.status == "running"), where
            if state["kind"] == "krig":
                cards = sum(map(len, state["piles"])) + sum(map(len, state["won"]))
                deck = Rules.from_dict(state["rules"]).deck_size
                assert cards + state["set_aside"] == deck, f"{where}: {cards} cards of {deck}"
        expected = len(players) if game.status == "finished" else 0
        assert game.results == expected, f"{where}: {game.results} results, not {expected}"
        games[game.id] = game
    return games


def _json(value: Any) -> Any:
    """Return a JSON column's value: SQLite hands over its text, PostgreSQL's row its value."""
    return json.loads(value) if isinstance(value, str) else value


def snapshot(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Return every row of every table, to tell whether anything at all was written."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {table: conn.execute(f'SELECT * FROM "{table}"').fetchall() for table in tables}
    finally:
        conn.close()
