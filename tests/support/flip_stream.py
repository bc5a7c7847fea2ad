"""A stream of flips at a running bot, counted round by round as the table shows them."""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tests.standin import DiscordStandIn, InteractionRecord, Message, User
from tests.support.players import buttons, text_of

if TYPE_CHECKING:
    from tests.support.players import Shown


_FLIP = re.compile(r"krig:flip:(\d+):(\d+)")


@dataclass
class Table:
    """One channel's game as the players know it."""

    channel_index: int
    game_id: int
    players: tuple[User, User]
    newest: Message
    acknowledged: int = 0
    """The newest round an answer that reached Discord showed with a Flip button."""
    over: bool = False
    """Played to its end (then its last answer has no Flip button)."""
    sent: list[InteractionRecord] = field(default_factory=list)


def round_shown(shown: Shown) -> int | None:
    """Return the round the message's Flip button is for, if it has one."""
    for custom_id in buttons(shown):
        match = _FLIP.fullmatch(custom_id)
        if match:
            return int(match.group(2))
    return None


class Countdown:
    """Counts acknowledged flips over all channels; rings at the chosen one."""

    def __init__(self, fatal: int) -> None:
        self.left = fatal
        self.rung = asyncio.Event()

    def tick(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.rung.set()


async def flip_stream(
    standin: DiscordStandIn, table: Table, turn: random.Random, countdown: Countdown
) -> None:
    """Flip in one channel, one flip after the other, until cancelled (or the game ends)."""
    channel = table.newest.channel
    while True:
        player = table.players[turn.randrange(2)]
        if turn.random() < 0.5:
            rec = await standin.slash("flip", user=player, channel=channel)
        else:
            custom_id = next(c for c in buttons(table.newest) if c.startswith("krig:flip:"))
            rec = await standin.click(table.newest, custom_id, user=player)
        table.sent.append(rec)
        shown = await public_answer(rec, within=30)
        if round_shown(shown) is None:
            table.over = True
            return
        table.newest = shown
        table.acknowledged = round_shown(shown) or 0
        countdown.tick()


async def public_answer(rec: InteractionRecord, within: float) -> Message:
    """Return the public message a flip showed its round in, whether it deferred or not."""
    answer = await rec.response(timeout=within)
    if answer.type == 6:  # a deferred update: the pressed message is edited
        await rec.original_edit(timeout=within)
        shown = rec.original
    elif answer.deferred:
        # The "thinking" message filled in, or (deferred privately while it waited for its
        # channel's turn) the table that followed the private note.
        shown = await rec.followup(timeout=within)
    else:
        shown = answer.message
    assert shown is not None
    if shown.ephemeral:
        raise AssertionError(f"a flip was refused: {text_of(shown)}")
    return shown


def settle(table: Table) -> None:
    """Count what reached Discord before the kill (answers, and rounds filled in after a defer)."""
    for rec in table.sent:
        if not rec.callbacks.items:
            continue
        for shown in [rec.original, *rec.followups.items]:
            if shown is None or shown.ephemeral or shown.loading:
                continue
            number = round_shown(shown)
            if number is not None and number >= table.acknowledged:
                table.acknowledged = number
                table.newest = shown
    table.sent.clear()
