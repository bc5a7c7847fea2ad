"""The answer to a Flip press that another press beat (``flip.raced``).

Two players may press the same Flip button at once: one plays the round, the other's flip is
refused. The loser's press is answered by what the channel shows: nothing more when the winner's
answer shows the round, the current table when nothing of this process shows it (it was played
just before a restart), else a note that the button is stale.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from krigbot.adapter.replies import Reply
from krigbot.sessions import Refusal

if TYPE_CHECKING:
    from krigbot.sessions.play import Play


async def lost_flip(
    play: Play,
    refusal: Refusal,
    game_id: int,
    pressed: int | None,
    *,
    round_shown: int | None = None,
    answering: int | None = None,
    current: Callable[[], Awaitable[Reply]] | None = None,
) -> Reply:
    """Answer a Flip press refused as ``refusal``: raise it again unless another press won.

    ``pressed`` is the pressed message; ``round_shown`` and ``answering`` are as
    ``Play.lost_race`` (``sessions/play.py``) takes them; ``current`` shows the table as it
    stands now.
    """
    if refusal.key != "flip.raced":
        raise refusal
    answer = await play.lost_race(game_id, pressed, round_shown=round_shown, answering=answering)
    if answer == "shown":
        return Reply(silent=True)
    if answer == "current" and current is not None:
        return await current()
    raise Refusal("err.stale_button") from None
