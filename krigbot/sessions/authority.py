"""Who may act on a game now: its players while it runs, moderators where Discord says so.

The one place that answers it. The edge passes in what only it knows (whether the user may
manage messages in the channel, whether the channel is in a server at all) as an :class:`Actor`.
Outside servers (a group DM, a DM) nobody is a moderator: a user install gives no one power
over others, and a game there belongs to its players alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from krigbot.engine import Variant
from krigbot.sessions.results import Refusal
from krigbot.storage import GameRow


@dataclass(frozen=True, slots=True)
class Actor:
    """Someone who wants to act on a game, and what Discord lets them do in its channel."""

    user_id: int
    moderator: bool = False
    """They may manage messages in the channel (Discord's permission, checked by the edge)."""
    in_server: bool = True
    """The channel is a server's; False in a group DM or DM, where no one moderates."""

    def __post_init__(self) -> None:
        if self.moderator and not self.in_server:
            raise ValueError("no one moderates outside a server")


@dataclass(frozen=True, slots=True)
class Seated:
    """A running game a player may act on, and their seat in it."""

    row: GameRow
    game: Variant
    seat: int

    def still_in(self) -> Seated:
        """Refuse a player who is out of the game (three or four players); return self."""
        if not self.game.in_game[self.seat]:
            raise Refusal("err.out_of_game")
        return self


def seat_of(row: GameRow, user_id: int) -> int:
    """Return a player's seat in a game, refusing anyone who is not playing it."""
    if user_id not in row.players:
        raise Refusal("err.not_player")
    return row.players.index(user_id)


def authorize(
    found: tuple[GameRow, Variant | None] | None, user_id: int, *, game_id: int | None = None
) -> Seated:
    """Return the channel's running game if this player may act on it now, or refuse.

    ``found`` is the channel's game (see ``game_in``); ``game_id`` the game a button was for,
    None for a command, which acts on whatever game the channel has.
    """
    if found is None or (game_id is not None and found[0].id != game_id):
        raise Refusal("err.no_game" if game_id is None else "err.game_over")
    row, game = found
    seat = seat_of(row, user_id)
    if game is None:
        raise Refusal("err.not_running")
    return Seated(row, game, seat)


def may_cancel(row: GameRow, actor: Actor) -> None:
    """Refuse to cancel a game unless a moderator asks, or its challenger before it is dealt.

    Outside a server its players stand in for the moderator: any of them may call it off, and
    anyone else is told so (no moderator could help them there).
    """
    if not actor.in_server:
        if actor.user_id not in row.players:
            raise Refusal("err.cancel_denied_chat")
        return
    early = row.status == "challenge" and actor.user_id == row.challenger_id
    if not (actor.moderator or early):
        raise Refusal("err.cancel_denied")


def may_moderate(actor: Actor) -> None:
    """Refuse a server setting to anyone who may not manage messages, and anywhere but a server."""
    if not actor.moderator:
        raise Refusal("settings.denied")
