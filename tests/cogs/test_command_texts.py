"""Each command's English text is written once, in the code; the catalogs translate it."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from discord import app_commands
from discord.app_commands import TranslationContext, locale_str
from discord.utils import _shorten

from krigbot.bot import KrigBot
from krigbot.i18n import catalog
from krigbot.i18n.translator import key_of

Where = app_commands.TranslationContextLocation
Described = app_commands.Command[Any, ..., Any] | app_commands.Group


def described(bot: KrigBot) -> Iterator[Described]:
    """Return every command and group the bot registers, subcommands included."""
    for command in bot.tree.get_commands():
        assert isinstance(command, app_commands.Command | app_commands.Group)
        yield command
        if isinstance(command, app_commands.Group):
            yield from command.walk_commands()


def english_source(command: Described) -> str | None:
    """Return the docstring discord.py takes a command's description from."""
    if isinstance(command, app_commands.Group):
        return inspect.getdoc(type(command))
    return inspect.getdoc(command.callback)


def texts(bot: KrigBot) -> Iterator[tuple[str, str]]:
    """Return every description sent to Discord with its catalog key, as the translator finds it."""
    for command in described(bot):
        context: Any = (
            TranslationContext(Where.group_description, command)
            if isinstance(command, app_commands.Group)
            else TranslationContext(Where.command_description, command)
        )
        yield key_of(locale_str(command.description), context), command.description
        if isinstance(command, app_commands.Command):
            for parameter in command.parameters:
                assert parameter.locale_description is not None
                context = TranslationContext(Where.parameter_description, parameter)
                yield key_of(parameter.locale_description, context), parameter.description


def test_a_commands_description_is_its_docstring(bot: KrigBot) -> None:
    differing = {
        command.qualified_name: (command.description, english_source(command))
        for command in described(bot)
        if english_source(command) is None
        or command.description != _shorten(english_source(command) or "")
    }
    assert differing == {}


def test_the_english_catalog_repeats_no_description_of_the_code(bot: KrigBot) -> None:
    english = catalog("en")
    assert {key: text for key, text in texts(bot) if key in english} == {}


def test_every_description_is_translated_into_norwegian_swedish_and_danish(bot: KrigBot) -> None:
    found = list(texts(bot))
    assert len(found) > 30
    for lang in ("nb", "sv", "da"):
        missing = [key for key, _ in found if not catalog(lang).get(key)]
        assert missing == [], lang


def test_every_description_key_in_the_catalogs_describes_a_command(bot: KrigBot) -> None:
    used = {key for key, _ in texts(bot)}
    for lang in ("nb", "sv", "da"):
        described_keys = {
            key
            for key in catalog(lang)
            if key.endswith(".desc") and key.startswith(("cmd.", "opt."))
        }
        assert described_keys - used == set(), lang
