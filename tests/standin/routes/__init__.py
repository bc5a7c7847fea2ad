"""The stand-in's REST routes, one module per Discord resource.

Each module holds an ``aiohttp`` route table of thin functions: they find what the path names
with :func:`tests.standin.rest.find`, ask the world, the message store or the interaction
records, and answer. A new resource is a new module added to :data:`TABLES`.
"""

from __future__ import annotations

from aiohttp import web

from tests.standin.routes import (
    bot,
    channels,
    commands,
    emojis,
    guilds,
    interactions,
    oauth,
    threads,
)

#: Every route table the stand-in serves, in the order they are registered.
TABLES: tuple[web.RouteTableDef, ...] = (
    bot.routes,
    commands.routes,
    emojis.routes,
    interactions.routes,
    channels.routes,
    guilds.routes,
    threads.routes,
    oauth.routes,
)
