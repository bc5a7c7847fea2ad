"""Checks on what an interaction carries, before discord.py or a command relies on it.

Discord only sends a command's options with the types it declared, as many as it declared,
with the users they name resolved, and only buttons the bot made. A forged or broken client need
not: discord.py then fails on its own (some of those failures leave the interaction unanswered),
or a command gets a value it was never declared to take. Such an interaction is refused with one
private line instead. Ranges and choices are the commands' own business: they answer those with
a message that says what is allowed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import discord
from discord import app_commands
from discord.enums import AppCommandOptionType

_VALUE_TYPES: Mapping[AppCommandOptionType, tuple[type, ...]] = {
    AppCommandOptionType.string: (str,),
    AppCommandOptionType.integer: (int,),
    AppCommandOptionType.number: (int, float),
    AppCommandOptionType.boolean: (bool,),
}
_RESOLVED_IN: Mapping[AppCommandOptionType, tuple[str, ...]] = {
    AppCommandOptionType.user: ("users",),
    AppCommandOptionType.channel: ("channels",),
    AppCommandOptionType.role: ("roles",),
    AppCommandOptionType.mentionable: ("users", "roles"),
    AppCommandOptionType.attachment: ("attachments",),
}
_SUBCOMMAND_TYPES = (
    AppCommandOptionType.subcommand.value,
    AppCommandOptionType.subcommand_group.value,
)


def malformed_command(
    tree: app_commands.CommandTree[Any], interaction: discord.Interaction[Any]
) -> str | None:
    """Return what is wrong with a slash command as sent, or None if it is as declared."""
    data: Mapping[str, Any] = interaction.data or {}
    if data.get("type", 1) != 1:
        return None  # context menus carry no options
    name = str(data.get("name"))
    guild = discord.Object(interaction.guild_id) if interaction.guild_id else None
    command = tree.get_command(name, guild=guild) or tree.get_command(name)
    options = data.get("options") or []
    while isinstance(command, app_commands.Group):
        if not _is_list_of_dicts(options) or len(options) != 1:
            return f"/{name} needs exactly one subcommand"
        chosen = options[0]
        if chosen.get("type") not in _SUBCOMMAND_TYPES:
            return f"/{name} needs a subcommand, not {chosen.get('type')!r}"
        name = f"{name} {chosen.get('name')}"
        command = command.get_command(str(chosen.get("name")))
        options = chosen.get("options") or []
    if command is None:
        return f"there is no command /{name}"
    if not _is_list_of_dicts(options):
        return f"/{name}: the options are not a list of objects"
    resolved = data.get("resolved") or {}
    declared, required = _declared(command)
    given: set[str] = set()
    for option in options:
        key = str(option.get("name"))
        parameter = declared.get(key)
        if parameter is None or key in given:
            return f"/{name}: unknown or repeated option {key!r}"
        given.add(key)
        problem = _bad_value(parameter, option, resolved)
        if problem is not None:
            return f"/{name} {key}: {problem}"
    missing = [key for key in required if key not in given]
    if missing:
        return f"/{name}: missing {', '.join(missing)}"
    return None


@functools.cache
def _declared(
    command: app_commands.Command[Any, ..., Any],
) -> tuple[dict[str, app_commands.Parameter], tuple[str, ...]]:
    """Return a command's options by name, and the names of the required ones.

    ``Command.parameters`` builds new objects at every call; a command's options never change.
    """
    parameters = command.parameters
    return (
        {parameter.display_name: parameter for parameter in parameters},
        tuple(p.display_name for p in parameters if p.required),
    )


def _is_list_of_dicts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _bad_value(
    parameter: app_commands.Parameter, option: Mapping[str, Any], resolved: Mapping[str, Any]
) -> str | None:
    """Return what is wrong with one option's value, or None."""
    if option.get("type") != parameter.type.value:
        return f"type {option.get('type')!r} instead of {parameter.type.value}"
    value = option.get("value")
    kinds = _VALUE_TYPES.get(parameter.type)
    if kinds is not None:
        # bool is an int in Python; Discord never sends one for the other.
        is_bool = isinstance(value, bool)
        if not isinstance(value, kinds) or is_bool != (
            parameter.type is AppCommandOptionType.boolean
        ):
            return f"a {type(value).__name__} value"
        if isinstance(value, float) and not math.isfinite(value):
            return "not a finite number"
        if parameter.choices and value not in {choice.value for choice in parameter.choices}:
            return "not one of its choices"
        return None
    places = _RESOLVED_IN.get(parameter.type)
    if places is None:
        return f"an option of type {parameter.type.name}"
    if not isinstance(value, str) or not value.isdigit():
        return "not an id"
    if not any(value in (resolved.get(place) or {}) for place in places):
        return "names something Discord did not send"
    return None


def unhandled_press(
    interaction: discord.Interaction[Any], items: Iterable[type[discord.ui.DynamicItem[Any]]]
) -> bool:
    """Tell whether a press of a button of ours (``krig:``) is one discord.py will not dispatch.

    discord.py calls a dynamic item only if the id matches its template *and* the pressed
    message carries that button (Discord's documentation asks bots to check the latter), and
    leaves anything else unanswered: a button from an older version, or one copied from another
    message by a forged press.
    """
    custom_id = pressed_id(interaction)
    if not isinstance(custom_id, str) or not custom_id.startswith("krig:"):
        return False
    if not any(item.__discord_ui_compiled_template__.fullmatch(custom_id) for item in items):
        return True
    return not carries(interaction.message, custom_id)


def pressed_id(interaction: discord.Interaction[Any]) -> str | None:
    """Return the custom id of the component an interaction pressed, if it carries one."""
    data: Mapping[str, Any] = interaction.data or {}
    custom_id = data.get("custom_id")
    return custom_id if isinstance(custom_id, str) else None


def carries(message: discord.Message | None, custom_id: str) -> bool:
    """Tell whether a message has a component with this id."""
    pending: list[Any] = [] if message is None else list(message.components)
    while pending:
        component = pending.pop()
        if getattr(component, "custom_id", None) == custom_id:
            return True
        pending.extend(getattr(component, "children", ()))
    return False
