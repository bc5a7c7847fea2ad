"""A channel's game messages in the order of their changes, and the one whose buttons work.

Players find a game at the bottom of its channel. Every action that changes what the channel
shows of its game (a flip, a press, an accept, a forfeit, a finish, a challenge) takes the
channel's *turn* before it commits anything and keeps it until its message is on Discord, so
messages appear in the order their changes were committed and nothing shows a round after the
message that ended the game. The newest of them is the channel's *live* message; when another
takes its place, its buttons go grey.

Discord wants a first response within 3 seconds. An action that cannot get the turn in time
must still answer without putting a message out of order: a button press defers as an edit of
its message (which adds nothing to the channel), a command defers privately and, once its turn
comes, puts its public message at the bottom.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal

import discord
from discord.http import handle_message_parameters
from discord.webhook.async_ import async_context

from krigbot.adapter import surfaces
from krigbot.adapter.players import channel_of
from krigbot.adapter.replies import (
    NO_MENTIONS,
    Reply,
    commands_of,
    count,
    defer_in,
    discord_lost,
    refuse,
    user_lang,
)
from krigbot.adapter.surfaces import Surfaces, reaches
from krigbot.i18n import t
from krigbot.sessions import Refusal
from krigbot.storage import StorageError

log = logging.getLogger(__name__)

RETIRING_AT_ONCE = 4
"""How many greying edits are under way at once (they wait behind interaction answers)."""

Edit = Callable[..., Awaitable[Any]]
Deferral = Literal["", "public", "update", "aside"]


def greyed(view: discord.ui.View) -> discord.ui.View:
    """Return the view with every button disabled (the same buttons, so they read the same)."""
    for item in view.children:
        target = item.item if isinstance(item, discord.ui.DynamicItem) else item
        if isinstance(target, discord.ui.Button | discord.ui.Select):
            target.disabled = True
    return view


def has_buttons(view: discord.ui.View | None) -> bool:
    """Tell whether a view has anything that can be pressed."""
    if view is None:
        return False
    for item in view.children:
        target = item.item if isinstance(item, discord.ui.DynamicItem) else item
        if not getattr(target, "disabled", False):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Buttons:
    """A message's buttons as plain values: what greying them needs, without their view.

    A live table is kept for as long as its game runs, idle or not; a view (its items, their
    components, a future) costs about four times these few tuples. Greyed, the buttons keep
    their custom ids, so a forged press still reaches their kind's handler (registered as
    dynamic items), which refuses it.
    """

    buttons: tuple[tuple[discord.ButtonStyle, str | None, str | None, str | None, Any], ...]
    """Each button's style, label, custom id, link and emoji, in the view's order."""
    rows: tuple[int | None, ...]

    @classmethod
    def of(cls, view: discord.ui.View) -> Buttons | discord.ui.View:
        """Return a view's buttons as values; the view itself if it holds anything else."""
        buttons = []
        rows = []
        for item in view.children:
            target = item.item if isinstance(item, discord.ui.DynamicItem) else item
            if type(target) is not discord.ui.Button or target.sku_id is not None:
                return view
            buttons.append((target.style, target.label, target.custom_id, target.url, target.emoji))
            rows.append(item.row)
        return cls(tuple(buttons), tuple(rows))

    def greyed(self) -> discord.ui.View:
        """Return a view of the same buttons, disabled (finished: discord.py keeps none of it)."""
        view = discord.ui.View(timeout=None)
        for (style, label, custom_id, url, emoji), row in zip(self.buttons, self.rows, strict=True):
            button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
                style=style,
                label=label,
                custom_id=custom_id,
                url=url,
                emoji=emoji,
                row=row,
                disabled=True,
            )
            view.add_item(button)
        view.stop()
        return view


