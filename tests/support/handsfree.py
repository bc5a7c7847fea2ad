"""Helpers for the hands-free play tests: a bot with quick autoplay, commands and their edits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krigbot.bot import KrigBot
from krigbot.sessions import Seeds, random_seed
from krigbot.storage import Storage
from tests.standin import run_bot
from tests.support.players import answer_of, text_of
from tests.support.settings import make_settings

if TYPE_CHECKING:
    from tests.standin import (
        Channel,
        ChannelEvent,
        DiscordStandIn,
        InteractionResponse,
        Message,
        User,
    )

AUTO_SECONDS = 0.1
"""The autoplay interval of the test bots: short, but long enough to measure the spacing."""


@contextlib.asynccontextmanager
async def running_bot(
    standin: DiscordStandIn,
    db_path: Path,
    seeds: Seeds = random_seed,
    *,
    database: str | Path | None = None,
    **settings: Any,
) -> AsyncIterator[KrigBot]:
    """Run a bot on the database file as one process would; a second one is a restart.

    ``database`` is another database to play on instead (a PostgreSQL URL).
    """
    settings.setdefault("autoplay_seconds", AUTO_SECONDS)
    storage = await Storage.open(db_path if database is None else database)
    try:
        bot = KrigBot(
            make_settings(db_path, **settings), storage, seeds=seeds, guild_ready_timeout=0.05
        )
        async with run_bot(bot, standin) as running:
            await asyncio.wait_for(running.saved_games_checked.wait(), 30)
            yield running
    finally:
        await storage.close()


async def command(
    standin: DiscordStandIn, channel: Channel, caller: User, name: str, /, **options: Any
) -> InteractionResponse:
    """Run ``/krig <name>`` with ``options`` as ``caller`` and return the bot's answer."""
    return await answer_of(
        standin, await standin.slash(f"krig {name}", user=caller, channel=channel, options=options)
    )


async def edit_of(
    standin: DiscordStandIn,
    message: Message,
    wanted: Callable[[str], bool],
    *,
    start: int = 0,
    within: float = 10.0,
) -> ChannelEvent:
    """Wait for an edit of ``message`` (from channel event ``start`` on) whose text matches."""
    index = await standin.channel_events.wait_index(
        start,
        lambda e: e.kind == "edit" and e.message is message and wanted(text_of(e.revision)),
        within,
        f"an edit of message {message.id}",
    )
    return standin.channel_events.items[index]
