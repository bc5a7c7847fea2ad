"""Driving Krigbot through the Discord stand-in the way players do, and reading what they see."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from krigbot.engine import Game, Round, Rules
from krigbot.sessions import random_seed
from tests.standin.messages import walk_components

if TYPE_CHECKING:
    from krigbot.bot import KrigBot
    from krigbot.storage import GameRow
    from tests.standin import (
        Channel,
        DiscordStandIn,
        InteractionRecord,
        InteractionResponse,
        Message,
        MessageRevision,
        User,
    )

    Shown = Message | MessageRevision | InteractionResponse

# Discord's button styles as the API numbers them.
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4
# Interaction callback types.
DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE = 5, 6, 7

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
# the greying of buttons that can do nothing any more (cogs/tables.py).
_HANDLER_TASKS = (
    "CommandTree-invoker",
    "discord-ui-view-dispatch-",
    "discord-ui-dynamic-item-",
    "discord-ui-modal-dispatch-",
    "krig-announce-matches",
    "krig-tell-unreadable-",
    "krig-tell-endings",
    "krig-retire-",
)
SETTLE_WITHIN = 10.0
"""Seconds the bot may take to finish them before a test fails."""


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
    response = await (
        await challenge(standin, channel, challenger, *opponents, **options)
    ).response()
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
        response = await (
            await standin.click(message, f"krig:accept:{game_id}", user=opponent)
        ).response()
        assert response.type == UPDATE_MESSAGE, text_of(response)
    return Table(game_id, message)


async def flip(
    standin: DiscordStandIn, channel: Channel, user: User, count: int | None = None
) -> InteractionResponse:
    """Run ``/flip`` (with ``count`` if given) and return the bot's answer."""
    options = {} if count is None else {"count": count}
    rec = await standin.slash("flip", user=user, channel=channel, options=options)
    return await rec.response()


async def press(
    standin: DiscordStandIn, message: Message, custom_id: str, user: User
) -> InteractionResponse:
    """Press a button and return the bot's answer."""
    return await (await standin.click(message, custom_id, user=user)).response()


async def forged_press(
    standin: DiscordStandIn, message: Message, custom_id: str, user: User
) -> InteractionResponse:
    """Press a button even if it is grey, as a forged client can, and return the bot's answer."""
    data = {"custom_id": custom_id, "component_type": 2}
    rec = await standin.send_interaction(
        3, data, user=user, channel=message.channel, message=message
    )
    return await rec.response()


async def game_row(bot: KrigBot, game_id: int) -> GameRow:
    """Return the stored game."""
    row = await bot.storage.get_game(game_id)
    assert row is not None
    return row
