"""Buttons whose custom ids carry the game, so they keep working after a restart.

Each is a :class:`GameButton`: a ``DynamicItem`` whose template, custom id and parsing are all
made from one list of fields, so they can never disagree. discord.py matches a pressed custom
id against the template, rebuilds the button and calls it, whether or not this process sent the
message; the press goes to the handler its cog registered in the bot's :class:`Buttons`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar, runtime_checkable

import discord

from krigbot.adapter.replies import answer_error, recall_lang
from krigbot.engine.cards import card_code, parse_card
from krigbot.i18n import Lang, card_label, t

T = TypeVar("T")

Handler = Callable[..., Awaitable[None]]
"""A button's handler: called with the interaction, then the button's fields in order."""


@dataclass(frozen=True, slots=True)
class Field(Generic[T]):
    """One part of a custom id: the text it may be, and how its value is read and written."""

    pattern: str
    read: Callable[[str], T]
    write: Callable[[T], str] = str


NUMBER: Field[int] = Field(r"\d+", int)
SEAT: Field[int] = Field(r"[0-3]", int)
YES_NO: Field[bool] = Field(
    "yes|no", lambda text: text == "yes", lambda yes: "yes" if yes else "no"
)


def one_of(*words: str) -> Field[str]:
    """Return a field that is one of ``words``."""
    return Field("|".join(words), str)


class GameButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"krig:(?!)"):
    """A button whose custom id is ``krig:<kind>:<field>:...``, built from its declared fields.

    A subclass declares its kind and its fields in its class line, in custom id order, each by
    the name its value has in the template (``class FlipButton(GameButton, kind="flip",
    game=NUMBER, round=NUMBER)``). Its constructor takes the fields' values first, in that
    order, and everything else with a default, so that a pressed id can rebuild it.
    """

    kind: ClassVar[str]
    fields: ClassVar[dict[str, Field[Any]]]

    def __init_subclass__(cls, *, kind: str, **fields: Field[Any]) -> None:
        cls.kind = kind
        cls.fields = fields
        parts = "".join(f":(?P<{name}>{field.pattern})" for name, field in fields.items())
        super().__init_subclass__(template=f"krig:{kind}{parts}")

    def __init__(self, *values: Any, **button: Any) -> None:
        written = (
            field.write(value) for field, value in zip(self.fields.values(), values, strict=True)
        )
        super().__init__(
            discord.ui.Button(custom_id=":".join(("krig", self.kind, *written)), **button)
        )
        self.values = values

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> Self:
        return cls(*(field.read(match[name]) for name, field in cls.fields.items()))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        # Whatever the handler raises goes to the bot's one error handler.
        try:
            await recall_lang(interaction)
            await Buttons.of(interaction.client).handler(type(self))(interaction, *self.values)
        except Exception as exc:
            await answer_error(interaction, exc)


class Buttons:
    """The bot's buttons and their handlers: each cog registers those of its own buttons."""

    def __init__(self) -> None:
        self._handlers: dict[type[GameButton], Handler] = {}

    @staticmethod
    def of(client: discord.Client) -> Buttons:
        """Return the buttons of the bot that received a press."""
        if not isinstance(client, ButtonOwner):
            raise TypeError(f"{type(client).__name__} has no buttons")
        return client.buttons

    def handle(self, button: type[GameButton], handler: Handler) -> None:
        """Send the presses of ``button`` to ``handler``; one handler per kind of button."""
        if button in self._handlers:
            raise ValueError(f"{button.__name__} has a handler already")
        self._handlers[button] = handler

    def handler(self, button: type[GameButton]) -> Handler:
        """Return the handler of a kind of button."""
        return self._handlers[button]

    def kinds(self) -> tuple[type[GameButton], ...]:
        """Return every kind of button with a handler, in the order they were registered."""
        return tuple(self._handlers)


@runtime_checkable
class ButtonOwner(Protocol):
    """A client that holds the handlers of its buttons."""

    buttons: Buttons


class AcceptButton(GameButton, kind="accept", game=NUMBER):
    """Accept a challenge (only the challenged may)."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            game_id, label=t(lang, "challenge.accept"), style=discord.ButtonStyle.success
        )


class DeclineButton(GameButton, kind="decline", game=NUMBER):
    """Decline a challenge (only the challenged may)."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            game_id, label=t(lang, "challenge.decline"), style=discord.ButtonStyle.danger
        )


