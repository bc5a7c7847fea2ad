"""The choices of a game's rules that the commands offer, named in the player's language."""

from __future__ import annotations

from discord import app_commands
from discord.app_commands import locale_str as ls

from krigbot.engine import HOUSE_RULES
from krigbot.engine.match import BEST_OF
from krigbot.engine.rules import PICKUPS, PRESETS, SHORTAGES

VARIANT_CHOICES = [
    app_commands.Choice(name=ls(name, key=f"variant.{name}.name"), value=name) for name in PRESETS
]
PICKUP_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"pickup.{value}"), value=value) for value in PICKUPS
]
SHORTAGE_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"shortage.{value}"), value=value) for value in SHORTAGES
]
HOUSE_RULE_CHOICES = [
    app_commands.Choice(name=ls(key, key=f"house.{key}"), value=key) for key in HOUSE_RULES
]
BEST_OF_CHOICES = [
    app_commands.Choice(name=ls(str(n), key=f"best_of.{n}"), value=n) for n in BEST_OF
]
