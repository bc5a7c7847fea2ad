"""What the table says between rounds: the table as it stands, a player giving up, a late end.

Like the other renderers this turns stored rows and engine values into text through the
catalogs and changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from krigbot.i18n import Lang, t
from krigbot.render.embeds import counts_field, names_of, outcome_text

if TYPE_CHECKING:
    from krigbot.engine import Variant
    from krigbot.storage import GameRow


def current_table_embed(row: GameRow, game: Variant, lang: Lang) -> discord.Embed:
    """Return the table as it stands now, for a table message that shows an older round."""
    embed = discord.Embed(
        title=t(lang, "table.title", round=row.round),
        description=t(lang, "table.current"),
        colour=discord.Colour.blurple(),
    )
    embed.add_field(
        name=t(lang, "table.counts_heading"),
        value=counts_field(game, names_of(row), lang),
        inline=False,
    )
    embed.set_footer(text=t(lang, "table.round_footer", round=row.round, game=row.id))
    return embed


def late_end_embed(
    row: GameRow, game: Variant, lang: Lang, *, restarted: bool = True
) -> discord.Embed:
    """Return the end of a game that no message showed when it came: it finished just before
    the bot stopped (``restarted``) or while nothing reached its chat, or its time ran out while
    the bot was away or could not reach its chat. The title says which."""
    if game.outcome is not None and game.outcome.reason == "time_limit":
        title = t(lang, "time.up_title")
    elif restarted:
        title = t(lang, "end.after_restart", game=row.id)
    else:
        title = t(lang, "end.unreached", game=row.id)
    embed = discord.Embed(
        title=title,
        description=outcome_text(row, game, lang),
        colour=discord.Colour.dark_grey(),
    )
    embed.add_field(
        name=t(lang, "table.counts_heading"),
        value=counts_field(game, names_of(row), lang),
        inline=False,
    )
    return embed


def forfeit_embed(
    row: GameRow, game: Variant, seat: int, lang: Lang, *, over: bool
) -> discord.Embed:
    """Return that the player in ``seat`` gave up: the result if that ended the game."""
    names = names_of(row)
    embed = discord.Embed(
        title=t(lang, "forfeit.done", name=names[seat]), colour=discord.Colour.dark_grey()
    )
    if over:
        # The title already says who gave up.
        embed.description = outcome_text(row, game, lang, reason=False)
    else:
        embed.add_field(name=t(lang, "table.counts_heading"), value=counts_field(game, names, lang))
    return embed
