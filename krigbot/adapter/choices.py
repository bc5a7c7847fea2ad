"""The choices of a game's rules that the commands offer, named in the player's language.

Each choice's own name is its English text, which Discord shows in a language Krigbot has no
catalog for; the translator gives the others from the same key."""

from __future__ import annotations

from discord import app_commands
from discord.app_commands import locale_str as ls

from krigbot.engine import HOUSE_RULES
from krigbot.engine.match import BEST_OF
from krigbot.engine.rules import PICKUPS, PRESETS, SHORTAGES
from krigbot.i18n import t


def english(key: str) -> ls:
    """Return a choice's name: its English text, translated by its catalog key."""
    return ls(t("en", key), key=key)


VARIANT_CHOICES = [
    app_commands.Choice(name=english(f"variant.{name}.name"), value=name) for name in PRESETS
]
PICKUP_CHOICES = [
    app_commands.Choice(name=english(f"pickup.{value}"), value=value) for value in PICKUPS
]
SHORTAGE_CHOICES = [
    app_commands.Choice(name=english(f"shortage.{value}"), value=value) for value in SHORTAGES
]
HOUSE_RULE_CHOICES = [
    app_commands.Choice(name=english(f"house.{key}"), value=key) for key in HOUSE_RULES
]
BEST_OF_CHOICES = [app_commands.Choice(name=english(f"best_of.{n}"), value=n) for n in BEST_OF]
