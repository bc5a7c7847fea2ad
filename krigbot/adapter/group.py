"""The one ``/krig`` group: each cog declares its own subcommands, the tree gathers them here."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from discord import app_commands

SUBCOMMANDS = (
    "start",
    "status",
    "table",
    "forfeit",
    "cancel",
    "auto",
    "finish",
    "history",
    "replay",
    "leaderboard",
    "stats",
    "settings",
    "rules",
    "tournament",
)
"""Every subcommand of /krig, in the order Discord lists them."""
T = TypeVar("T")
_OF_KRIG = "subcommand of"
"""The key of a command's ``extras`` that marks it as a subcommand of /krig."""


def anywhere(command: T) -> T:
    """Offer a top-level command wherever Krig can be played: servers, DMs and group DMs, through
    a server's install of the bot or a user's own (Discord reads this on top-level commands only;
    subcommands that belong to servers refuse elsewhere themselves)."""
    installs = app_commands.allowed_installs(guilds=True, users=True)
    contexts = app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    return installs(contexts(command))


def subcommand(
    callback: Callable[..., Coroutine[Any, Any, None]],
) -> app_commands.Command[Any, ..., None]:
    """Declare a cog's method as the /krig subcommand of its name; its docstring describes it."""
    return app_commands.command(extras={_OF_KRIG: "krig"})(callback)


def is_subcommand(command: object) -> bool:
    """Tell whether a command (or a group of them) was declared to go under /krig."""
    return (
        isinstance(command, app_commands.Command | app_commands.Group)
        and command.extras.get(_OF_KRIG) == "krig"
    )


OF_KRIG = {_OF_KRIG: "krig"}
"""The ``extras`` of a group of subcommands that goes under /krig (``/krig tournament …``)."""


@anywhere
class KrigGroup(app_commands.Group, name="krig"):
    """Play Krig (War), the card game"""

    def add_command(
        self,
        command: app_commands.Command[Any, ..., Any] | app_commands.Group,
        /,
        *,
        override: bool = False,
    ) -> None:
        """Add a cog's subcommand; refuse one that is not listed or that another cog declared."""
        if command.name not in SUBCOMMANDS:
            raise ValueError(f"/krig {command.name} is not one of the listed subcommands")
        super().add_command(command, override=override)
        # Discord lists them in the order sent, whichever cog was loaded first.
        self._children = dict(
            sorted(self._children.items(), key=lambda item: SUBCOMMANDS.index(item[0]))
        )
