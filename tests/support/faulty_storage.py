"""A storage whose database stops taking writes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from krigbot.storage import Storage


async def pragma(storage: Storage, statement: str) -> list[Any]:
    """Run a PRAGMA on the bot's own connection (its settings are per connection)."""
    # A private method on purpose: the fault is injected into the bot's connection, under
    # the storage's lock, between two of its statements.
    return [tuple(row) for row in await storage.database.fetchall(f"PRAGMA {statement}")]


@contextlib.asynccontextmanager
async def read_only(storage: Storage) -> AsyncIterator[None]:
    """Make every write of the bot's connection fail with SQLITE_READONLY for the block."""
    await pragma(storage, "query_only = ON")
    try:
        yield
    finally:
        await pragma(storage, "query_only = OFF")
