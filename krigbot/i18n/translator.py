"""Slash command names, descriptions and choices translated from the catalogs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord import app_commands

from krigbot.i18n import catalog, supported_lang

if TYPE_CHECKING:
    import discord


class Translator(app_commands.Translator):
    """Translate ``locale_str("start", key="cmd.start.name")`` through the catalogs."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        """Return the catalog text for the string's key, or None to let Discord show the default."""
        lang = supported_lang(locale)
        # Discord shows the canonical English text to a locale given nothing: the English fallback.
        if lang is None:
            return None
        text = catalog(lang).get(string.extras.get("key", string.message))
        # Discord already has the canonical message; repeating it as a localisation is noise.
        if text is None or text == string.message:
            return None
        return text