@dataclass(eq=False, slots=True)
class Shown:
    """A public message whose buttons work, and how to edit it once they no longer do."""

    message_id: int
    view: discord.ui.View | Buttons
    edit: Edit
    retired: Callable[[], dict[str, Any]] | None = None
    """What else the message must say once it is superseded (a Steal War table's countdown)."""
    until: float | None = None
    """Where only its interaction reaches it: the ``time.monotonic()`` its edits stop working."""


@dataclass(frozen=True, slots=True)
class _Token:
    """What editing a message through its interaction needs: the interaction's webhook."""

    application_id: int
    token: str
    until: float
    """The ``time.monotonic()`` past which the token is not used (see ``TOKEN_SECONDS``)."""

    async def edit(
        self, client: discord.Client, message_id: int, original: bool, **changes: Any
    ) -> None:
        """Edit a message of the interaction: its response (``original``) or a follow-up.

        As ``Interaction.edit_original_response`` and ``Interaction.followup.edit_message``
        do, from the token alone: a live table keeps these few bytes, not the interaction.
        """
        if not original:
            webhook = discord.Webhook.partial(self.application_id, self.token, client=client)
            await webhook.edit_message(message_id, **changes)
            return
        state = client._connection  # discord.py's own call, without an Interaction
        http = state.http
        with handle_message_parameters(
            **changes, previous_allowed_mentions=state.allowed_mentions
        ) as params:
            await async_context.get().edit_original_interaction_response(
                self.application_id,
                self.token,
                session=http._HTTPClient__session,  # type: ignore[attr-defined]
                proxy=http.proxy,
                proxy_auth=http.proxy_auth,
                payload=params.payload,
                multipart=params.multipart,
                files=params.files,
            )
        view = changes.get("view")
        if view and not view.is_finished() and view.is_dispatchable():
            state.store_view(view, message_id)


def editor(
    client: discord.Client,
    channel_id: int,
    message_id: int,
    interaction: discord.Interaction[Any] | None = None,
    *,
    original: bool = True,
) -> Edit:
    """Return a function that edits a message: through its interaction's token while it lasts.

    ``original`` says the message is the interaction's own (its response, or the message whose
    button was pressed); otherwise it is one of its follow-ups. Interactions' tokens do not count
    against the channel's rate limit; later edits use the bot's own token where it reaches (see
    ``surfaces``), and elsewhere nothing can edit the message any more.
    """
    own = interaction is None or reaches(interaction)
    # Only the token is kept, not the interaction (its payload, its member, its message: about
    # 5 KiB), so a live table of an idle game costs little.
    token = (
        None
        if interaction is None
        else _Token(
            interaction.application_id,
            interaction.token,
            time.monotonic() + surfaces.TOKEN_SECONDS,
        )
    )
    return _Editor(client, channel_id, message_id, token, original=original, own=own)


@dataclass(slots=True, eq=False)
class _Editor:
    """What :func:`editor` returns: one object, not a closure and its cells, since every table
    keeps one until it is greyed, and under load thousands wait to be (the collector walks
    each object they hold)."""

    client: discord.Client
    channel_id: int
    message_id: int
    token: _Token | None
    _: KW_ONLY
    original: bool
    own: bool

    async def __call__(self, **changes: Any) -> None:
        changes.setdefault("allowed_mentions", NO_MENTIONS)
        token, message_id = self.token, self.message_id
        if token is not None and time.monotonic() < token.until:
            try:
                await token.edit(self.client, message_id, self.original, **changes)
                return
            except discord.HTTPException as exc:
                if not self.own:
                    raise
                # The answer was shown with the bot's token instead (Discord refused it), or
                # the token is gone: the bot's own token can still edit the message.
                log.info("editing message %s through its interaction failed: %s", message_id, exc)
        if not self.own:
            # Its buttons are checked when pressed: a press shows the game as it stands.
            log.info("message %s is out of reach since its interaction expired", message_id)
            return
        channel = self.client.get_partial_messageable(self.channel_id)
        await channel.get_partial_message(message_id).edit(**changes)


