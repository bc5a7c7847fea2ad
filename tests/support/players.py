"""Driving Krigbot through the Discord stand-in the way players do, and reading what they see."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krigbot.engine import Game, Round, Rules
from krigbot.sessions import random_seed
from tests.standin.messages import LOADING, walk_components
from tests.standin.records import InteractionResponse

if TYPE_CHECKING:
    from krigbot.bot import KrigBot
    from krigbot.storage import GameRow
    from tests.standin import (
        Channel,
        DiscordStandIn,
        InteractionRecord,
        Message,
        MessageRevision,
        User,
    )

    Shown = Message | MessageRevision | InteractionResponse

# Discord's button styles as the API numbers them.
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4
# Interaction callback types.
CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE = 4, 5, 6, 7

_GAME_IN_BUTTON = re.compile(r"krig:(?:accept|decline|flip):(\d+)")
_MENTION = re.compile(r"<@[!&]?\d+>")


class Clock:
    """A clock the tests move by hand, installed as the game service's clock."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        """Move the clock forward (``hours=25``, ``minutes=6``...)."""
        self.now += timedelta(**delta)


# The tasks discord.py runs each slash command and button press in (app_commands/tree.py,
# ui/view.py, ui/modal.py of discord.py 2.7), the bot's own start-up messages (bot.py), and
# the greying of buttons that can do nothing any more (adapter/tables.py), what a
# tournament's change shows (cogs/tournament.py: its messages, threads and tables), and what
# follows a channel's deletion (discord.py's task for the event).
_HANDLER_TASKS = (
    "CommandTree-invoker",
    "discord-ui-view-dispatch-",
    "discord-ui-dynamic-item-",
    "discord-ui-modal-dispatch-",
    "krig-announce-matches",
    "krig-tell-unreadable-",
    "krig-tell-endings",
    "krig-retire-",
    "krig-tournament-",
    "krig-tournament_threads-",
    "discord.py: on_guild_channel_delete",
)
SETTLE_WITHIN = 30.0
"""Seconds the bot may take to finish them before a test fails (pictures on a loaded machine)."""


def bot_busy() -> list[asyncio.Task[Any]]:
    """Return the tasks in which the bot is still handling an interaction or start-up message."""
    return [
        task
        for task in asyncio.all_tasks()
        if task is not asyncio.current_task() and task.get_name().startswith(_HANDLER_TASKS)
    ]


