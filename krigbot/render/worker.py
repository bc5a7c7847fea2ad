"""The processes that draw pictures, and how the bot starts them before anything else.

A worker is a new Python process ("spawn": a fork of a process running discord.py's threads and
event loop is not safe) that imports only the renderers. It takes about a second to be ready, so
the bot starts it first of all (:func:`warm_up_workers`) and loads and connects meanwhile; this
module imports nothing heavy, so that costs the bot nothing.

A worker ends with its bot however the bot ends, SIGKILL included (nothing of the bot runs
then): on Linux the kernel kills it when the bot goes (``PR_SET_PDEATHSIG``); elsewhere a thread
of its own watches for the bot to be gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import Executor, Future, InvalidStateError, ProcessPoolExecutor

PR_SET_PDEATHSIG = 1
"""prctl(2): the signal this process gets when the thread that started it ends."""
WATCH_EVERY = 1.0
"""Seconds between a worker's checks that its bot is still there (where no signal tells it)."""


def _die_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent goes; tell whether it agreed."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no C library to ask, or no prctl in it
        return False


def _exit_with_parent(parent: int) -> None:
    # Where no signal arrives (not Linux), a worker whose bot was killed would wait for work
    # forever; it leaves once it has been adopted by another process.
    while os.getppid() == parent:
        time.sleep(WATCH_EVERY)
    os._exit(0)


def _warm_up(parent: int) -> None:
    """Tie a new worker's life to the bot's, then load fonts and caches.

    ``parent`` is the bot's pid as the bot itself read it. Read here, it could already be the
    pid of whatever adopted the worker: a bot killed within a second of starting, before the
    worker got this far, would leave it waiting forever.
    """
    signalled = _die_with_parent()
    # The signal only comes for a parent that goes after it was asked for: one already gone
    # is seen here, the pid having changed to the process that adopted the worker.
    if os.getppid() != parent:
        os._exit(0)
    if not signalled:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    # Imported here, in the worker: the bot imports this module first thing, to start workers.
    from krigbot.engine import Game, Rules, parse_cards
    from krigbot.render.table import render_round

    game = Game.from_piles(Rules.preset("standard"), [parse_cards(["KS"]), parse_cards(["2H"])])
    render_round(game.play_round(), ["Ada", "Bo"], "nb", total_cards=2)


def _ready() -> bool:
    """Answer from a worker once its warm-up is done (the pool runs it first)."""
    return True


_started: dict[int, tuple[Executor, Future[bool]]] = {}
"""The pools of this process by their number of workers, each with its readiness."""


def _start(processes: int) -> tuple[Executor, Future[bool]]:
    """Return the pool with this many workers (started on the first call) and its readiness."""
    if processes not in _started:
        _started[processes] = _new_pool(processes)
    return _started[processes]


def _new_pool(processes: int) -> tuple[Executor, Future[bool]]:
    """Start a pool with every worker at once; return it and a future done when all are up."""
    # PR_SET_PDEATHSIG fires when the *thread* that started the worker ends, not the process.
    # The pool starts a worker in whichever thread calls submit() while none is idle: submitted
    # all here, every worker is started by this thread, the bot's main thread (bot.py, and
    # KrigBot, which is made on the thread that runs its event loop for its whole life).
    executor = ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_warm_up,
        initargs=(os.getpid(),),
    )
    answers = [executor.submit(_ready) for _ in range(processes)]
    ready: Future[bool] = Future()

    def one_done(_: Future[bool]) -> None:
        if ready.done() or not all(answer.done() for answer in answers):
            return
        failed = next((a.exception() for a in answers if a.exception() is not None), None)
        with contextlib.suppress(InvalidStateError):  # two callbacks may see the last answer
            if failed is None:
                ready.set_result(True)
            else:
                ready.set_exception(failed)

    for answer in answers:
        answer.add_done_callback(one_done)
    return executor, ready


def pool(processes: int) -> Executor:
    """Return the process pool with this many workers, shared by every bot in the process."""
    return _start(processes)[0]


def warm_up_workers(processes: int) -> Future[bool]:
    """Start the drawing workers (once per process); the future is done when they are ready."""
    return _start(processes)[1]


def stop_workers() -> None:
    """Stop this process's drawing workers and wait until they have ended.

    A bot leaves this to the end of its process (the pool's own exit handler); the test suite
    calls it to tell its leftover processes from the workers it still uses.
    """
    while _started:
        _, (executor, _) = _started.popitem()
        executor.shutdown(wait=True, cancel_futures=True)
