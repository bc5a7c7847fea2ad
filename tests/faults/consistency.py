"""Reading the database from outside the bot: every game whole, every card accounted for."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from krigbot.engine import Rules, load_game


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


def check_database(path: Path) -> dict[int, StoredGame]:
    """Check that every stored game is whole, and return them by id.

    A challenge has no dealt state; a running game's state loads, is at the round its row says
    and holds every card of its deck; a finished game has one result per player and a game in
    any other state has none. Opened read-only (``mode=ro``): the bot may be running.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            "SELECT g.*, (SELECT COUNT(*) FROM results r WHERE r.game_id = g.id) AS n_results "
            "FROM games g ORDER BY g.id"
        ).fetchall()
    finally:
        conn.close()
    games: dict[int, StoredGame] = {}
    for row in rows:
        players = tuple(json.loads(row["players"]))
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
            state = json.loads(row["state"])
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