async def settled() -> None:
    """Wait until the bot has finished with every interaction and start-up message.

    A message reaches the stand-in while the bot's handler is still running: what the bot does
    once its message is out (remembering a challenge's or a table's message) may not have
    happened yet. Wait for that before reading the database.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_WITHIN
    # A handler may start more of them as it ends (greying the buttons its message replaced).
    while handlers := bot_busy():
        _, pending = await asyncio.wait(handlers, timeout=max(0.0, deadline - loop.time()))
        assert not pending, f"the bot is still busy with {len(pending)} tasks"


async def answer_of(
    standin: DiscordStandIn, rec: InteractionRecord, within: float = 5.0, *, shows: bool = False
) -> InteractionResponse:
    """Return the bot's answer to an interaction as the user ends up seeing it.

    The bot defers when its work runs close to Discord's deadline, as it may whenever the machine
    is busy; the answer is then the message that follows the deferral (a follow-up, or the
    pressed message edited), given here as the answer that would have come without it. Tests of
    deferring itself read the record's own callbacks. ``shows``: the interaction is sure to show
    something (a flip), so wait for that rather than for this process's bot to finish, as a
    bot in another process needs.
    """
    first = await rec.response(timeout=within)
    if not first.deferred:
        return first
    if first.type == DEFERRED_CHANNEL_MESSAGE:  # always filled by a follow-up
        await rec.followup(timeout=SETTLE_WITHIN)
    else:
        # An edit, a follow-up, or (a press that changed nothing) neither: by the time this
        # process's bot has settled it has done what it does.
        waits = {
            asyncio.ensure_future(rec.original_edit(timeout=SETTLE_WITHIN)),
            asyncio.ensure_future(rec.followup(timeout=SETTLE_WITHIN)),
        }
        if not shows:
            waits.add(asyncio.ensure_future(settled()))
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiting in pending:
            waiting.cancel()
        for shown in done:
            shown.result()  # a timeout, or the bot's crash, fails the test here
    pressed = rec.original or rec.source_message
    if first.type == DEFERRED_UPDATE and rec.original_edits.items and pressed is not None:
        return InteractionResponse(
            UPDATE_MESSAGE,
            _data(rec.original_edits.items[0]),
            pressed.files,
            first.dispatched_at,
            first.received_at,
            pressed,
        )
    if rec.followups.items:
        message = rec.followups.items[0]
        data = _data(message)
        if message.deleted:
            # The bot removed its "thinking" message to answer elsewhere; on Discord the follow-up
            # is then a message of its own, with the flags the bot sent (the stand-in fills the
            # removed one instead).
            (sent, *_) = standin.requests_matching("POST", f"/webhooks/.*/{rec.token}$")
            data["flags"] = int(sent.json.get("flags") or 0)
        return InteractionResponse(
            CHANNEL_MESSAGE, data, message.files, first.dispatched_at, first.received_at, message
        )
    return first


def _data(shown: Message | MessageRevision) -> dict[str, Any]:
    return {
        "content": shown.content,
        "embeds": list(shown.embeds),
        "components": list(shown.components),
        "flags": shown.flags,
        "allowed_mentions": shown.allowed_mentions,
    }


def waited_for_a_core() -> float:
    """Return the seconds this thread has stood ready to run while other threads had the cores.

    Linux counts it per thread (the second figure of ``/proc/thread-self/schedstat``); the
    thread is the event loop's, which the bot and the stand-in share.
    """
    return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9


@dataclass
class Timed:
    """An interaction, and how long its event loop had waited for a core when it was sent."""

    rec: InteractionRecord
    waited_at_dispatch: float
    waited_at_response: float | None = None
    recorded_at: float | None = None
    """When the stand-in recorded the response (``perf_counter``), a little after it came."""

    @property
    def own_latency(self) -> float:
        """Return the seconds to its first response, less those the machine gave to others.

        Only waits that surely fell before the response came count: none from the moments
        between its arrival and its recording.
        """
        latency = self.rec.latency
        first = self.rec.callbacks.items[0]
        assert latency is not None
        assert self.waited_at_response is not None
        assert self.recorded_at is not None
        waited = self.waited_at_response - self.waited_at_dispatch
        return latency - max(0.0, waited - (self.recorded_at - first.received_at))


def timed(rec: InteractionRecord) -> Timed:
    """Start counting the time the machine gives to others until the first response arrives."""
    stamp = Timed(rec, waited_for_a_core())

    def arrived(_response: object) -> bool:
        # Called as the stand-in records the response, on the same thread.
        if stamp.waited_at_response is None:
            stamp.waited_at_response = waited_for_a_core()
            stamp.recorded_at = time.perf_counter()
        return True

    rec.callbacks.future(0, arrived)
    return stamp


class ChosenSeeds:
    """The seeds of a test's deals, injected as the game service's seed source (as the clock is).

    Random until the test chooses them; then every deal takes the next chosen seed, in order,
    challenges and the next games of matches alike, so a test knows every card in advance.
    """

    def __init__(self) -> None:
        self._chosen: list[int] | None = None

    def __call__(self) -> int:
        if self._chosen is None:
            return random_seed()
        return self._chosen.pop(0)

    def fix(self, *seeds: int) -> None:
        """Deal the next games from ``seeds`` (in order)."""
        self._chosen = [*(self._chosen or ()), *seeds]


def replay(rules: Rules, seed: int, rounds: int) -> tuple[Game, list[Round]]:
    """Return the engine's own game from a seed after ``rounds`` rounds, and those rounds."""
    game = Game.new(rules, seed)
    played = [game.play_round() for _ in range(rounds)]
    return game, played


def find_seed(rules: Rules, wanted: Any, *, tries: int = 5000) -> int:
    """Return the first seed whose first round satisfies ``wanted(round)``."""
    for seed in range(tries):
        if wanted(Game.new(rules, seed).play_round()):
            return seed
    raise AssertionError("no seed found")


# ------------------------------------------------------------------------------ reading


def embed_text(embed: Mapping[str, Any]) -> str:
    """Return everything an embed shows as one text: title, description, fields, footer."""
    parts = [embed.get("title") or "", embed.get("description") or ""]
    for field in embed.get("fields") or []:
        parts += [field.get("name") or "", field.get("value") or ""]
    parts.append((embed.get("footer") or {}).get("text") or "")
    return "\n".join(part for part in parts if part)