class Tables:
    """Every channel's turn and live message."""

    def __init__(self) -> None:
        self._turns: dict[int, asyncio.Lock] = {}
        self._live: dict[int, Shown] = {}
        self._asides: dict[int, list[Shown]] = {}
        self._greying: collections.deque[tuple[Shown, dict[str, Any]]] = collections.deque()
        """Messages to grey, each with its changes, oldest first."""
        self._greyers = 0
        self._retiring: set[asyncio.Task[None]] = set()
        self._answering = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._counting = _Answering(self)
        self.surfaces = Surfaces()
        """The interactions of chats the bot's own token does not reach (for follow-ups)."""
        self._owed: dict[int, Callable[[], Awaitable[str | None]]] = {}
        self.rounds: dict[int, int] = {}
        """Game id -> the round a table reply of this process shows, or is on its way to show."""

    def turn(self, channel_id: int) -> asyncio.Lock:
        """Return the lock an action holds from before its commit until its message is out."""
        lock = self._turns.get(channel_id)
        if lock is None:
            lock = self._turns[channel_id] = asyncio.Lock()
        return lock

    def live(self, channel_id: int) -> Shown | None:
        """Return the channel's live message, if this process knows one."""
        return self._live.get(channel_id)

    def show(self, channel_id: int, shown: Shown) -> None:
        """Make a message the channel's live one; the one it replaces goes grey."""
        previous = self._live.get(channel_id)
        if isinstance(shown.view, discord.ui.View):
            shown.view = Buttons.of(shown.view)
        self._live[channel_id] = shown
        if previous is not None and previous.message_id != shown.message_id:
            self._retire(previous)

    def changed(self, channel_id: int, message_id: int, view: discord.ui.View | None) -> None:
        """Follow an edit of a message outside an answer (autoplay, a Steal War time-out)."""
        current = self._live.get(channel_id)
        if current is None or current.message_id != message_id:
            return
        if has_buttons(view):
            assert view is not None
            current.view = Buttons.of(view)
        else:
            del self._live[channel_id]

    def forget(self, channel_id: int, message_id: int, *, grey: bool = False) -> None:
        """Stop counting a message as live (its buttons were removed, or ``grey`` them now)."""
        current = self._live.get(channel_id)
        if current is not None and current.message_id == message_id:
            del self._live[channel_id]
            if grey:
                self._retire(current)

    def owe(self, channel_id: int, note: Callable[[], Awaitable[str | None]]) -> None:
        """Have the chat's next public answer to a command say what nothing could tell it then.

        ``note`` is asked at that answer, and returns the line, or None if it is no longer
        true (the game moved on meanwhile).
        """
        self._owed[channel_id] = note

    async def say_owed(self, channel_id: int, reply: Reply) -> None:
        """Add the chat's owed line (:meth:`owe`) to ``reply`` if everyone there sees it."""
        if reply.ephemeral or reply.silent or reply.update or channel_id not in self._owed:
            return
        note = self._owed.pop(channel_id)
        try:
            text = await note()
        except StorageError as exc:
            log.info("could not tell chat %s what it missed: %s", channel_id, exc)
            return
        if text is not None:
            reply.content = text if not reply.content else f"{text}\n\n{reply.content}"

    async def edit(
        self,
        client: discord.Client,
        channel_id: int,
        message_id: int,
        own: bool,
        *,
        forget: bool = False,
        **changes: Any,
    ) -> bool:
        """Edit a game's message outside an answer; False where nothing reaches it any more.

        With the bot's own token where that reaches (``own``: see ``surfaces.own_token``);
        elsewhere the channel's live message is edited through the interaction that showed it,
        while its token lasts. ``forget``: the message is no longer live (its buttons go).
        """
        live = self._live.get(channel_id)
        if forget:
            self.forget(channel_id, message_id)
        if own:
            changes.setdefault("allowed_mentions", NO_MENTIONS)
            message = client.get_partial_messageable(channel_id).get_partial_message(message_id)
            await message.edit(**changes)
            return True
        if live is not None and live.message_id == message_id:
            await live.edit(**changes)
            return True
        log.info("message %s is out of reach outside an answer", message_id)
        return False

    def add_aside(self, game_id: int, shown: Shown) -> None:
        """Keep a message of a game whose buttons work until the game ends (a finish request,
        a forfeit's confirmation): it is greyed then, with what ``retired`` says."""
        self._asides.setdefault(game_id, []).append(shown)

    def drop_aside(self, game_id: int, message_id: int) -> Shown | None:
        """Stop keeping a message (its buttons were answered); return it if it was kept."""
        kept = self._asides.get(game_id, [])
        for shown in kept:
            if shown.message_id == message_id:
                kept.remove(shown)
                return shown
        return None

    def asides(self, game_id: int, kind: type[discord.ui.Item[Any]]) -> list[Shown]:
        """Return a game's kept messages that have buttons of a kind."""
        return [
            shown
            for shown in self._asides.get(game_id, [])
            if isinstance(shown.view, discord.ui.View)
            and any(isinstance(item, kind) for item in shown.view.children)
        ]

    def drop_asides(self, game_id: int, kind: type[discord.ui.Item[Any]]) -> list[Shown]:
        """Stop keeping a game's messages that have buttons of a kind; return them."""
        kept = self._asides.get(game_id, [])
        dropped = [
            shown
            for shown in kept
            if isinstance(shown.view, discord.ui.View)
            and any(isinstance(i, kind) for i in shown.view.children)
        ]
        self._asides[game_id] = [shown for shown in kept if shown not in dropped]
        return dropped

    def retire(self, shown: Shown, **changes: Any) -> None:
        """Grey a message's buttons now, with other changes to it."""
        self._retire(dataclasses.replace(shown, retired=lambda: changes))

    def end_game(self, game_id: int) -> None:
        """Grey the messages kept for a game that has ended, however it ended."""
        for shown in self._asides.pop(game_id, []):
            self._retire(shown)

    def _retire(self, shown: Shown) -> None:
        # What it must say is fixed now; its greyed buttons are built when it is greyed.
        changes = {} if shown.retired is None else shown.retired()
        self._greying.append((shown, changes))
        if self._greyers < RETIRING_AT_ONCE:
            self._greyers += 1
            task = asyncio.create_task(self._grey(), name="krig-retire-greying")
            self._retiring.add(task)
            task.add_done_callback(self._retiring.discard)

    async def _grey(self) -> None:
        """Grey the waiting messages, one at a time, while no answer is under way.

        A queue and a few tasks working it, not a task a message: a burst of flips leaves a
        greying behind each, and a task each would be work and memory for every one of them.
        """
        try:
            while self._greying:
                # Answers first: a burst of flips must not wait behind the greying it causes
                # (each new table greys one), which catches up once no answer is under way.
                await self._idle.wait()
                if not self._greying:
                    break
                shown, changes = self._greying.popleft()
                view = shown.view
                grey = view.greyed() if isinstance(view, Buttons) else greyed(view)
                try:
                    await shown.edit(**{"view": grey, **changes})
                except discord.HTTPException as exc:
                    # Its buttons are checked when pressed: a press on it changes nothing.
                    log.warning(
                        "could not grey the buttons of message %s: %s", shown.message_id, exc
                    )
                except Exception:
                    log.exception("could not grey the buttons of message %s", shown.message_id)
        finally:
            self._greyers -= 1

    def answering(self) -> contextlib.AbstractContextManager[None]:
        """Count an answer under way, in the block (greying waits until none is)."""
        return self._counting

    def _begin_answer(self) -> None:
        self._answering += 1
        self._idle.clear()

    def _end_answer(self) -> None:
        self._answering -= 1
        if not self._answering:
            self._idle.set()

    async def close(self) -> None:
        """Let the edits under way finish (for a clean stop)."""
        if self._retiring:
            await asyncio.wait(set(self._retiring), timeout=5)


