"""Slash command names and descriptions reach Discord translated, within Discord's rules."""

from __future__ import annotations

import re

import discord
import pytest
from discord import app_commands
from discord.app_commands import locale_str

from krigbot.i18n import Translator, catalog, lang_for, t
from tests.support.discord_limits import CHOICE_KEYS, DESCRIPTION_KEYS, NAME_KEYS, is_discord_name

SUPPORTED_LOCALES = [
    discord.Locale.norwegian,
    discord.Locale.swedish,
    discord.Locale.danish,
    discord.Locale.american_english,
    discord.Locale.british_english,
]
CONTEXT: app_commands.translator.OtherTranslationContext = app_commands.TranslationContext(
    app_commands.TranslationContextLocation.other, None
)


def metadata_keys() -> list[str]:
    """Return every key the translator serves: names, descriptions and choice names."""
    pattern = f"{NAME_KEYS}|{DESCRIPTION_KEYS}|{CHOICE_KEYS}"
    return sorted(key for key in catalog("nb") if re.fullmatch(pattern, key))


@pytest.mark.parametrize("locale", SUPPORTED_LOCALES)
async def test_translator_gives_valid_localised_names(locale: discord.Locale) -> None:
    translator = Translator()
    for key in metadata_keys():
        # A description's English is in the code, not in the English catalog.
        canonical = catalog("en").get(key, "English in the code")
        text = await translator.translate(locale_str(canonical, key=key), locale, CONTEXT)
        expected = catalog(lang_for(locale)).get(key)
        assert text == (None if expected in (None, canonical) else expected), key
        if text is not None and re.fullmatch(NAME_KEYS, key):
            assert is_discord_name(text), (key, text)


async def test_translator_returns_none_for_locales_without_a_catalog() -> None:
    translator = Translator()
    for locale in (
        discord.Locale.german,
        discord.Locale.french,
        discord.Locale.finnish,
        discord.Locale.polish,
        discord.Locale.japanese,
    ):
        assert (
            await translator.translate(locale_str("flip", key="cmd.flip.name"), locale, CONTEXT)
            is None
        )


async def test_translator_uses_the_message_as_key_without_a_key_extra() -> None:
    translator = Translator()
    no = discord.Locale.norwegian
    assert (
        await translator.translate(locale_str("cmd.flip.name"), no, CONTEXT)
        == catalog("nb")["cmd.flip.name"]
    )
    assert await translator.translate(locale_str("no such key"), no, CONTEXT) is None


async def test_translated_command_payload_carries_the_localisations() -> None:
    client = discord.Client(intents=discord.Intents.default())
    tree = app_commands.CommandTree(client)
    krig = app_commands.Group(
        name=locale_str("krig", key="cmd.krig.name"),
        description=locale_str("Play Krig (War), the card game", key="cmd.krig.desc"),
    )

    @krig.command(
        name=locale_str("flip", key="cmd.flip.name"),
        description=locale_str("Flip the next card (play one round)", key="cmd.flip.desc"),
    )
    @app_commands.rename(count=locale_str("count", key="opt.count.name"))
    @app_commands.describe(
        count=locale_str("Play several rounds at once (up to 50)", key="opt.count.desc"),
        pickup=locale_str("The order won cards go under the pile", key="opt.pickup.desc"),
    )
    @app_commands.choices(
        pickup=[app_commands.Choice(name=locale_str("Shuffled", key="pickup.shuffled"), value="s")]
    )
    async def flip(interaction: discord.Interaction, count: int = 1, pickup: str = "s") -> None:
        """Flip the next card."""

    payload = await krig.get_translated_payload(tree, Translator())
    await client.close()

    # "krig" is the same word in every language, so Discord needs no localisation for it.
    assert payload["name_localizations"] == {}
    # Discord's locale for each catalog, spelled out: the translator's choice is under test.
    nordic = {"no": catalog("nb"), "sv-SE": catalog("sv"), "da": catalog("da")}
    assert payload["description_localizations"]["da"] == nordic["da"]["cmd.krig.desc"]
    flip_payload = payload["options"][0]
    assert flip_payload["name_localizations"] == {
        locale: messages["cmd.flip.name"] for locale, messages in nordic.items()
    }
    count_payload, pickup_payload = flip_payload["options"]
    assert count_payload["name_localizations"] == {
        locale: messages["opt.count.name"] for locale, messages in nordic.items()
    }
    assert (
        pickup_payload["choices"][0]["name_localizations"]["sv-SE"]
        == nordic["sv-SE"]["pickup.shuffled"]
    )


async def test_translator_finds_a_key_from_the_command_or_option_it_names() -> None:
    @app_commands.command()
    @app_commands.describe(count="Play several rounds at once (up to 50)")
    async def flip(interaction: discord.Interaction, count: int = 1) -> None:
        """Flip the next card (play one round)"""

    (count,) = flip.parameters
    where = app_commands.TranslationContextLocation
    asked: list[tuple[str, app_commands.TranslationContextTypes]] = [
        ("flip", app_commands.TranslationContext(where.command_name, flip)),
        (flip.description, app_commands.TranslationContext(where.command_description, flip)),
        ("count", app_commands.TranslationContext(where.parameter_name, count)),
        (count.description, app_commands.TranslationContext(where.parameter_description, count)),
    ]
    translator = Translator()

    texts = [
        await translator.translate(locale_str(english), discord.Locale.norwegian, context)
        for english, context in asked
    ]

    keys = ("cmd.flip.name", "cmd.flip.desc", "opt.count.name", "opt.count.desc")
    assert texts == [t("nb", key) for key in keys]
