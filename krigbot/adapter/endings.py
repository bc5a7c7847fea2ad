"""How a finished game is shown, and a move that came just after its end is refused.

Every message that shows a finished game goes through :func:`ending`: it adds the match score
and the fairness check (seed, rules, the command that plays the same game) and returns the
buttons: **Flip** for the match's next game, already dealt, or **Rematch**, which challenges
the same players to the same rules (and the same length of match) again. Several cogs show
ends (a flip, a time limit, a forfeit, autoplay, a Steal War battle, a restart), so this lives
in the adapter, and no cog imports another.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord

from krigbot.adapter.buttons import FlipButton, RematchButton, view_of
from krigbot.adapter.replies import Reply
from krigbot.adapter.surfaces import scope_of
from krigbot.adapter.weblinks import watch_live, web_button
from krigbot.engine import EngineError, load_game
from krigbot.fairness import fairness_command
from krigbot.i18n import Lang, lang_for
from krigbot.render.notices import late_end_embed
from krigbot.render.play import add_game_over
from krigbot.sessions import ENDING, Refusal
from krigbot.sessions.matches import MatchInfo

if TYPE_CHECKING:
    from krigbot.engine import Variant
    from krigbot.sessions.recovery import Recovery
    from krigbot.sessions.registry import Registry
    from krigbot.sessions.timelimit import TimeLimits
    from krigbot.storage import GameRow
    from krigbot.web.access import WebAccess


@dataclass(frozen=True, slots=True)
class Ending:
    """The buttons of a finished game's message, and what to do once it is on Discord."""

    view: discord.ui.View
    sent: Callable[[int], Awaitable[None]]
    """Records that the end is shown, and the message as the match's next table if any."""
    next_game: GameRow | None = None
    """The match's next game, dealt already, whose Flip button the message carries."""


async def ending(
    registry: Registry,
    row: GameRow,
    game: Variant,
    lang: Lang,
    embed: discord.Embed,
    web: WebAccess | None = None,
) -> Ending:
    """Add the match and the fairness check to a finished game's embed; return its buttons."""
    assert game.outcome is not None
    add_game_over(embed, row, game, lang, command=fairness_command(game, row.seed))
    url = None if web is None else await web.game_url(row.guild_id, row.id)
    links = () if url is None else (web_button(url, lang),)

    async def shown(_: int) -> None:
        await registry.ending_shown(row.id)

    match = MatchInfo.of(row.extra)
    if match is not None and match.goes_on(game.outcome):
        # The service's finish hook dealt the next game under the same lock that finished this
        # one, so it is the channel's game now (unless the channel was busy).
        found = await registry.game_in(row.channel_id)
        following = None if found is None else MatchInfo.of(found[0].extra)
        if found is not None and following is not None and following.id == match.id:
            dealt = found[0]

            async def shown_with_next(message_id: int) -> None:
                await shown(message_id)
                await registry.show_table(dealt.channel_id, dealt.id, 0, message_id)

            live = () if web is None else await watch_live(web, dealt, lang)
            view = view_of(FlipButton(dealt.id, 0, lang), *links, *live)
            return Ending(view, shown_with_next, dealt)
        # Not dealt (the channel was busy, or the write failed): start-up deals it later.
        return Ending(view_of(*links), shown)
    return Ending(view_of(RematchButton(row.id, lang), *links), shown)


async def unseen_end(
    registry: Registry,
    recovery: Recovery,
    game_id: int,
    lang: Lang,
    refusal: Refusal,
    web: WebAccess | None = None,
) -> Reply:
    """Show through a press the end of a game that no message showed, else refuse as ``refusal``.

    Where only interactions reach a chat, an end that came while none of them was left (the
    bot restarted, or their tokens had run out) waits for the next press on one of the game's
    messages; the title says why it comes late.
    """
    row = await registry.storage.games.get_game(game_id)
    if row is None or row.status != "finished" or row.extra.get(ENDING) is None:
        raise refusal
    try:
        game = load_game(row.state or {})
    except EngineError:
        raise refusal from None
    if game.outcome is None:
        raise refusal
    # In the game's own language, which a restart may have made the chat forget.
    lang = lang_for(row.extra.get("lang")) if "lang" in row.extra else lang
    restarted = recovery.ended_before_restart(row)
    embed = late_end_embed(row, game, lang, restarted=restarted)
    over = await ending(registry, row, game, lang, embed, web)
    return Reply(embed=embed, view=over.view, update=True, sent=over.sent, durable=True)


async def too_late(
    time_limits: TimeLimits,
    interaction: discord.Interaction[Any],
    refusal: Refusal,
    game_id: int | None = None,
    *,
    key: str = "time.flip_too_late",
) -> None:
    """Refuse a move that came just after the game's time limit ended it: the time is up."""
    assert interaction.channel_id is not None
    row = await time_limits.time_ran_out(
        scope_of(interaction), interaction.channel_id, interaction.user.id, game_id
    )
    if row is not None:
        raise Refusal(key, game=row) from refusal