class _Answering(contextlib.AbstractContextManager[None]):
    """What :meth:`Tables.answering` returns: one object for every answer, not a generator
    made for each."""

    __slots__ = ("_tables",)

    def __init__(self, tables: Tables) -> None:
        self._tables = tables

    def __enter__(self) -> None:
        self._tables._begin_answer()

    def __exit__(self, *_: object) -> None:
        self._tables._end_answer()


async def _acquire(lock: asyncio.Lock, deadline: float) -> bool:
    """Take the lock if it can be had by ``deadline`` (the event loop's time).

    A free lock is taken at once, even past the deadline, and without a timer: this runs for
    every answer, and a channel's turn is nearly always free. A lock that only looks free (a
    waiter has been woken and will take it) is waited for under a timeout, not a task.
    """
    if not lock.locked() and not lock._waiters:
        await lock.acquire()  # returns at once: nothing to wait for
        return True
    try:
        async with asyncio.timeout_at(deadline):
            await lock.acquire()
    except TimeoutError:
        return False
    return True


async def respond_in_turn(
    interaction: discord.Interaction[Any],
    tables: Tables,
    work: Coroutine[Any, Any, Reply],
    *,
    update: bool = False,
) -> None:
    """Run ``work`` in the channel's turn and send its reply there; answer in time regardless.

    Like ``respond()``, it defers when the work takes close to Discord's deadline; a reply
    that is public and has buttons becomes the channel's live message.
    """
    tables.surfaces.hold(interaction)
    wait = defer_in(interaction)
    with tables.answering(), commands_of(interaction):
        await _respond_in_turn(interaction, tables, work, wait, update=update)
    if reaches(interaction):  # else surfaces holds it, for follow-ups: it must stay whole
        _let_go(interaction)


