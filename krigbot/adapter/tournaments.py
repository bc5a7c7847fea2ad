"""What a tournament's messages carry on Discord: the sign-up's buttons and the shown values."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import discord

from krigbot.adapter.buttons import NUMBER, GameButton, view_of
from krigbot.i18n import Lang, t
from krigbot.render.tournament import Shown
from krigbot.sessions.tournaments import Tournament

log = logging.getLogger(__name__)


class JoinButton(GameButton, kind="tjoin", tournament=NUMBER):
    """Sign up for a tournament."""

    def __init__(self, tournament_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            tournament_id, label=t(lang, "tournament.join"), style=discord.ButtonStyle.success
        )


class LeaveButton(GameButton, kind="tleave", tournament=NUMBER):
    """Take one's name off a tournament's list."""

    def __init__(self, tournament_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            tournament_id, label=t(lang, "tournament.leave"), style=discord.ButtonStyle.secondary
        )


def shown_of(tournament: Tournament) -> Shown:
    """Return what the messages show of a tournament."""
    return Shown(
        name=tournament.name,
        format=tournament.format,
        variant=tournament.variant,
        best_of=tournament.best_of,
        size=tournament.size,
        seed=tournament.seed,
        status=tournament.status,
        players=[(entrant.user_id, entrant.name) for entrant in tournament.players],
        closes_at=tournament.closes_at,
        round_ends_at=tournament.round_ends_at,
        bracket=tournament.bracket,
        champion=tournament.champion,
        reason=tournament.reason,
    )


def signup_view(tournament: Tournament, lang: Lang) -> discord.ui.View | None:
    """Return the sign-up's buttons while it is open."""
    if tournament.status != "signup":
        return None
    return view_of(JoinButton(tournament.id, lang), LeaveButton(tournament.id, lang))


async def open_thread(
    parent: discord.TextChannel,
    name: str,
    players: Sequence[int],
    paced: Callable[[], Awaitable[None]],
) -> int:
    """Open a match's public thread under the tournament's channel, add its players; its id.

    Each request waits for ``paced`` first. A player who cannot be added is still let in: the
    table's first message mentions them, which adds them to the thread, and the match is not
    held up (nor its thread opened twice) for it.
    """
    await paced()
    thread = await parent.create_thread(name=name, type=discord.ChannelType.public_thread)
    for player in players:
        await paced()
        try:
            await thread.add_user(discord.Object(player))
        except discord.HTTPException as exc:
            log.warning("thread %s: could not add %s: %s", thread.id, player, exc)
    return thread.id
