"""Link buttons to the web view, on the messages whose pages a server has turned on."""

from __future__ import annotations

from typing import Any

import discord

from krigbot.i18n import Lang, t


def web_button(url: str, lang: Lang, key: str = "web.watch") -> discord.ui.Button[Any]:
    """Return a button that opens a page of the web view in the browser."""
    return discord.ui.Button(
        style=discord.ButtonStyle.link, url=url, label=t(lang, key), emoji="🌐"
    )
