"""Buttons whose custom ids carry the game, so they keep working after a restart.

Each is a ``DynamicItem``: discord.py matches the custom id against the template, rebuilds the
button and calls it, whether or not this process sent the message.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, cast

import discord

from krigbot.cogs.replies import answer_error
from krigbot.i18n import Lang, t

if TYPE_CHECKING:
    from krigbot.cogs.krig import KrigCog


def _cog(interaction: discord.Interaction[Any]) -> KrigCog:
    cog = interaction.client.get_cog("Krig")
    assert cog is not None
    return cast("KrigCog", cog)


async def _guarded(interaction: discord.Interaction[Any], handler: Awaitable[None]) -> None:
    """Run a button's handler; whatever it raises goes to the bot's one error handler."""
    try:
        await handler
    except Exception as exc:
        await answer_error(interaction, exc)


class AcceptButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"krig:accept:(?P<game>\d+)"
):
    """Accept a challenge (only the challenged may)."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            discord.ui.Button(
                label=t(lang, "challenge.accept"),
                style=discord.ButtonStyle.success,
                custom_id=f"krig:accept:{game_id}",
            )
        )
        self.game_id = game_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> AcceptButton:
        return cls(int(match["game"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(interaction, _cog(interaction).on_accept(interaction, self.game_id))


class DeclineButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"krig:decline:(?P<game>\d+)"
):
    """Decline a challenge (only the challenged may)."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            discord.ui.Button(
                label=t(lang, "challenge.decline"),
                style=discord.ButtonStyle.danger,
                custom_id=f"krig:decline:{game_id}",
            )
        )
        self.game_id = game_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> DeclineButton:
        return cls(int(match["game"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(interaction, _cog(interaction).on_decline(interaction, self.game_id))


class FlipButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"krig:flip:(?P<game>\d+):(?P<round>\d+)",
):
    """Play the next round; the id holds the round shown, so a stale press plays nothing."""

    def __init__(self, game_id: int, round_shown: int, lang: Lang = "nb") -> None:
        super().__init__(
            discord.ui.Button(
                label=t(lang, "table.flip"),
                emoji="🂠",
                style=discord.ButtonStyle.primary,
                custom_id=f"krig:flip:{game_id}:{round_shown}",
            )
        )
        self.game_id = game_id
        self.round_shown = round_shown

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> FlipButton:
        return cls(int(match["game"]), int(match["round"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(
            interaction,
            _cog(interaction).on_flip_button(interaction, self.game_id, self.round_shown),
        )


class ForfeitButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"krig:forfeit:(?P<game>\d+):(?P<user>\d+):(?P<choice>yes|no)",
):
    """Confirm or call off giving up (only the player who asked may)."""

    def __init__(self, game_id: int, user_id: int, confirm: bool, lang: Lang = "nb") -> None:
        super().__init__(
            discord.ui.Button(
                label=t(lang, "forfeit.yes" if confirm else "forfeit.no"),
                style=discord.ButtonStyle.danger if confirm else discord.ButtonStyle.secondary,
                custom_id=f"krig:forfeit:{game_id}:{user_id}:{'yes' if confirm else 'no'}",
            )
        )
        self.game_id = game_id
        self.user_id = user_id
        self.confirm = confirm

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ForfeitButton:
        return cls(int(match["game"]), int(match["user"]), match["choice"] == "yes")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(
            interaction,
            _cog(interaction).on_forfeit_button(
                interaction, self.game_id, self.user_id, self.confirm
            ),
        )


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    AcceptButton,
    DeclineButton,
    FlipButton,
    ForfeitButton,
)


def view_of(*items: discord.ui.Item[Any]) -> discord.ui.View:
    """Return a view holding the given buttons (no timeout: they are dynamic)."""
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view
