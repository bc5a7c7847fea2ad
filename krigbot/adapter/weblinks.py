"""Link buttons to the web view, on the messages whose pages a server has turned on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from krigbot.adapter.buttons import FlipButton, view_of
from krigbot.i18n import Lang, t

if TYPE_CHECKING:
    from krigbot.storage import GameRow
    from krigbot.web.access import WebAccess


def web_button(url: str, lang: Lang, key: str = "web.watch") -> discord.ui.Button[Any]:
    """Return a button that opens a page of the web view in the browser."""
    return discord.ui.Button(
        style=discord.ButtonStyle.link, url=url, label=t(lang, key), emoji="🌐"
    )


async def watch_live(
    web: WebAccess, row: GameRow, lang: Lang
) -> tuple[discord.ui.Button[Any], ...]:
    """Return a running game's Watch live button where the server has pages, else nothing.

    Every message that shows a running game's table carries it after its own buttons; a
    finished game's carries the replay's link instead (``web.watch``)."""
    url = await web.game_url(row.guild_id, row.id)
    return () if url is None else (web_button(url, lang, "web.watch_live"),)


async def table_view(web: WebAccess, row: GameRow, lang: Lang) -> discord.ui.View:
    """Return a running game's table buttons: Flip, and Watch live where the server has pages."""
    return view_of(FlipButton(row.id, row.round, lang), *await watch_live(web, row, lang))
