"""Application commands: Discord's checks on a command sync, and building the ``data`` of a
command interaction from the *synced* definitions, the way the Discord client would."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.standin.messages import FormErrors, Message
from tests.standin.world import DISCORD_LOCALES, Channel, Member, Role, User

SUB_COMMAND = 1
SUB_COMMAND_GROUP = 2
STRING = 3
INTEGER = 4
BOOLEAN = 5
USER = 6
CHANNEL = 7
ROLE = 8
MENTIONABLE = 9
NUMBER = 10
ATTACHMENT = 11

OPTION_TYPE_NAMES = {
    SUB_COMMAND: "subcommand",
    SUB_COMMAND_GROUP: "subcommand group",
    STRING: "string",
    INTEGER: "integer",
    BOOLEAN: "boolean",
    USER: "user",
    CHANNEL: "channel",
    ROLE: "role",
    MENTIONABLE: "mentionable",
    NUMBER: "number",
    ATTACHMENT: "attachment",
}

CHAT_INPUT = 1
USER_COMMAND = 2
MESSAGE_COMMAND = 3


class StandInError(Exception):
    """Base class for mistakes a test makes when driving the stand-in."""


class UnknownCommandError(StandInError, LookupError):
    """The command, subcommand or option does not exist in what the bot synced."""


class CommandNotAvailableError(StandInError):
    """Discord would not offer this command to this user here (permissions, DM/guild context)."""


class OptionError(StandInError, ValueError):
    """An option value the Discord client could not send (wrong type, not a choice, missing...)."""


@dataclass
class Upload:
    """A file given as the value of an attachment option."""

    filename: str
    data: bytes
    content_type: str = "application/octet-stream"


# ------------------------------------------------------------------------------------------
# Sync validation
# ------------------------------------------------------------------------------------------


def _valid_chat_input_name(name: Any) -> bool:
    # Discord: ^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$ and lowercase where a lowercase
    # form exists. str.isalnum() covers \p{L}\p{N} closely enough for a test double.
    if not isinstance(name, str) or not 1 <= len(name) <= 32:
        return False
    return all((ch.isalnum() or ch in "-_'") and ch == ch.lower() for ch in name)


def _check_name(
    errors: FormErrors, path: tuple[str | int, ...], obj: Mapping[str, Any], chat: bool
) -> None:
    name = obj.get("name")
    ok = _valid_chat_input_name(name) if chat else isinstance(name, str) and 1 <= len(name) <= 32
    if not ok:
        errors.add(
            (*path, "name"),
            "APPLICATION_COMMAND_INVALID_NAME",
            f"Command name is invalid: {name!r}",
        )
    locs = obj.get("name_localizations") or {}
    for locale, value in locs.items():
        if locale not in DISCORD_LOCALES:
            errors.add(
                (*path, "name_localizations", locale),
                "LOCALE_INVALID",
                f"Invalid locale {locale!r} (Discord locales: {sorted(DISCORD_LOCALES)})",
            )
            continue
        good = (
            _valid_chat_input_name(value)
            if chat
            else isinstance(value, str) and 1 <= len(value) <= 32
        )
        if not good:
            errors.add(
                (*path, "name_localizations", locale),
                "APPLICATION_COMMAND_INVALID_NAME",
                f"Command name is invalid: {value!r}",
            )


def _check_description(
    errors: FormErrors, path: tuple[str | int, ...], obj: Mapping[str, Any], required: bool
) -> None:
    desc = obj.get("description")
    if required:
        if not isinstance(desc, str) or not 1 <= len(desc) <= 100:
            errors.add(
                (*path, "description"),
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 100 in length.",
            )
    elif desc:
        errors.add(
            (*path, "description"),
            "APPLICATION_COMMAND_INVALID_DESCRIPTION",
            "Context menu commands cannot have a description",
        )
    for locale, value in (obj.get("description_localizations") or {}).items():
        if locale not in DISCORD_LOCALES:
            errors.add(
                (*path, "description_localizations", locale),
                "LOCALE_INVALID",
                f"Invalid locale {locale!r}",
            )
        elif not isinstance(value, str) or not 1 <= len(value) <= 100:
            errors.add(
                (*path, "description_localizations", locale),
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 100 in length.",
            )


def _check_options(
    errors: FormErrors,
    path: tuple[str | int, ...],
    options: Sequence[Mapping[str, Any]],
    depth: int,
) -> None:
    if len(options) > 25:
        errors.add((*path, "options"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
    names: set[str] = set()
    seen_optional = False
    for i, opt in enumerate(options):
        p = (*path, "options", i)
        _check_name(errors, p, opt, chat=True)
        _check_description(errors, p, opt, required=True)
        name = opt.get("name")
        if name in names:
            errors.add(
                (*p, "name"),
                "APPLICATION_COMMAND_OPTION_NAME_ALREADY_EXISTS",
                f"Duplicate option {name!r}",
            )
        names.add(str(name))
        kind = opt.get("type")
        if kind in (SUB_COMMAND, SUB_COMMAND_GROUP):
            if kind == SUB_COMMAND_GROUP and depth > 0:
                errors.add(
                    (*p, "type"),
                    "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                    "Subcommand groups cannot be nested",
                )
            if kind == SUB_COMMAND_GROUP and any(
                o.get("type") != SUB_COMMAND for o in opt.get("options") or []
            ):
                errors.add(
                    (*p, "options"),
                    "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                    "A subcommand group may only contain subcommands",
                )
            _check_options(errors, p, opt.get("options") or [], depth + 1)
            continue
        if kind not in OPTION_TYPE_NAMES:
            errors.add(
                (*p, "type"),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {sorted(OPTION_TYPE_NAMES)}.",
            )
        if opt.get("required"):
            if seen_optional:
                errors.add(
                    (*p, "required"),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options",
                )
        else:
            seen_optional = True
        choices = opt.get("choices") or []
        if choices:
            if kind not in (STRING, INTEGER, NUMBER):
                errors.add(
                    (*p, "choices"),
                    "APPLICATION_COMMAND_OPTION_CHOICES_INVALID",
                    "Only string, integer and number options can have choices",
                )
            if len(choices) > 25:
                errors.add(
                    (*p, "choices"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
                )
            if opt.get("autocomplete"):
                errors.add(
                    (*p, "autocomplete"),
                    "APPLICATION_COMMAND_AUTOCOMPLETE_CHOICES",
                    "Autocomplete and choices cannot both be set",
                )
            for j, choice in enumerate(choices):
                cname = choice.get("name")
                if not isinstance(cname, str) or not 1 <= len(cname) <= 100:
                    errors.add(
                        (*p, "choices", j, "name"),
                        "BASE_TYPE_BAD_LENGTH",
                        "Must be between 1 and 100 in length.",
                    )
                for locale, value in (choice.get("name_localizations") or {}).items():
                    if locale not in DISCORD_LOCALES:
                        errors.add(
                            (*p, "choices", j, "name_localizations", locale),
                            "LOCALE_INVALID",
                            f"Invalid locale {locale!r}",
                        )
                    elif not isinstance(value, str) or not 1 <= len(value) <= 100:
                        errors.add(
                            (*p, "choices", j, "name_localizations", locale),
                            "BASE_TYPE_BAD_LENGTH",
                            "Must be between 1 and 100 in length.",
                        )
                value = choice.get("value")
                if kind == STRING and (not isinstance(value, str) or len(value) > 100):
                    errors.add(
                        (*p, "choices", j, "value"),
                        "BASE_TYPE_BAD_LENGTH",
                        "String choice values must be 100 or fewer in length.",
                    )
                if kind == INTEGER and (not isinstance(value, int) or isinstance(value, bool)):
                    errors.add(
                        (*p, "choices", j, "value"), "NUMBER_TYPE_COERCE", "Value is not int."
                    )
        if kind not in (INTEGER, NUMBER) and ("min_value" in opt or "max_value" in opt):
            errors.add(
                p, "APPLICATION_COMMAND_OPTION_INVALID", "min_value/max_value only for numbers"
            )
        if kind != STRING and ("min_length" in opt or "max_length" in opt):
            errors.add(
                p, "APPLICATION_COMMAND_OPTION_INVALID", "min_length/max_length only for strings"
            )


def _command_size(cmd: Mapping[str, Any]) -> int:
    # Discord limits name + description + all option names/descriptions/choice values to 4000
    # characters (checked per locale; the default locale is the one that usually overflows).
    total = len(cmd.get("name") or "") + len(cmd.get("description") or "")
    for opt in cmd.get("options") or []:
        total += _command_size(opt)
        for choice in opt.get("choices") or []:
            total += len(str(choice.get("name") or "")) + len(str(choice.get("value") or ""))
    return total


def validate_sync(payload: Any) -> FormErrors:
    """Check a bulk-overwrite payload the way Discord does; empty result means it is accepted."""
    errors = FormErrors()
    if not isinstance(payload, list):
        errors.add((), "BASE_TYPE_ARRAY", "Must be an array.")
        return errors
    counts: dict[int, int] = {}
    seen: set[tuple[str, int]] = set()
    for i, cmd in enumerate(payload):
        kind = int(cmd.get("type", CHAT_INPUT))
        counts[kind] = counts.get(kind, 0) + 1
        chat = kind == CHAT_INPUT
        _check_name(errors, (i,), cmd, chat=chat)
        _check_description(errors, (i,), cmd, required=chat)
        key = (str(cmd.get("name")), kind)
        if key in seen:
            errors.add(
                (i, "name"), "APPLICATION_COMMANDS_DUPLICATE_NAME", f"Duplicate command {key[0]!r}"
            )
        seen.add(key)
        if chat:
            _check_options(errors, (i,), cmd.get("options") or [], depth=0)
            if _command_size(cmd) > 4000:
                errors.add(
                    (i,), "APPLICATION_COMMAND_TOO_LARGE", "Command exceeds maximum size (4000)"
                )
        elif cmd.get("options"):
            errors.add(
                (i, "options"),
                "APPLICATION_COMMAND_OPTIONS_INVALID",
                "Context menus take no options",
            )
    if counts.get(CHAT_INPUT, 0) > 100:
        errors.add((), "APPLICATION_COMMANDS_TOO_MANY", "Maximum of 100 chat input commands")
    for kind in (USER_COMMAND, MESSAGE_COMMAND):
        if counts.get(kind, 0) > 15:
            errors.add(
                (), "APPLICATION_COMMANDS_TOO_MANY", "Maximum of 15 context menu commands of a type"
            )
    return errors


# ------------------------------------------------------------------------------------------
# Looking commands up and building interaction data
# ------------------------------------------------------------------------------------------


def _names(obj: Mapping[str, Any], locale: str | None) -> list[str]:
    names = [str(obj.get("name"))]
    if locale:
        localized = (obj.get("name_localizations") or {}).get(locale)
        if localized:
            names.append(localized)
    return names


def _match(
    items: Sequence[Mapping[str, Any]], name: str, locale: str | None
) -> Mapping[str, Any] | None:
    for item in items:
        if name in _names(item, locale):
            return item
    return None


def _listing(items: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(repr(i.get("name")) for i in items) or "(none)"


@dataclass
class ResolvedCommand:
    """A command found in the sync: the top-level command and the path of (sub)command options."""

    command: Mapping[str, Any]
    guild_id: int | None
    chain: list[Mapping[str, Any]]

    @property
    def leaf(self) -> Mapping[str, Any]:
        """The object whose ``options`` are the actual arguments (command or subcommand)."""
        return self.chain[-1] if self.chain else self.command

    @property
    def qualified_name(self) -> str:
        return " ".join([str(self.command["name"]), *(str(c["name"]) for c in self.chain)])


def find_command(
    candidates: Sequence[tuple[int | None, Sequence[dict[str, Any]]]],
    path: str,
    *,
    kind: int,
    locale: str | None,
) -> ResolvedCommand:
    """Find ``path`` ("krig start", by default or localized names) in synced command lists.

    ``candidates`` is tried in order (guild commands before global ones, like the client
    shows them). Raises :class:`UnknownCommandError` naming what does exist.
    """
    parts = path.split() if kind == CHAT_INPUT else [path]
    if not parts:
        raise UnknownCommandError("empty command name")
    head, rest = parts[0], parts[1:]
    for guild_id, commands in candidates:
        typed = [c for c in commands if int(c.get("type", CHAT_INPUT)) == kind]
        command = _match(typed, head, locale)
        if command is None:
            continue
        chain: list[Mapping[str, Any]] = []
        current: Mapping[str, Any] = command
        for part in rest:
            subs = [
                o
                for o in current.get("options") or []
                if o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP)
            ]
            found = _match(subs, part, locale)
            if found is None:
                raise UnknownCommandError(
                    f"{' '.join([head, *(str(c['name']) for c in chain)])!r} has no subcommand "
                    f"{part!r}; "
                    f"synced subcommands: {_listing(subs)}"
                )
            chain.append(found)
            current = found
        subs = [
            o
            for o in current.get("options") or []
            if o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP)
        ]
        if subs:
            raise UnknownCommandError(
                f"{path!r} is a group; Discord only lets users run one of its subcommands: "
                f"{_listing(subs)}"
            )
        return ResolvedCommand(command=command, guild_id=guild_id, chain=chain)
    available = [
        c for _g, cmds in candidates for c in cmds if int(c.get("type", CHAT_INPUT)) == kind
    ]
    raise UnknownCommandError(f"no synced command {head!r} here; synced: {_listing(available)}")


ValueResolver = Callable[[int, Any, Mapping[str, Any]], tuple[Any, dict[str, dict[str, Any]]]]


def build_options(
    resolved: ResolvedCommand,
    values: Mapping[str, Any],
    *,
    locale: str | None,
    resolve_value: ValueResolver,
    focused: str | None = None,
    enforce_required: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Build the nested ``data.options`` and ``data.resolved`` for a chat-input command.

    ``resolve_value(type, value, option_spec)`` turns a snowflake-type value (a stand-in
    User, Channel, Role...) into ``(option_value, resolved_fragment)``.
    """
    specs = [
        o
        for o in resolved.leaf.get("options") or []
        if o.get("type") not in (SUB_COMMAND, SUB_COMMAND_GROUP)
    ]
    result: list[dict[str, Any]] = []
    resolved_data: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for given_name, raw in values.items():
        spec = _match(specs, given_name, locale)
        if spec is None:
            raise UnknownCommandError(
                f"{resolved.qualified_name!r} has no option {given_name!r}; "
                f"synced options: {_listing(specs)}"
            )
        name = str(spec["name"])
        if name in used:
            raise OptionError(f"option {name!r} given twice")
        used.add(name)
        kind = int(spec["type"])
        entry: dict[str, Any] = {"name": name, "type": kind}
        if name == focused:
            # The client sends whatever has been typed so far, unvalidated.
            entry["value"] = raw
            entry["focused"] = True
        else:
            value, fragment = _convert(
                kind, raw, spec, locale, resolve_value, resolved.qualified_name
            )
            entry["value"] = value
            for key, items in fragment.items():
                resolved_data.setdefault(key, {}).update(items)
        result.append(entry)
    if enforce_required and focused is None:
        missing = [
            str(s["name"]) for s in specs if s.get("required") and str(s["name"]) not in used
        ]
        if missing:
            raise OptionError(f"{resolved.qualified_name!r} requires option(s) {missing}")
    # Discord nests the arguments inside the subcommand (group) options.
    for link in reversed(resolved.chain):
        result = [{"name": link["name"], "type": link["type"], "options": result}]
    return result, resolved_data


