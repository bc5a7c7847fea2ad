"""Steal war through the stand-in: starting one, playing to a choice, reading the table."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from krigbot.adapter.steal import top_offer
from krigbot.engine import Rules
from krigbot.engine.cards import card_code
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.engine.steal import StealGame
from krigbot.i18n import card_label, t
from tests.standin import ChannelEvent, DiscordStandIn, InteractionResponse, Message, User
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    buttons,
    flip_button,
    press,
    start_game,
    text_of,
)
from tests.support.texts import pattern

TWO = Rules.preset("stjel", players=2)


QUICK = 0.2
"""Seconds a choice lasts on the quick bot: over before a test could press anything."""


@dataclass(frozen=True)
class Plan:
    """A deal, the top cards its winners choose, and the first choice of a steal it leads to."""

    rules: Rules
    seed: int
    tops: tuple[int | None, ...]
    """Per battle before the choice, the card its winner puts on top (None: no top offered)."""
    choice: LookChoice


def first_choice(
    rules: Rules, wanted: Callable[[LookChoice], bool], *, depth: int = 4, defaults: bool = False
) -> Plan:
    """Return the first deal (and top cards) whose first choice is one player's and ``wanted``.

    With ``defaults`` every winner keeps the default top card, as a time-out leaves it.
    """

    def search(game: StealGame, tops: tuple[int | None, ...]) -> Plan | None:
        if game.begin_battle() is None:
            choices = game.pending()
            if len(choices) == 1 and isinstance(choices[0], LookChoice) and wanted(choices[0]):
                assert game.seed is not None
                return Plan(rules, game.seed, tops, choices[0])
            return None
        if game.finished or len(tops) >= depth:
            return None
        pending = game.pending()
        if not pending:
            return search(game, (*tops, None))
        (top,) = pending
        assert isinstance(top, TopChoice)
        saved = game.to_dict()
        default = game.loot_top(top.seat)
        assert default is not None
        for card in [default] if defaults else top_offer(top, default):
            branch = StealGame.from_dict(saved)
            branch.put_on_top(top.seat, card)
            found = search(branch, (*tops, card))
            if found is not None:
                return found
        return None

    for seed in range(2000):
        plan = search(StealGame.new(rules, seed), ())
        if plan is not None:
            return plan
    raise AssertionError("no seed found")


STEAL_ONE = first_choice(TWO, lambda choice: True)


STEAL_BY_DEFAULT = first_choice(TWO, lambda choice: True, defaults=True)


def top_buttons(shown: Any) -> dict[str, dict[str, Any]]:
    """Return the table's top-card buttons by custom id."""
    return {cid: b for cid, b in buttons(shown).items() if cid.startswith("krig:top:")}


def look_button(shown: Any) -> str:
    """Return the custom id of the table's Look button."""
    (custom_id,) = [c for c in buttons(shown) if c.startswith("krig:look:")]
    return custom_id


async def choose_top(
    standin: DiscordStandIn, table: Message, players: Sequence[User], card: int
) -> InteractionResponse:
    """Let the winner of the battle just decided put ``card`` on top of their loot pile."""
    (custom_id,) = [c for c in top_buttons(table) if c.endswith(f":{card_code(card)}")]
    seat = int(custom_id.split(":")[4])
    return await press(standin, table, custom_id, players[seat])


async def play_to_choice(
    standin: DiscordStandIn, table: Message, plan: Plan, players: Sequence[User]
) -> None:
    """Play the battles before the plan's choice, then begin the battle that brings it."""
    for card in plan.tops:
        answer = await press(standin, table, flip_button(table), players[0])
        assert answer.type == UPDATE_MESSAGE, text_of(answer)
        if card is not None:
            answer = await choose_top(standin, table, players, card)
            assert answer.type == UPDATE_MESSAGE, text_of(answer)
    answer = await press(standin, table, flip_button(table), players[0])
    assert answer.type == UPDATE_MESSAGE, text_of(answer)


async def look(standin: DiscordStandIn, table: Message, user: User) -> InteractionResponse:
    """Press Look at my card and return the private answer."""
    return await press(standin, table, look_button(table), user)


async def start_steal_war(
    standin: DiscordStandIn, world: SampleWorld, seeds: ChosenSeeds, plan: Plan
) -> tuple[Message, list[User]]:
    """Deal the plan's game between Alice, Bob (and Carol); return the table and the players."""
    players = [world.alice, world.bob, world.carol][: plan.rules.players]
    seeds.fix(plan.seed)
    table = await start_game(standin, world.no_channel, *players, variant="stjel")
    return table.message, players


def names(plan: Plan) -> list[str]:
    """Return the players' names in seat order."""
    return ["Alice", "Bob", "Carol"][: plan.rules.players]


def table_id(table: Message) -> int:
    """Return the game id the table's buttons carry."""
    return int(look_button(table).split(":")[2])


def shown_in(table: Message, text: re.Pattern[str]) -> Callable[[ChannelEvent], bool]:
    """Return a test for an edit of the table that shows ``text``."""
    return lambda event: event.message is table and bool(text.search(text_of(event.revision)))


async def let_the_choice_time_out(
    standin: DiscordStandIn, table: Message, plan: Plan, *, flipper: User, last: User
) -> str:
    """Flip the plan's deal to its choice and choose nothing, on a bot whose choices last QUICK.

    ``flipper`` flips the battles before the choice, ``last`` the one that brings it; every top
    card and then the steal are left to time out. Return the table as the steal's time-out left
    it.
    """
    watcher = standin.watch(table.channel)
    for card in plan.tops:
        await press(standin, table, flip_button(table), flipper)
        if card is not None:
            # Nobody chooses: the winner's won cards keep the order placed.
            await watcher.next(
                "edit", predicate=shown_in(table, pattern("nb", "steal.top_timed_out"))
            )
    await press(standin, table, flip_button(table), last)
    thief = names(plan)[plan.choice.seat]
    timed_out = await watcher.next(
        "edit", predicate=shown_in(table, pattern("nb", "steal.timed_out", names=thief))
    )
    return text_of(timed_out.revision)


def steal_line(plan: Plan) -> str:
    """Return the table's Norwegian line for the steal of the plan's choice."""
    thief, victim = names(plan)[plan.choice.seat], names(plan)[plan.choice.can_steal[0]]
    card = card_label(plan.choice.card, "nb")
    return t("nb", "table.steal", count=1, name=f"**{thief}**", victims=victim, card=card)
