"""Steal War against Krigbot: it makes its own choices at once, by its policy, nobody pressing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.engine.cards import card_code
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.engine.policy import Move, choose, make
from krigbot.engine.steal import StealGame
from krigbot.i18n import card_label, t
from tests.standin import DiscordStandIn, Message
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    ChosenSeeds,
    answer_of,
    buttons,
    challenge,
    flip_button,
    game_row,
    press,
    settled,
    text_of,
)

TWO = Rules.preset("stjel")
ALICE, KRIGBOT = 0, 1


def krigbot_moves(game: StealGame) -> list[tuple[Move, bool]]:
    """Make Krigbot's open choices as the bot does after every move; return them.

    With each move: whether the default of §10 would have chosen otherwise (a top card other
    than the winning card).
    """
    made = []
    while game.outcome is None and (move := choose(game, KRIGBOT)) is not None:
        differs = move.kind == "top" and move.card != game.loot_top(KRIGBOT)
        make(game, move)
        made.append((move, differs))
    return made


@dataclass(frozen=True)
class Plan:
    """A deal, and the battle in which Krigbot first makes a choice of the wanted kind."""

    seed: int
    alice_tops: tuple[int | None, ...]
    """Per battle before it, the card Alice puts on top when she won (None: Krigbot won)."""
    moves: tuple[Move, ...]
    """What Krigbot does in that battle, at once."""
    game: StealGame
    """The engine's own game after it."""


def find_plan(wanted: Callable[[Move, bool], bool]) -> Plan:
    """Return the first deal in which Krigbot makes a wanted move while Alice only flips.

    Alice keeps the default card on top when she wins, and never has a card to steal with
    before that battle (so nothing waits for her).
    """
    for seed in range(3000):
        game = StealGame.new(TWO, seed)
        tops: list[int | None] = []
        for _ in range(6):
            game.begin_battle()
            moves = krigbot_moves(game)
            if any(isinstance(c, LookChoice) for c in game.pending()) or game.outcome:
                break
            if any(wanted(move, differs) for move, differs in moves):
                return Plan(seed, tuple(tops), tuple(move for move, _ in moves), game)
            pending = game.pending()
            if pending:
                (top,) = pending
                assert isinstance(top, TopChoice)
                assert top.seat == ALICE
                default = game.loot_top(ALICE)
                assert default is not None
                game.put_on_top(ALICE, default)
                tops.append(default)
            else:
                tops.append(None)
    raise AssertionError("no deal found")


async def play_to_plan(
    standin: DiscordStandIn, world: SampleWorld, seeds: ChosenSeeds, plan: Plan
) -> tuple[Message, int]:
    """Start Steal War against Krigbot and play the battles up to the plan's; return the table."""
    seeds.fix(plan.seed)
    answer = await answer_of(
        standin,
        await challenge(standin, world.no_channel, world.alice, standin.bot_user, variant="stjel"),
    )
    assert answer.message is not None
    table = answer.message
    game_id = int(flip_button(table).split(":")[2])
    for round_won, top in enumerate(plan.alice_tops, start=1):
        await press(standin, table, flip_button(table), world.alice)
        if top is not None:
            custom_id = f"krig:top:{game_id}:{round_won}:{ALICE}:{card_code(top)}"
            await press(standin, table, custom_id, world.alice)
    await press(standin, table, flip_button(table), world.alice)
    await settled()
    return table, game_id


async def test_krigbot_puts_its_won_card_on_top_at_once_and_the_next_battle_may_begin(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    # A top that is not the default: the policy, not a time-out, chose it.
    plan = find_plan(lambda move, differs: move.kind == "top" and differs)
    table, game_id = await play_to_plan(standin, world, seeds, plan)

    (move,) = [m for m in plan.moves if m.kind == "top"]
    shown = text_of(table)
    assert t("nb", "krigbot.top", name="Krigbot", card=card_label(move.card, "nb")) in shown
    assert t("nb", "steal.choosing_top", name="**Krigbot**") not in shown
    assert not [c for c in buttons(table) if c.startswith("krig:top:")]
    assert flip_button(table)  # nothing to wait for: Alice may flip the next battle
    row = await game_row(bot, game_id)
    assert row.state == plan.game.to_dict()
    assert plan.game.loot_top(KRIGBOT) == move.card


async def test_krigbot_steals_at_once_without_anyone_pressing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = find_plan(lambda move, _: move.kind == "steal")
    table, game_id = await play_to_plan(standin, world, seeds, plan)

    steal = next(m for m in plan.moves if m.kind == "steal")
    shown = text_of(table)
    card = card_label(steal.card, "nb")
    assert t("nb", "krigbot.steals", name="Krigbot", victims="Alice", card=card) in shown
    assert t("nb", "steal.waiting", names="**Krigbot**") not in shown
    row = await game_row(bot, game_id)
    assert row.state == plan.game.to_dict()
    assert ["steal", KRIGBOT, [ALICE]] in row.state["actions"]
