"""Hands-free play as the game keeps it: autoplay's state and an open request to finish at once.

Both live in the game's ``extra`` (``extra["autoplay"]``, ``extra["finish"]``), so a restarted
bot carries on; the JSON is the same as it always was, so existing databases keep working.
Every change is made here, checked under the channel's lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from krigbot.engine import Variant
from krigbot.sessions.registry import Registry
from krigbot.sessions.results import Refusal
from krigbot.storage import GameRow

AUTOPLAY = "autoplay"
STOPPED = "autoplay_stopped"
"""Who pressed Stop on which autoplay message (``{"message": id, "by": name}``)."""
FINISH = "finish"

AutoplayState = Literal["running", "paused"]


@dataclass(frozen=True, slots=True)
class Autoplay:
    """Autoplay in a game: running or paused, in which message, how fast, started by whom."""

    state: AutoplayState
    message: int | None
    """The message it plays in (None if what is stored is damaged: it cannot be resumed)."""
    speed: str = "normal"
    by: str = ""
    """The display name of who started, paused or resumed it last."""
    why: str | None = None
    """Why the bot paused it by itself (``token``, ``token_lost``, ``restart``): its message's
    interaction token ran out, Discord ended it early, or the bot restarted where nothing but
    an interaction reaches the chat; None when a player paused it."""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON kept in the game's ``extra["autoplay"]``."""
        data = {"state": self.state, "message": self.message, "speed": self.speed, "by": self.by}
        return data if self.why is None else {**data, "why": self.why}

    @classmethod
    def of(cls, extra: Mapping[str, Any]) -> Autoplay | None:
        """Return the autoplay a game's ``extra`` records, or None if there is none."""
        data = extra.get(AUTOPLAY)
        if not isinstance(data, Mapping) or data.get("state") not in ("running", "paused"):
            return None
        message = data.get("message")
        return cls(
            data["state"],
            message if isinstance(message, int) else None,
            str(data.get("speed", "normal")),
            str(data.get("by", "")),
            None if data.get("why") is None else str(data["why"]),
        )


@dataclass(frozen=True, slots=True)
class FinishRequest:
    """A request to play the game to its end at once: who asked, and who has agreed."""

    by: int
    agreed: tuple[int, ...]
    message: int | None = None
    """The message asking, once it is out: a restarted bot greys it if the game ended."""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON kept in the game's ``extra["finish"]``."""
        data: dict[str, Any] = {"by": self.by, "agreed": list(self.agreed)}
        return data if self.message is None else {**data, "message": self.message}

    @classmethod
    def of(cls, extra: Mapping[str, Any]) -> FinishRequest | None:
        """Return the open request a game's ``extra`` records, or None."""
        data = extra.get(FINISH)
        if not isinstance(data, Mapping) or "by" not in data:
            return None
        message = data.get("message")
        return cls(
            int(data["by"]),
            tuple(int(user) for user in data.get("agreed", ())),
            message if isinstance(message, int) else None,
        )

    def waiting(self, row: GameRow, game: Variant) -> list[int]:
        """Return the players still in the game who have not agreed yet."""
        return [
            user
            for seat, user in enumerate(row.players)
            if game.in_game[seat] and user not in self.agreed
        ]


