"""The processes that draw pictures, and how the bot starts them before anything else.

A worker is a new Python process ("spawn": a fork of a process running discord.py's threads and
event loop is not safe) that imports only the renderers. It takes about a second to be ready, so
the bot starts it first of all (:func:`warm_up_workers`) and loads and connects meanwhile; this
module imports nothing heavy, so that costs the bot nothing.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor


def _exit_with_parent(parent: int) -> None:
    # A worker whose bot was killed (SIGKILL runs no clean-up) would wait for work forever;
    # it leaves as soon as it is adopted by another parent.
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _warm_up() -> None:
    """Watch the bot, and load fonts and caches, in a new worker."""
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    # Imported here, in the worker: the bot imports this module first thing, to start workers.
    from krigbot.engine import Game, Rules, parse_cards
    from krigbot.render.table import render_round

    game = Game.from_piles(Rules.preset("standard"), [parse_cards(["KS"]), parse_cards(["2H"])])
    render_round(game.play_round(), ["Ada", "Bo"], "nb", total_cards=2)


def _ready() -> bool:
    """Answer from a worker once its warm-up is done (the pool runs it first)."""
    return True


@functools.cache
def pool(processes: int) -> Executor:
    """Return the process pool with this many workers, shared by every bot in the process."""
    return ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_warm_up,
    )


@functools.cache
def warm_up_workers(processes: int) -> Future[bool]:
    """Start the drawing workers (once per process); the future is done when they are ready."""
    return pool(processes).submit(_ready)