class RematchButton(GameButton, kind="rematch", game=NUMBER):
    """Challenge the players of a finished game (or match) to the same again."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            label=t(lang, "rematch.button"),
            emoji="🔁",
            style=discord.ButtonStyle.success,
        )


FLIP_EMOJI = discord.PartialEmoji(name="🂠")
"""The Flip button's emoji: one for every table, not one parsed for each."""


class FlipButton(GameButton, kind="flip", game=NUMBER, round=NUMBER):
    """Play the next round; the id holds the round shown, so a stale press plays nothing."""

    def __init__(self, game_id: int, round_shown: int, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            round_shown,
            label=t(lang, "table.flip"),
            emoji=FLIP_EMOJI,
            style=discord.ButtonStyle.primary,
        )


class ForfeitButton(GameButton, kind="forfeit", game=NUMBER, user=NUMBER, choice=YES_NO):
    """Confirm or call off giving up (only the player who asked may)."""

    def __init__(self, game_id: int, user_id: int, confirm: bool, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            user_id,
            confirm,
            label=t(lang, "forfeit.yes" if confirm else "forfeit.no"),
            style=discord.ButtonStyle.danger if confirm else discord.ButtonStyle.secondary,
        )


AutoAction = str
"""``pause``, ``resume`` or ``stop``."""


_AUTO_STYLES = {
    "pause": ("⏸️", discord.ButtonStyle.secondary),
    "resume": ("▶️", discord.ButtonStyle.success),
    "stop": ("⏹️", discord.ButtonStyle.danger),
}


class AutoplayButton(GameButton, kind="auto", game=NUMBER, action=one_of(*_AUTO_STYLES)):
    """Pause, resume or stop autoplay (players only)."""

    def __init__(self, game_id: int, action: AutoAction, lang: Lang = "nb") -> None:
        emoji, style = _AUTO_STYLES[action]
        super().__init__(game_id, action, label=t(lang, f"auto.{action}"), emoji=emoji, style=style)


class FinishButton(GameButton, kind="finish", game=NUMBER, choice=YES_NO):
    """Agree to play the game to its end at once, or keep playing (the other players)."""

    def __init__(self, game_id: int, agree: bool, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            agree,
            label=t(lang, "finish.yes" if agree else "finish.no"),
            style=discord.ButtonStyle.success if agree else discord.ButtonStyle.secondary,
        )


# Steal War's buttons (rules §10)

CARD = r"[2-9TJQKA][SHDC]|X[12]"
CARD_FIELD: Field[int] = Field(CARD, parse_card, card_code)
SEATS: Field[tuple[int, ...]] = Field(
    r"[0-3](?:-[0-3])*",
    lambda text: tuple(int(seat) for seat in text.split("-")),
    lambda seats: "-".join(str(seat) for seat in seats),
)


class LookButton(GameButton, kind="look", game=NUMBER):
    """Show the presser their own next card, privately, with their choices."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            label=t(lang, "steal.look"),
            emoji="👀",
            style=discord.ButtonStyle.secondary,
            row=0,
        )


class StealButton(GameButton, kind="steal", game=NUMBER, seat=SEAT, card=CARD_FIELD, targets=SEATS):
    """Steal the loot piles of ``targets`` with the card the player looks at."""

    def __init__(
        self, game_id: int, seat: int, card: int, targets: Sequence[int], label: str = "-"
    ) -> None:
        super().__init__(
            game_id, seat, card, tuple(targets), label=label, style=discord.ButtonStyle.success
        )


class PlayButton(GameButton, kind="play", game=NUMBER, seat=SEAT, card=CARD_FIELD):
    """Play the card the player looks at instead of stealing with it."""

    def __init__(self, game_id: int, seat: int, card: int, label: str = "-") -> None:
        super().__init__(game_id, seat, card, label=label, style=discord.ButtonStyle.primary)


class TopButton(GameButton, kind="top", game=NUMBER, round=NUMBER, seat=SEAT, card=CARD_FIELD):
    """Put one of the cards won in a battle on top of the winner's loot pile."""

    def __init__(
        self,
        game_id: int,
        round_won: int,
        seat: int,
        card: int,
        lang: Lang = "nb",
        *,
        default: bool = False,
        row: int | None = None,
    ) -> None:
        super().__init__(
            game_id,
            round_won,
            seat,
            card,
            label=card_label(card, lang),
            # The default of §10 stands out: it is what a time-out would choose.
            style=discord.ButtonStyle.primary if default else discord.ButtonStyle.secondary,
            row=row,
        )


def view_of(*items: discord.ui.Item[Any]) -> discord.ui.View:
    """Return a view holding the given buttons (no timeout: they are dynamic)."""
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view