def _let_go(interaction: discord.Interaction[Any]) -> None:
    """Unlink an answered interaction from its response, so that it is freed with its task.

    discord.py's interaction and its response (kept on it once asked for) point at each
    other, so each interaction, its member, user and options would wait for the garbage
    collector; under load the collector meets them still in flight and carries them into an
    older generation, where they cost a larger collection. Nothing asks for the response of
    an answered interaction (a fresh one would be made if anything did).
    """
    with contextlib.suppress(AttributeError):  # never asked for
        del interaction._cs_response  # type: ignore[attr-defined]


async def _respond_in_turn(
    interaction: discord.Interaction[Any],
    tables: Tables,
    work: Coroutine[Any, Any, Reply],
    wait: float,
    *,
    update: bool,
) -> None:
    channel_id = channel_of(interaction)
    turn = tables.turn(channel_id)
    state = _Answer(interaction, update)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    if not await _acquire(turn, deadline):
        # Out of turn: a public "thinking" message now would sit above messages still to come.
        try:
            await state.defer("update" if update else "aside")
        except BaseException:
            work.close()
            raise
        await turn.acquire()
    try:
        if not state.style and deadline <= loop.time():
            # No time to wait for the work (the bot is busy, or the interaction waited long to
            # be read): defer before it starts.
            try:
                await state.defer("update" if update else "public")
            except BaseException:
                work.close()
                raise
        # The work runs here; if it outlasts the deadline a timer defers beside it (a timer,
        # not a task for the work: this runs for every answer).
        deferring: list[asyncio.Task[None]] = []
        timer = (
            None
            if state.style
            else loop.call_at(
                deadline,
                lambda: deferring.append(
                    asyncio.ensure_future(state.defer("update" if update else "public"))
                ),
            )
        )
        try:
            reply = await work
        except Exception as exc:
            await _deferred(timer, deferring)
            await state.failed(exc)
            if isinstance(exc, Refusal):
                return
            raise
        except BaseException:
            if timer is not None:
                timer.cancel()
            for deferral in deferring:
                deferral.cancel()
            raise
        await _deferred(timer, deferring)
        await tables.say_owed(channel_id, reply)
        await state.deliver(reply, tables)
    finally:
        turn.release()