def text_of(shown: Shown) -> str:
    """Return a message's content and embeds as one text."""
    return "\n".join([shown.content or "", *(embed_text(e) for e in shown.embeds)]).strip()


def first_shown(message: Message) -> MessageRevision:
    """Return the first state of a message that showed something (not a "thinking" placeholder)."""
    return next(state for state in message.history if not state.flags & LOADING)


def visible(text: str) -> str:
    """Return text as Discord renders it: markdown escapes and zero-width spaces gone."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u200b", "")


def live_mentions(text: str) -> list[str]:
    """Return the mention tokens Discord would turn into pings or pills."""
    return _MENTION.findall(text)


def buttons(shown: Shown) -> dict[str, dict[str, Any]]:
    """Return the buttons of a message by custom id."""
    return {
        comp["custom_id"]: comp
        for comp in walk_components(list(shown.components))
        if comp.get("type") == 2 and "custom_id" in comp
    }


def game_id_of(shown: Shown) -> int:
    """Return the game id carried by the message's buttons."""
    for custom_id in buttons(shown):
        match = _GAME_IN_BUTTON.match(custom_id)
        if match:
            return int(match.group(1))
    raise AssertionError(f"no game button on the message: {list(buttons(shown))}")


def enabled_buttons(shown: Shown) -> list[str]:
    """Return the custom ids of the buttons of a message that can be pressed."""
    return [custom_id for custom_id, b in buttons(shown).items() if not b.get("disabled")]


def flip_button(shown: Shown) -> str:
    """Return the custom id of the message's Flip button."""
    (custom_id,) = [c for c in buttons(shown) if c.startswith("krig:flip:")]
    return custom_id


def public_messages(standin: DiscordStandIn, channel: Channel) -> list[Message]:
    """Return what everyone in the channel sees."""
    return standin.messages(channel, include_ephemeral=False)


# ------------------------------------------------------------------------------ playing


@dataclass
class Table:
    """A game that has been accepted by everyone: its id and the table message."""

    game_id: int
    message: Message


async def challenge(
    standin: DiscordStandIn,
    channel: Channel,
    challenger: User,
    *opponents: User,
    **options: Any,
) -> InteractionRecord:
    """Run ``/krig start`` with one to three opponents and the given options."""
    names = ("opponent", "opponent2", "opponent3")
    given = dict(zip(names, opponents, strict=False)) | options
    return await standin.slash("krig start", user=challenger, channel=channel, options=given)


async def challenge_message(
    standin: DiscordStandIn, channel: Channel, challenger: User, *opponents: User, **options: Any
) -> Message:
    """Post a challenge and return the public message holding it."""
    response = await answer_of(
        standin, await challenge(standin, channel, challenger, *opponents, **options)
    )
    assert not response.ephemeral, text_of(response)
    assert response.message is not None
    return response.message


async def start_game(
    standin: DiscordStandIn, channel: Channel, challenger: User, *opponents: User, **options: Any
) -> Table:
    """Challenge, have every opponent accept, and return the dealt table."""
    message = await challenge_message(standin, channel, challenger, *opponents, **options)
    game_id = game_id_of(message)
    for opponent in opponents:
        response = await answer_of(
            standin, await standin.click(message, f"krig:accept:{game_id}", user=opponent)
        )
        assert response.type == UPDATE_MESSAGE, text_of(response)
    return Table(game_id, message)


async def flip(
    standin: DiscordStandIn, channel: Channel, user: User, count: int | None = None
) -> InteractionResponse:
    """Run ``/flip`` (with ``count`` if given) and return the bot's answer."""
    options = {} if count is None else {"count": count}
    return await answer_of(
        standin, await standin.slash("flip", user=user, channel=channel, options=options)
    )


async def press(
    standin: DiscordStandIn, message: Message, custom_id: str, user: User
) -> InteractionResponse:
    """Press a button and return the bot's answer."""
    return await answer_of(standin, await standin.click(message, custom_id, user=user))


async def forged_press(
    standin: DiscordStandIn, message: Message, custom_id: str, user: User
) -> InteractionResponse:
    """Press a button even if it is grey, as a forged client can, and return the bot's answer."""
    data = {"custom_id": custom_id, "component_type": 2}
    rec = await standin.send_interaction(
        3, data, user=user, channel=message.channel, message=message
    )
    return await answer_of(standin, rec)


async def game_row(bot: KrigBot, game_id: int) -> GameRow:
    """Return the stored game."""
    row = await bot.storage.games.get_game(game_id)
    assert row is not None
    return row
