"""What a user's Discord client sends: slash commands, context menus, clicks, selects, modals.

The client side of the stand-in, apart from the REST routes that answer the bot: each method
checks what the real client would refuse (unknown commands, hidden ones, disabled buttons,
someone else's ephemeral message), builds the interaction as Discord would and dispatches it
to the gateway session that owns the channel's guild.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tests.standin.commands import (
    ATTACHMENT,
    CHANNEL,
    CHAT_INPUT,
    MENTIONABLE,
    MESSAGE_COMMAND,
    ROLE,
    USER,
    USER_COMMAND,
    CommandNotAvailableError,
    ResolvedCommand,
    StandInError,
    Upload,
    build_options,
    find_command,
    message_target_json,
)
from tests.standin.contexts import (
    app_permissions as reach_permissions,
)
from tests.standin.contexts import (
    check_offered,
    context_of,
    installed_in,
    owners,
)
from tests.standin.events import EventLog, Guard
from tests.standin.messages import Message
from tests.standin.records import (
    APPLICATION_COMMAND,
    APPLICATION_COMMAND_AUTOCOMPLETE,
    MESSAGE_COMPONENT,
    MODAL,
    MODAL_SUBMIT,
    InteractionRecord,
)
from tests.standin.world import (
    DEFAULT_BOT_PERMISSIONS,
    Channel,
    Member,
    PermissionsLike,
    Role,
    User,
    normalize_locale,
    permission_value,
)

if TYPE_CHECKING:
    from tests.standin.apps import Application
    from tests.standin.gateway import Gateway
    from tests.standin.store import MessageStore
    from tests.standin.world import World

_USE_APPLICATION_COMMANDS = 1 << 31


class NotConnectedError(StandInError):
    """No bot gateway session exists that could receive the event."""


class InteractionClient:
    """The user-facing half of :class:`tests.standin.server.DiscordStandIn` (a mixin of it)."""

    world: World
    store: MessageStore
    gateway: Gateway
    app: Application
    guard: Guard
    max_file_size: int
    interactions: dict[int, InteractionRecord]
    interactions_by_token: dict[str, InteractionRecord]
    interaction_log: EventLog[InteractionRecord]
    diagnostics: Callable[[], str]

    async def slash(
        self,
        command: str,
        *,
        user: User | Member,
        channel: Channel | None = None,
        options: Mapping[str, Any] | None = None,
        locale: str | None = None,
        enforce_permissions: bool = True,
        app_permissions: PermissionsLike | None = None,
        member_permissions: PermissionsLike | None = None,
    ) -> InteractionRecord:
        """Run a slash command as the Discord client would, and return its record.

        ``command`` is "name [group] [subcommand]" (default or ``locale``-localized names) and
        must exist in what the bot synced (guild commands of the channel's guild first, then
        global). ``options`` maps option names to values: str/int/float/bool, stand-in
        ``User``/``Member``/``Channel``/``Role`` objects, or :class:`Upload` for attachments.
        Choices may be given by value or by (localized) name. ``channel=None`` means a DM.
        Raises :class:`UnknownCommandError`/:class:`OptionError`/:class:`CommandNotAvailableError`
        for anything the real client would not let the user send.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.world.dm_channel(account)
        loc = normalize_locale(locale or account.locale)
        resolved_cmd = self._find(command, CHAT_INPUT, channel, loc)
        self._check_available(resolved_cmd, account, channel, enforce_permissions)
        opts, resolved = build_options(
            resolved_cmd, options or {}, locale=loc, resolve_value=self._value_resolver(channel)
        )
        data = self._command_data(resolved_cmd, opts, resolved)
        return self._dispatch_interaction(
            APPLICATION_COMMAND,
            data,
            account,
            channel,
            loc,
            app_permissions=app_permissions,
            member_permissions=member_permissions,
        )

    async def slash_raw(
        self,
        command: str,
        *,
        user: User | Member,
        channel: Channel | None = None,
        options: list[dict[str, Any]] | None = None,
        resolved: dict[str, Any] | None = None,
        locale: str | None = None,
        command_id: int | None = None,
        guild_command: bool | None = None,
    ) -> InteractionRecord:
        """Send a command interaction with ``data.options`` exactly as given (no checks at all).

        For fuzzing: wrong option types, unknown names, missing required options. ``command``
        is the top-level name; if it was synced its id/guild are used unless overridden.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.world.dm_channel(account)
        loc = normalize_locale(locale) if locale else account.locale
        cmd_id, guild_id = command_id, None
        with contextlib.suppress(StandInError):
            found = self._find(command.split()[0], CHAT_INPUT, channel, loc, allow_group=True)
            cmd_id = cmd_id or int(found.command["id"])
            guild_id = found.guild_id
        if guild_command is not None:
            guild_id = channel.guild.id if guild_command and channel.guild else None
        data: dict[str, Any] = {
            "id": str(cmd_id or self.world.snowflakes.next()),
            "name": command.split()[0],
            "type": CHAT_INPUT,
            "options": options or [],
        }
        if resolved:
            data["resolved"] = resolved
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
        return self._dispatch_interaction(APPLICATION_COMMAND, data, account, channel, loc)

    async def autocomplete(
        self,
        command: str,
        *,
        focused: str,
        value: Any,
        user: User | Member,
        channel: Channel | None = None,
        options: Mapping[str, Any] | None = None,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Send an autocomplete interaction for option ``focused`` with the partial ``value`` typed.

        ``await rec.response()`` then has ``.choices``.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.world.dm_channel(account)
        loc = normalize_locale(locale or account.locale)
        resolved_cmd = self._find(command, CHAT_INPUT, channel, loc)
        values = {**(options or {}), focused: value}
        opts, resolved = build_options(
            resolved_cmd,
            values,
            locale=loc,
            resolve_value=self._value_resolver(channel),
            focused=self._canonical_option(resolved_cmd, focused, loc),
        )
        data = self._command_data(resolved_cmd, opts, resolved)
        return self._dispatch_interaction(
            APPLICATION_COMMAND_AUTOCOMPLETE, data, account, channel, loc
        )

    async def context_menu(
        self,
        name: str,
        *,
        target: User | Member | Message,
        user: User | Member,
        channel: Channel | None = None,
        locale: str | None = None,
        enforce_permissions: bool = True,
    ) -> InteractionRecord:
        """Use a user (target is a User/Member) or message (target is a Message) context menu."""
        account = self._user_of(user)
        kind = MESSAGE_COMMAND if isinstance(target, Message) else USER_COMMAND
        if channel is None:
            channel = (
                target.channel if isinstance(target, Message) else self.world.dm_channel(account)
            )
        loc = normalize_locale(locale or account.locale)
        resolved_cmd = self._find(name, kind, channel, loc)
        self._check_available(resolved_cmd, account, channel, enforce_permissions)
        resolved: dict[str, dict[str, Any]]
        if isinstance(target, Message):
            target_id = target.id
            resolved = {"messages": {str(target.id): message_target_json(target)}}
        else:
            target_user = self._user_of(target)
            target_id = target_user.id
            resolved = self._value_resolver(channel)(USER, target_user, {})[1]
        data = self._command_data(resolved_cmd, [], resolved)
        data["target_id"] = str(target_id)
        return self._dispatch_interaction(APPLICATION_COMMAND, data, account, channel, loc)

    async def click(
        self,
        message: Message | int,
        custom_id: str,
        *,
        user: User | Member,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Press the button ``custom_id`` on ``message`` (a stand-in Message or its id).

        Fails like the client would if the message is gone, the button does not exist, is
        disabled or is a link, or if the message is ephemeral and belongs to someone else.
        """
        msg = self._clickable(message, user)
        comp = msg.component(custom_id)
        if comp.get("type") != 2:
            raise StandInError(
                f"{custom_id!r} is not a button (component type {comp.get('type')}); use select()"
            )
        if comp.get("style") in (5, 6):
            raise StandInError(
                f"{custom_id!r} is a link/premium button; clicking it sends no interaction"
            )
        if comp.get("disabled"):
            raise StandInError(f"button {custom_id!r} is disabled")
        return self._use_component(msg, comp, user, locale, {})

    async def select(
        self,
        message: Message | int,
        custom_id: str,
        values: Sequence[Any],
        *,
        user: User | Member,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Choose ``values`` in the select menu ``custom_id``.

        String selects take option values; user/role/channel/mentionable selects take stand-in
        objects (sent as ids with ``resolved`` data).
        """
        msg = self._clickable(message, user)
        comp = msg.component(custom_id)
        kind = comp.get("type")
        if kind not in (3, 5, 6, 7, 8):
            raise StandInError(f"{custom_id!r} is not a select menu (component type {kind})")
        if comp.get("disabled"):
            raise StandInError(f"select {custom_id!r} is disabled")
        low, high = comp.get("min_values", 1), comp.get("max_values", 1)
        if not low <= len(values) <= high:
            raise StandInError(
                f"select {custom_id!r} takes {low}..{high} values, got {len(values)}"
            )
        data: dict[str, Any] = {}
        if kind == 3:
            offered = [o.get("value") for o in comp.get("options") or []]
            bad = [v for v in values if v not in offered]
            if bad:
                raise StandInError(
                    f"select {custom_id!r} offers {offered}; {bad} are not among them"
                )
            data["values"] = list(values)
        else:
            resolver = self._value_resolver(msg.channel)
            resolved: dict[str, dict[str, Any]] = {}
            ids = []
            for value in values:
                opt_type = {5: USER, 6: ROLE, 7: MENTIONABLE, 8: CHANNEL}[kind]
                wire, fragment = resolver(opt_type, value, {})
                ids.append(wire)
                for key, items in fragment.items():
                    resolved.setdefault(key, {}).update(items)
            data["values"] = ids
            data["resolved"] = resolved
        return self._use_component(msg, comp, user, locale, data)

    async def submit_modal(
        self,
        record: InteractionRecord,
        values: Mapping[str, str | Sequence[str]],
        *,
        user: User | Member | None = None,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Fill in and submit the modal the bot opened in answer to ``record``.

        ``values`` maps text-input custom_ids to text (select custom_ids to lists of values).
        Required inputs left out raise :class:`StandInError`.
        """
        if not record.callbacks.items or record.callbacks.items[0].type != MODAL:
            raise StandInError("the bot did not answer this interaction with a modal")
        modal = record.callbacks.items[0].data
        remaining = dict(values)

        def fill(comp: dict[str, Any]) -> dict[str, Any] | None:
            kind = comp.get("type")
            if kind == 1:
                inner = [
                    c for c in (fill(x) for x in comp.get("components") or []) if c is not None
                ]
                return {"type": 1, "id": comp.get("id"), "components": inner}
            if kind == 18:
                inner_comp = fill(comp["component"])
                return {"type": 18, "id": comp.get("id"), "component": inner_comp}
            custom_id = comp.get("custom_id")
            if custom_id is None:
                return {"type": kind, "id": comp.get("id")}
            given = remaining.pop(custom_id, None)
            if kind == 4:
                text = "" if given is None else str(given)
                if comp.get("required", True) and not text:
                    raise StandInError(f"modal input {custom_id!r} is required")
                return {"type": 4, "id": comp.get("id"), "custom_id": custom_id, "value": text}
            chosen = [] if given is None else [given] if isinstance(given, str) else list(given)
            return {"type": kind, "id": comp.get("id"), "custom_id": custom_id, "values": chosen}

        components = [c for c in (fill(c) for c in modal.get("components") or []) if c is not None]
        if remaining:
            raise StandInError(f"the modal has no inputs {sorted(remaining)}")
        data = {"custom_id": modal.get("custom_id"), "components": components}
        account = self._user_of(user) if user is not None else record.user
        loc = normalize_locale(locale) if locale else record.locale
        channel = record.channel or self.world.dm_channel(account)
        return self._dispatch_interaction(
            MODAL_SUBMIT, data, account, channel, loc, message=record.source_message
        )

    async def send_interaction(
        self,
        type: int,
        data: dict[str, Any],
        *,
        user: User | Member,
        channel: Channel | None = None,
        locale: str | None = None,
        message: Message | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> InteractionRecord:
        """The raw escape hatch: dispatch an interaction of ``type`` with ``data`` verbatim.

        ``extra`` is merged into the top-level INTERACTION_CREATE payload last (a key set to
        None is removed), e.g. to drop ``member`` or fake ``guild_locale``.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.world.dm_channel(account)
        loc = normalize_locale(locale) if locale else account.locale
        return self._dispatch_interaction(
            type, data, account, channel, loc, message=message, extra=extra
        )

    def interaction(self, interaction_id: int) -> InteractionRecord:
        """The record of a dispatched interaction by id."""
        return self.interactions[interaction_id]

    # ---------------------------------------------------------------- building the payloads

    def _user_of(self, user: User | Member) -> User:
        return user.user if isinstance(user, Member) else user

    def _find(
        self, path: str, kind: int, channel: Channel, locale: str, *, allow_group: bool = False
    ) -> ResolvedCommand:
        candidates: list[tuple[int | None, Sequence[dict[str, Any]]]] = []
        if channel.guild is not None:
            candidates.append((channel.guild.id, self.app.commands.get(channel.guild.id, [])))
        candidates.append((None, self.app.commands.get(None, [])))
        if allow_group:
            for guild_id, cmds in candidates:
                for cmd in cmds:
                    if cmd["name"] == path and int(cmd.get("type", 1)) == kind:
                        return ResolvedCommand(cmd, guild_id, [])
        return find_command(candidates, path, kind=kind, locale=locale)

    def _canonical_option(self, resolved: ResolvedCommand, name: str, locale: str) -> str:
        for opt in resolved.leaf.get("options") or []:
            if name == opt["name"] or name == (opt.get("name_localizations") or {}).get(locale):
                return str(opt["name"])
        return name

    def _check_available(
        self, resolved: ResolvedCommand, user: User, channel: Channel, enforce_permissions: bool
    ) -> None:
        cmd = resolved.command
        check_offered(self.world, cmd, resolved.guild_id is not None, user, channel)
        guild = channel.guild
        if guild is None:
            return
        member = guild.members.get(user.id)
        if member is None:
            raise StandInError(
                f"{user.name!r} is not a member of {guild.name!r}; add_member() first"
            )
        if not enforce_permissions:
            return
        perms = member.permissions_in(channel)
        if not perms & _USE_APPLICATION_COMMANDS:
            raise CommandNotAvailableError(
                f"{user.name!r} lacks Use Application Commands in #{channel.name}"
            )
        required = cmd.get("default_member_permissions")
        if required not in (None, ""):
            needed = int(required)
            if perms & needed != needed:
                raise CommandNotAvailableError(
                    f"Discord hides {cmd['name']!r} from {user.name!r}: "
                    f"default_member_permissions={needed} but they have {perms} in "
                    f"#{channel.name} (pass enforce_permissions=False to force)"
                )

    def _value_resolver(
        self, channel: Channel
    ) -> Callable[[int, Any, Mapping[str, Any]], tuple[Any, dict[str, dict[str, Any]]]]:
        guild = channel.guild

        def resolve(
            kind: int, value: Any, _spec: Mapping[str, Any]
        ) -> tuple[Any, dict[str, dict[str, Any]]]:
            if isinstance(value, Member):
                value = value.user
            if isinstance(value, User):
                fragment: dict[str, dict[str, Any]] = {"users": {str(value.id): value.to_json()}}
                member = guild.members.get(value.id) if guild else None
                if member is not None:
                    fragment["members"] = {
                        str(value.id): member.to_json(with_user=False)
                        | {"permissions": str(member.permissions_in(channel))}
                    }
                return str(value.id), fragment
            if isinstance(value, Role):
                return str(value.id), {"roles": {str(value.id): value.to_json()}}
            if isinstance(value, Channel):
                info = {"id": str(value.id), "name": value.name, "type": value.type, "flags": 0}
                if value.guild is not None:
                    info["guild_id"] = str(value.guild.id)
                    bot = value.guild.members.get(self.app.bot_user.id)
                    info["permissions"] = str(value.permissions_for(bot) if bot else 0)
                return str(value.id), {"channels": {str(value.id): info}}
            if isinstance(value, Upload) and kind == ATTACHMENT:
                att = self.store.make_attachment(
                    channel, value.filename, value.data, value.content_type
                )
                return str(att.id), {
                    "attachments": {str(att.id): att.to_json() | {"ephemeral": True}}
                }
            raise StandInError(f"cannot send {value!r} as an option/select value")

        return resolve

    def _command_data(
        self,
        resolved: ResolvedCommand,
        options: list[dict[str, Any]],
        resolved_data: dict[str, Any],
    ) -> dict[str, Any]:
        cmd = resolved.command
        data: dict[str, Any] = {
            "id": str(cmd["id"]),
            "name": cmd["name"],
            "type": int(cmd.get("type", CHAT_INPUT)),
        }
        if options:
            data["options"] = options
        if resolved_data:
            data["resolved"] = resolved_data
        if resolved.guild_id is not None:
            # discord.py looks guild commands up by data.guild_id; global ones have none.
            data["guild_id"] = str(resolved.guild_id)
        return data

    def _clickable(self, message: Message | int, user: User | Member) -> Message:
        msg = self.store.messages_by_id.get(message) if isinstance(message, int) else message
        if msg is None:
            raise StandInError(f"no message {message} in the stand-in")
        if msg.deleted:
            raise StandInError(f"message {msg.id} was deleted")
        if msg.ephemeral and msg.interaction_metadata is not None:
            owner = int(msg.interaction_metadata["user"]["id"])
            if owner != self._user_of(user).id:
                raise StandInError(
                    f"message {msg.id} is ephemeral and only visible to user {owner}"
                )
        return msg

    def _use_component(
        self,
        msg: Message,
        comp: dict[str, Any],
        user: User | Member,
        locale: str | None,
        extra: dict[str, Any],
    ) -> InteractionRecord:
        """Dispatch what a click on, or a choice in, ``comp`` sends (``extra``: the values)."""
        data: dict[str, Any] = {"custom_id": comp["custom_id"], "component_type": comp["type"]}
        if isinstance(comp.get("id"), int):
            data["id"] = comp["id"]
        account = self._user_of(user)
        loc = normalize_locale(locale or account.locale)
        return self._dispatch_interaction(
            MESSAGE_COMPONENT, data | extra, account, msg.channel, loc, message=msg
        )

    def _dispatch_interaction(
        self,
        itype: int,
        data: dict[str, Any],
        user: User,
        channel: Channel,
        locale: str,
        *,
        message: Message | None = None,
        app_permissions: PermissionsLike | None = None,
        member_permissions: PermissionsLike | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> InteractionRecord:
        guild = channel.guild
        session = self.gateway.session_for(guild.id if guild else None)
        if session is None:
            raise NotConnectedError(
                "no bot gateway session could receive this interaction (has the bot IDENTIFYed?)\n"
                + self.diagnostics()
            )
        iid = self.world.snowflakes.next()
        token = "standin-" + secrets.token_urlsafe(32)
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app.id),
            "type": itype,
            "data": data,
            "token": token,
            "version": 1,
            "locale": locale,
            "channel_id": str(channel.id),
            "channel": channel.to_json(),
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": self.max_file_size,
        }
        reach = reach_permissions(self.world, channel)
        if guild is not None:
            member = guild.members.get(user.id)
            if member is None:
                raise StandInError(
                    f"{user.name!r} is not a member of {guild.name!r}; add_member() first"
                )
            perms = (
                permission_value(member_permissions)
                if member_permissions is not None
                else member.permissions_in(channel)
            )
            if app_permissions is not None:
                app_perms = permission_value(app_permissions)
            elif installed_in(self.world, guild):
                app_perms = channel.permissions_for(guild.members[self.app.bot_user.id])
            else:
                assert reach is not None
                app_perms = reach
            payload |= {
                "guild_id": str(guild.id),
                "guild": guild.partial_json(),
                "guild_locale": guild.locale,
                "member": member.to_json() | {"permissions": str(perms)},
                "app_permissions": str(app_perms),
            }
            payload["channel"]["permissions"] = str(perms)
        else:
            default = DEFAULT_BOT_PERMISSIONS if reach is None else reach
            payload |= {
                "user": user.to_json(),
                "app_permissions": str(
                    permission_value(app_permissions) if app_permissions is not None else default
                ),
            }
        # A press on a message answers to the install that made the message.
        made_by = (message.interaction_metadata or {}) if message is not None else {}
        payload |= {
            "context": context_of(channel),
            "authorizing_integration_owners": made_by.get("authorizing_integration_owners")
            or owners(self.world, user, channel),
        }
        if message is not None:
            payload["message"] = message.to_json()
        for key, value in (extra or {}).items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        record = InteractionRecord(
            id=iid,
            token=token,
            type=itype,
            payload=payload,
            user=user,
            channel=channel,
            guild=guild,
            locale=locale,
            dispatched_at=time.perf_counter(),
            application=self.app,
            guard=self.guard,
            source_message=message,
        )
        self.interactions[iid] = record
        self.interactions_by_token[token] = record
        self.interaction_log.append(record)
        session.dispatch("INTERACTION_CREATE", payload)
        return record