async def _deferred(timer: asyncio.TimerHandle | None, deferring: list[asyncio.Task[None]]) -> None:
    """Stop the deferral's timer; if it fired, wait for the deferral to reach Discord."""
    if timer is not None:
        timer.cancel()
    for deferral in deferring:
        await deferral


class _Answer:
    """How one interaction is being answered: deferred or not, and whether Discord forgot it."""

    def __init__(self, interaction: discord.Interaction[Any], update: bool) -> None:
        self.interaction = interaction
        self.update = update
        self.style: Deferral = ""
        self.lost: discord.HTTPException | None = None

    async def defer(self, style: Deferral) -> None:
        self.style = style
        response = self.interaction.response
        try:
            if style == "update":
                await response.defer()
            else:
                await response.defer(thinking=True, ephemeral=style == "aside")
        except discord.HTTPException as exc:
            if not discord_lost(exc):
                raise
            # Too late to answer anyone, but the work goes on: what it commits must be seen.
            self.lost = exc

    async def failed(self, error: Exception) -> None:
        """Answer a refusal (a private line); clear a public "thinking" message first."""
        if self.lost is not None:
            if isinstance(error, Refusal):
                log.info("an interaction was refused after Discord forgot it")
                count(self.interaction, "late")
            return
        if self.style == "public":
            with contextlib.suppress(discord.HTTPException):
                await self.interaction.delete_original_response()
        if isinstance(error, Refusal):
            await refuse(self.interaction, error.key, **error.fields)

    async def deliver(self, reply: Reply, tables: Tables) -> None:
        """Send the reply the way the interaction was (or was not) deferred."""
        interaction = self.interaction
        public = not reply.ephemeral and not reply.silent
        original = self.style != "aside" or not public
        if public and interaction.channel_id is not None:
            reply.sent = _and_show(reply, tables, interaction, original=original)
        if self.lost is not None:
            if reply.durable:
                await self._salvage(reply, self.lost)
            else:
                count(interaction, "late")
            return
        try:
            if not self.style:
                await reply.send(interaction)
            elif self.style == "aside" and public:
                # The private deferral says where the answer is; the answer goes public below.
                await interaction.edit_original_response(
                    content=t(user_lang(interaction), "turn.below"), allowed_mentions=NO_MENTIONS
                )
                await reply.follow_up(interaction)
            else:
                await reply.follow_up(interaction)
        except discord.HTTPException as exc:
            if not (reply.durable and discord_lost(exc)):
                raise
            await self._salvage(reply, exc)
            return
        count(interaction, "answered")

    async def _salvage(self, reply: Reply, error: discord.HTTPException) -> None:
        count(self.interaction, "late")
        log.warning(
            "Discord did not take an answer (%s %s); showing it in the channel instead",
            error.status,
            error.code,
        )
        try:
            await reply.post(self.interaction)
        except discord.HTTPException as again:
            log.warning("could not show it in the channel either: %s", again)


def _and_show(
    reply: Reply, tables: Tables, interaction: discord.Interaction[Any], *, original: bool
) -> Callable[[int], Awaitable[None]]:
    """Return the reply's ``sent`` that also makes its message the channel's live one."""
    # What it needs of the reply, not the reply: the reply holds it, and a cycle would keep
    # the reply (its embeds, its view) for the garbage collector instead of freeing it.
    after, view, aside, update = reply.sent, reply.view, reply.aside, reply.update
    channel_id = channel_of(interaction)

    async def sent(message_id: int) -> None:
        if aside:
            pass  # beside the table, which stays the live message
        elif has_buttons(view):
            assert view is not None
            until = None if reaches(interaction) else time.monotonic() + surfaces.TOKEN_SECONDS
            edit = editor(
                interaction.client, channel_id, message_id, interaction, original=original
            )
            tables.show(channel_id, Shown(message_id, view, edit, until=until))
        elif update:
            tables.forget(channel_id, message_id)
        if after is not None:
            await after(message_id)

    return sent
