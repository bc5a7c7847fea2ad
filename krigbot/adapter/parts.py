"""What the cogs are built with: the bot, the session layer's parts and the adapter's.

Each part has a Protocol of its one attribute (``HasRegistry``), and a cog declares what it uses
by composing them in one line, so ``mypy --strict`` refuses it any part it did not name::

    class ChallengeParts(TableParts, HasTimeLimits, HasChallenges, ..., Protocol): ...

The parts that always go together have a Protocol composed of theirs: :class:`TableParts` for
every user of a channel's table, :class:`RoundParts` for the cogs that play rounds.

:class:`Parts` holds every part, so it satisfies each of these Protocols and every cog's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from discord.ext import commands

    from krigbot.adapter.activity import ActivityDesk
    from krigbot.adapter.buttons import Buttons
    from krigbot.adapter.pictures import Pictures
    from krigbot.adapter.tables import Tables
    from krigbot.render.emoji import CardFaces
    from krigbot.sessions.challenges import Challenges
    from krigbot.sessions.choices import Choices
    from krigbot.sessions.deadlines import Deadlines
    from krigbot.sessions.handsfree import HandsFree
    from krigbot.sessions.play import Play
    from krigbot.sessions.recovery import Recovery
    from krigbot.sessions.registry import Registry
    from krigbot.sessions.timelimit import TimeLimits
    from krigbot.sessions.tournaments import Tournaments
    from krigbot.storage import Storage
    from krigbot.web.access import WebAccess


class HasBot(Protocol):
    bot: commands.AutoShardedBot


class HasRegistry(Protocol):
    registry: Registry


class HasTimeLimits(Protocol):
    time_limits: TimeLimits


class HasChallenges(Protocol):
    challenges: Challenges


class HasPlay(Protocol):
    play: Play


class HasChoices(Protocol):
    choices: Choices


class HasHandsFree(Protocol):
    hands_free: HandsFree


class HasRecovery(Protocol):
    recovery: Recovery


class HasDeadlines(Protocol):
    deadlines: Deadlines


class HasTournaments(Protocol):
    tournaments: Tournaments


class HasStorage(Protocol):
    storage: Storage


class HasPictures(Protocol):
    pictures: Pictures


class HasTables(Protocol):
    tables: Tables


class HasWeb(Protocol):
    web: WebAccess


class HasButtons(Protocol):
    buttons: Buttons


class HasFaces(Protocol):
    faces: CardFaces


class HasActivity(Protocol):
    activity: ActivityDesk


class TableParts(HasBot, HasRegistry, HasTables, HasWeb, Protocol):
    """What every user of a channel's table takes: the bot, the running games, the channels'
    tables and the web view's links under them."""


class RoundParts(TableParts, HasPlay, HasButtons, HasFaces, Protocol):
    """What every cog that plays rounds takes: the table's parts, the play, the buttons under a
    round and the card emojis of its text."""


@dataclass(slots=True)
class Parts:
    """Everything a cog may use, built once by the bot.

    A cog does not take all of it: its constructor names a Protocol of its own composed of the
    parts it uses (``ChallengeParts`` in ``cogs/challenge.py``), so the type checker refuses it
    any other, and ``tests/test_layers.py`` checks the list against what the cog reads."""

    bot: commands.AutoShardedBot
    registry: Registry
    """The running games (the session layer's shared core)."""
    time_limits: TimeLimits
    challenges: Challenges
    play: Play
    choices: Choices
    hands_free: HandsFree
    recovery: Recovery
    deadlines: Deadlines
    tournaments: Tournaments
    storage: Storage
    pictures: Pictures
    """The pictures, drawn in worker processes."""
    tables: Tables
    """Every channel's turn and live message, for every cog that shows a game."""
    web: WebAccess
    """The web view's signed links."""
    buttons: Buttons
    """The handlers of the bot's buttons, which each cog registers for its own."""
    faces: CardFaces
    """The card emojis the tables' text shows (``adapter/emojis.py`` syncs them)."""
    activity: ActivityDesk
    """The Activity's moves, which the cogs that play them handle."""