def _convert(
    kind: int,
    raw: Any,
    spec: Mapping[str, Any],
    locale: str | None,
    resolve_value: ValueResolver,
    command: str,
) -> tuple[Any, dict[str, dict[str, Any]]]:
    name = spec["name"]
    where = f"option {name!r} of {command!r}"
    if kind == STRING:
        if not isinstance(raw, str):
            raise OptionError(
                f"{where} is a string option; got {raw!r} (use slash_raw to send wrong types)"
            )
        value: Any = _choice_value(raw, spec, locale, where)
        min_len, max_len = spec.get("min_length"), spec.get("max_length")
        if (min_len is not None and len(value) < min_len) or (
            max_len is not None and len(value) > max_len
        ):
            raise OptionError(
                f"{where} must be {min_len}..{max_len} characters long; got {len(value)}"
            )
        return value, {}
    if kind in (INTEGER, NUMBER):
        ok = isinstance(raw, int) if kind == INTEGER else isinstance(raw, int | float)
        if isinstance(raw, bool) or not ok:
            raise OptionError(f"{where} is an {OPTION_TYPE_NAMES[kind]} option; got {raw!r}")
        value = _choice_value(raw, spec, locale, where)
        low, high = spec.get("min_value"), spec.get("max_value")
        if (low is not None and value < low) or (high is not None and value > high):
            raise OptionError(f"{where} must be within {low}..{high}; got {value!r}")
        return value, {}
    if kind == BOOLEAN:
        if not isinstance(raw, bool):
            raise OptionError(f"{where} is a boolean option; got {raw!r}")
        return raw, {}
    expected = {
        USER: (User, Member),
        CHANNEL: (Channel,),
        ROLE: (Role,),
        MENTIONABLE: (User, Member, Role),
        ATTACHMENT: (Upload,),
    }[kind]
    if not isinstance(raw, expected):
        raise OptionError(
            f"{where} is a {OPTION_TYPE_NAMES[kind]} option; pass a stand-in "
            f"{'/'.join(t.__name__ for t in expected)}, got {raw!r}"
        )
    allowed_types = spec.get("channel_types")
    if isinstance(raw, Channel) and allowed_types and raw.type not in allowed_types:
        raise OptionError(f"{where} only accepts channel types {allowed_types}; got {raw.type}")
    return resolve_value(kind, raw, spec)


def _choice_value(raw: Any, spec: Mapping[str, Any], locale: str | None, where: str) -> Any:
    choices = spec.get("choices") or []
    if not choices:
        return raw
    for choice in choices:
        if choice.get("value") == raw:
            return raw
    # A user picks a choice by its (possibly localized) name; accept that too.
    for choice in choices:
        if raw in _names(choice, locale):
            return choice["value"]
    shown = [c.get("value") for c in choices]
    raise OptionError(f"{where} only offers the choices {shown}; got {raw!r}")


def message_target_json(message: Message) -> dict[str, Any]:
    """A message as it appears in ``resolved.messages`` of a message context-menu interaction."""
    guild = message.channel.guild
    return message.to_json(guild_id=guild.id if guild else None)
