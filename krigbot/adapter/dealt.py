"""The answer to a challenge Krigbot accepted itself and dealt at once.

Both ``/krig start`` against Krigbot and a Rematch press in a game with it answer so: the line
saying that Krigbot accepted, and the dealt game's table as a new message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from krigbot.adapter.replies import Reply
from krigbot.adapter.weblinks import table_view
from krigbot.i18n import Lang, t
from krigbot.render.embeds import safe_name
from krigbot.render.play import add_time_left, dealt_embed

if TYPE_CHECKING:
    from krigbot.engine import Variant
    from krigbot.sessions import ChallengeResult
    from krigbot.sessions.registry import Registry
    from krigbot.sessions.timelimit import TimeLimits
    from krigbot.storage import GameRow
    from krigbot.web.access import WebAccess


def krigbot_line(result: ChallengeResult, lang: Lang) -> str | None:
    """Return the line saying that Krigbot itself accepted the challenge, if it plays."""
    if result.krigbot is None:
        return None
    return t(lang, "krigbot.accepts", name=safe_name(result.row.names[result.krigbot]))


async def started_reply(
    registry: Registry,
    time_limits: TimeLimits,
    web: WebAccess,
    row: GameRow,
    game: Variant,
    lang: Lang,
) -> Reply:
    """Return the table of a game Krigbot accepted and dealt at once, as a new message."""
    embed = add_time_left(dealt_embed(row, game, lang), time_limits.time_left(row), lang)

    async def sent(message_id: int) -> None:
        await registry.show_table(row.channel_id, row.id, row.round, message_id)

    return Reply(embed=embed, view=await table_view(web, row, lang), sent=sent)
