"""Slash command names, descriptions and choices translated from the catalogs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord import app_commands

from krigbot.i18n import catalog, supported_lang

if TYPE_CHECKING:
    import discord

Location = app_commands.TranslationContextLocation
_PART = {
    Location.command_name: "name",
    Location.group_name: "name",
    Location.parameter_name: "name",
    Location.command_description: "desc",
    Location.group_description: "desc",
    Location.parameter_description: "desc",
}
"""Which text of a command or option a context asks for, as its catalog key ends."""


def key_of(string: app_commands.locale_str, context: app_commands.TranslationContextTypes) -> str:
    """Return a text's catalog key: its own, else that of the command or option it names.

    The English text is the code's (a command's docstring, an option's description); the
    catalogs hold the other languages under ``cmd.<command>.<part>`` and ``opt.<option>.<part>``.
    """
    given = string.extras.get("key")
    if isinstance(given, str):
        return given
    part = _PART.get(context.location)
    data = context.data
    if part is not None and isinstance(data, app_commands.Parameter):
        return f"opt.{data.display_name}.{part}"
    if part is not None and isinstance(data, app_commands.Command | app_commands.Group):
        # A command of a group inside /krig (/krig tournament create) is keyed by both names.
        parent = data.parent
        if parent is not None and parent.parent is not None:
            return f"cmd.{parent.name}.{data.name}.{part}"
        return f"cmd.{data.name}.{part}"
    return string.message


class Translator(app_commands.Translator):
    """Translate command names, descriptions and choices through the catalogs."""

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
        text = catalog(lang).get(key_of(string, context))
        # Discord already has the canonical message; repeating it as a localisation is noise.
        if text is None or text == string.message:
            return None
        return text
