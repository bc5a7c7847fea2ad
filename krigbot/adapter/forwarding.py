"""The Activity's calls for a server another process of the bot runs, asked of that process.

Discord's proxy reaches one address of the web view, whichever process serves it; a server's
members, channels and moves are known only to the process holding its shard (Discord's
formula: ``(server id >> 22) % shard count``). On PostgreSQL a call for a server whose shard
this process does not hold goes out as a note on the bot's channel (``krig_desk_{bot}``): JSON
with the request's id, the asking process, the shard, the server, the call and its arguments.
The process holding that shard (and connected to it) says on the asker's own channel
(``krig_desk_{bot}_{process}``) that it took the call, makes it, and answers there: the answer,
or the refusal (its catalog key and fields), which is raised at the asker as if made there. No
process taking the call within ``ANSWER_SECONDS`` (the holder is stopping, or another process is
taking its shards over), or no answer ``WORK_SECONDS`` after it was taken, is
:class:`Unanswered`: the page is told to try again in a moment, never kept waiting. A call
names until when it is wanted (the processes' clocks agree, as NTP keeps them): one heard later,
by a process held still past it, is not made, so a move the page was told to try again is never
played behind its back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from krigbot.sessions import Refusal
from krigbot.web.activity import Unanswered

if TYPE_CHECKING:
    from krigbot.storage.notes import NoteStore

log = logging.getLogger(__name__)

CHANNEL: Final = "krig_desk_{bot}"
"""Where the calls of one bot (its user id) go: every process of the bot hears them."""
REPLY: Final = "krig_desk_{bot}_{process}"
"""Where one process of the bot hears the answers to its calls."""
ANSWER_SECONDS: Final = 4.0
"""How long a call waits for the holder to take it before the page is told to try again."""
WORK_SECONDS: Final = 30.0
"""How long a call the holder took waits for its answer (a round posted in a busy channel may
wait for Discord's rate limits); a holder that dies meanwhile is no answer either."""
NOTE_BYTES: Final = 7900
"""The most a note may weigh (PostgreSQL refuses a payload of 8000 bytes or more)."""

Answer = Callable[[str, int, dict[str, Any]], Awaitable[Any]]
"""Make a call here: (its name, the server, its arguments) -> its answer (JSON); raises
``Refusal``, or :class:`Unanswered` where this process cannot answer for the server now."""


@dataclass(eq=False)
class Forwarding:
    """Ask the process holding a server's shard, and answer for the shards held here."""

    notes: NoteStore
    bot_id: int
    holds: Callable[[int], bool]
    """Tell whether this process holds a server's shard now."""
    answer: Answer
    clock: Callable[[], float] = time.time
    """Seconds since the epoch: a call names until when it is wanted, on every process."""
    me: str = field(default_factory=lambda: secrets.token_hex(6), init=False)
    """This process, as the calls it makes name it."""
    channel: str = field(init=False)
    """Where the calls of every process of the bot are heard."""
    _waiting: dict[str, _Pending] = field(default_factory=dict, init=False)
    _working: set[asyncio.Task[None]] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.channel = CHANNEL.format(bot=self.bot_id)

    async def start(self) -> Callable[[], Awaitable[None]]:
        """Hear the calls and the answers; return what stops it."""
        reply = REPLY.format(bot=self.bot_id, process=self.me)
        stop_answers = await self.notes.hear(reply, self._answered)
        try:
            stop_calls = await self.notes.hear(self.channel, self._called)
        except BaseException:
            await stop_answers()
            raise

        async def stop() -> None:
            await stop_calls()
            await stop_answers()
            for task in list(self._working):
                task.cancel()
            await asyncio.gather(*self._working, return_exceptions=True)
            for pending in self._waiting.values():
                if not pending.answer.done():
                    pending.answer.set_exception(Unanswered())

        return stop

    async def ask(self, shard: int, guild_id: int, call: str, **arguments: Any) -> Any:
        """Make ``call`` at the process holding ``shard`` (the server's) and return its answer;
        raise its refusal, or :class:`Unanswered` where none came in time."""
        request = secrets.token_hex(8)
        note = encode(
            {
                "id": request,
                "from": self.me,
                "shard": shard,
                "guild": guild_id,
                "call": call,
                "args": arguments,
                "until": self.clock() + ANSWER_SECONDS,
            }
        )
        if note is None:
            raise Unanswered()
        pending = _Pending(asyncio.get_running_loop().create_future())
        self._waiting[request] = pending
        try:
            async with asyncio.timeout(ANSWER_SECONDS) as pending.budget:
                await self.notes.tell(self.channel, note)
                answered = await pending.answer
        except TimeoutError:
            log.warning("no process answered the Activity's %s for shard %s", call, shard)
            raise Unanswered() from None
        except Unanswered:
            raise  # this process is stopping
        except Exception as exc:
            # The database out of reach: no call reaches the holder.
            log.warning("could not ask for the Activity's %s on shard %s: %s", call, shard, exc)
            raise Unanswered() from None
        finally:
            del self._waiting[request]
        if "refusal" in answered:
            raise Refusal(str(answered["refusal"]), **dict(answered.get("fields") or {}))
        if "answer" not in answered:
            raise Unanswered()  # the holder failed (its log tells why)
        return answered["answer"]

    def _answered(self, note: str) -> None:
        answered = _decoded(note)
        if answered is None:
            return
        pending = self._waiting.get(str(answered.get("id")))
        if pending is None or pending.answer.done():
            return
        if answered.get("taken") is True:
            # The holder is at work on it: its answer may take longer than finding it did.
            if pending.budget is not None:
                pending.budget.reschedule(asyncio.get_running_loop().time() + WORK_SECONDS)
            return
        pending.answer.set_result(answered)

    def _called(self, note: str) -> None:
        called = _decoded(note)
        if called is None or called.get("from") == self.me:
            return
        guild_id, args = called.get("guild"), called.get("args")
        if not isinstance(guild_id, int) or not isinstance(args, dict):
            return
        if not self.holds(guild_id):
            return  # another process's shard: its holder answers
        until = called.get("until")
        late = self.clock() - until if isinstance(until, int | float) else 0.0
        if late > 0:
            # Heard after the asker gave up (this process was held still, or its clocks are
            # apart from the asker's): the page was told to try again, so nothing is played.
            log.warning("the Activity's %s came %.1f s too late", called.get("call"), late)
            return
        task = asyncio.create_task(self._answer(called, guild_id, args), name="krig-desk-call")
        self._working.add(task)
        task.add_done_callback(self._working.discard)

    async def _answer(self, called: dict[str, Any], guild_id: int, args: dict[str, Any]) -> None:
        reply = REPLY.format(bot=self.bot_id, process=str(called.get("from")))
        answered: dict[str, Any] = {"id": called.get("id")}
        try:
            taken = encode(answered | {"taken": True})
            assert taken is not None
            await self.notes.tell(reply, taken)
            answered["answer"] = await self.answer(str(called.get("call")), guild_id, args)
        except Refusal as refusal:
            answered |= {"refusal": refusal.key, "fields": refusal.fields}
        except Unanswered:
            answered["away"] = True  # no longer this process's to answer: try again
        except Exception:
            log.exception("the Activity's %s for server %s failed", called.get("call"), guild_id)
            answered["failed"] = True
        note = encode(answered)
        if note is None:
            log.warning("the Activity's %s answer is too long for a note", called.get("call"))
            note = encode({"id": called.get("id"), "failed": True})
            assert note is not None
        try:
            await self.notes.tell(reply, note)
        except Exception as exc:
            log.warning("could not answer the Activity's %s: %s", called.get("call"), exc)


@dataclass
class _Pending:
    """A call asked of another process: its answer, and the time left to wait for it."""

    answer: asyncio.Future[dict[str, Any]]
    budget: asyncio.Timeout | None = None


def encode(message: dict[str, Any]) -> str | None:
    """Return a note's text, or None where it would weigh more than a note may."""
    note = json.dumps(message, separators=(",", ":"), ensure_ascii=False, default=str)
    return note if len(note.encode()) <= NOTE_BYTES else None


def _decoded(note: str) -> dict[str, Any] | None:
    try:
        message = json.loads(note)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