class HandsFree:
    """Change a game's autoplay and finish request, each under the channel's lock."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def start_autoplay(self, channel_id: int, game_id: int, autoplay: Autoplay) -> None:
        """Record autoplay as started; refuse if it already plays (or is paused) in the game."""

        def change(extra: dict[str, Any]) -> dict[str, Any]:
            if Autoplay.of(extra) is not None:
                raise Refusal("auto.already")
            return {AUTOPLAY: autoplay.to_dict()}

        await self.registry.change_extra(channel_id, game_id, change)

    async def pause_autoplay(
        self, channel_id: int, game_id: int, message_id: int | None, by: str, why: str | None = None
    ) -> Autoplay:
        """Record autoplay as paused from its message; refuse unless it runs there.

        ``why`` says why the bot paused it by itself (see :attr:`Autoplay.why`).
        """
        paused: list[Autoplay] = []

        def change(extra: dict[str, Any]) -> dict[str, Any]:
            current = _shown_in(extra, message_id)
            if current.state != "running":
                raise Refusal("auto.not_running")
            paused.append(dataclasses.replace(current, state="paused", by=by, why=why))
            return {AUTOPLAY: paused[0].to_dict()}

        await self.registry.change_extra(channel_id, game_id, change)
        return paused[0]

    async def resume_autoplay(self, channel_id: int, game_id: int, by: str) -> Autoplay:
        """Record paused autoplay as running again; refuse unless it is paused."""
        resumed: list[Autoplay] = []

        def change(extra: dict[str, Any]) -> dict[str, Any]:
            current = Autoplay.of(extra)
            if current is None or current.state != "paused":
                raise Refusal("auto.not_paused")
            resumed.append(dataclasses.replace(current, state="running", by=by, why=None))
            return {AUTOPLAY: resumed[0].to_dict()}

        await self.registry.change_extra(channel_id, game_id, change)
        return resumed[0]

    async def stop_autoplay(
        self, channel_id: int, game_id: int, message_id: int | None = None, by: str | None = None
    ) -> None:
        """Forget a game's autoplay; from its message's Stop button (``message_id``) only there.

        Who pressed Stop (``by``) is kept with the message: during a hand-off the other process
        of the shard, whose step lost to the press, shows the stop as the answer did.
        """

        def change(extra: dict[str, Any]) -> dict[str, Any]:
            if message_id is not None:
                _shown_in(extra, message_id)
            if by is None:
                return {AUTOPLAY: None}
            return {AUTOPLAY: None, STOPPED: {"message": message_id, "by": by}}

        await self.registry.change_extra(channel_id, game_id, change)

    async def ask_finish(self, channel_id: int, game_id: int, user_id: int) -> FinishRequest:
        """Open a request to finish the game at once (it replaces an older one)."""
        # Krigbot itself agrees at once, as it accepts its challenges.
        bot = () if self.registry.krigbot_id is None else (self.registry.krigbot_id,)
        request = FinishRequest(user_id, (user_id, *bot))
        await self.registry.change_extra(channel_id, game_id, lambda _: {FINISH: request.to_dict()})
        return request

    async def finish_request_shown(
        self, channel_id: int, game_id: int, by: int, message_id: int
    ) -> None:
        """Record the message of the open request ``by`` made; refuse if it was answered."""

        def change(extra: dict[str, Any]) -> dict[str, Any]:
            request = FinishRequest.of(extra)
            if request is None or request.by != by or request.message is not None:
                raise Refusal("finish.none")
            return {FINISH: dataclasses.replace(request, message=message_id).to_dict()}

        await self.registry.change_extra(channel_id, game_id, change)

    async def answer_finish(
        self, channel_id: int, game_id: int, user_id: int, agree: bool
    ) -> FinishRequest | None:
        """Count an answer to the open request; return it, or None once it is refused."""
        answered: list[FinishRequest | None] = []

        def change(extra: dict[str, Any]) -> dict[str, Any]:
            request = FinishRequest.of(extra)
            if request is None:
                raise Refusal("finish.none")
            if not agree:
                answered.append(None)
                return {FINISH: None}
            if user_id in request.agreed:
                raise Refusal("finish.already_agreed")
            agreed = dataclasses.replace(request, agreed=(*request.agreed, user_id))
            answered.append(agreed)
            return {FINISH: agreed.to_dict()}

        await self.registry.change_extra(channel_id, game_id, change)
        return answered[0]


def stopped_by(extra: Mapping[str, Any], message_id: int) -> str | None:
    """Return who pressed Stop on the autoplay of ``message_id``, or None."""
    data = extra.get(STOPPED)
    if not isinstance(data, Mapping) or data.get("message") != message_id:
        return None
    return str(data.get("by", ""))


def _shown_in(extra: Mapping[str, Any], message_id: int | None) -> Autoplay:
    """Return the game's autoplay if it is the one in ``message_id``; refuse a stale button."""
    current = Autoplay.of(extra)
    if current is None or current.message != message_id:
        raise Refusal("err.stale_button")
    return current
