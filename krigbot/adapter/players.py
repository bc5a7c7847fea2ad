"""Who acts in an interaction, as the game service knows players and actors, and where."""

from __future__ import annotations

from typing import Any

import discord

from krigbot.sessions import Actor, Player


def display_name(user: discord.abc.User) -> str:
    """Return the name the chat shows for the user."""
    return user.display_name


def player_of(user: discord.abc.User) -> Player:
    """Return the user as a player of a game (by the name the chat shows)."""
    return Player(user.id, display_name(user), user.bot)


def actor_of(interaction: discord.Interaction[Any]) -> Actor:
    """Return who acts, and whether Discord lets them manage messages in the channel."""
    if interaction.guild_id is None:
        return Actor(interaction.user.id, in_server=False)
    return Actor(interaction.user.id, interaction.permissions.manage_messages)


def channel_of(interaction: discord.Interaction[Any]) -> int:
    """Return the channel an interaction was made in (every command and button is in one)."""
    assert interaction.channel_id is not None
    return interaction.channel_id


def pressed_message(interaction: discord.Interaction[Any]) -> int | None:
    """Return the message whose button was pressed (None for a command)."""
    return interaction.message.id if interaction.message else None
