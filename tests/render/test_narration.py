"""A war step as the table tells it: what each fighter placed, in every kind of game."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from krigbot.engine import Game, Round, Rules
from krigbot.engine.steal import StealGame
from krigbot.i18n import Lang, card_label, t
from krigbot.render.embeds import round_embed
from krigbot.render.steal import steal_table_embed
from krigbot.render.table import layout_round
from tests.support.narration import NAMES, row_for


def told(rules: Rules, seed: int, rounds: int, lang: Lang = "en") -> tuple[Round, list[str]]:
    """Return round ``rounds`` of a deal and the lines the table tells it with."""
    game = Game.new(rules, seed)
    played = [game.play_round() for _ in range(rounds)][-1]
    embed = round_embed(row_for(rules), game, played, lang)
    return played, (embed.description or "").splitlines()


def fighter(key: str, lang: Lang = "en", **fields: Any) -> str:
    return "• " + t(lang, f"table.fighter.{key}", **fields)


def steal_rounds(rules: Rules, seed: int) -> Iterator[tuple[StealGame, Round]]:
    """Play a Steal War deal with the default choices, yielding each round played."""
    game = StealGame.new(rules, seed)
    while not game.finished:
        played = game.begin_battle()
        while played is None:
            played = game.apply_defaults()
        yield game, played


def test_four_players_under_lose_a_short_fighter_goes_down_and_the_other_places_nothing() -> None:
    played, lines = told(Rules.preset("standard", players=4), 1146, 6)
    first, _, third = played.war_steps
    assert third.knocked_out == (2,)

    at = lines.index(t("en", "table.war_step_mixed", n=3))
    assert lines[at + 1 : at + 4] == [
        fighter("short_out", count=1, name="Carol", n=1),
        fighter("unneeded", name="Dave", out="Carol"),
        t("en", "table.eliminated", name="Carol"),
    ]
    # The steps everyone completed alike keep their one line.
    ups = " – ".join(
        f"{NAMES[seat]} {card_label(card, 'en')}"
        for seat, card in zip(first.fighters, first.compared, strict=True)
    )
    assert t("en", "table.war_step", count=1, n=1, down=1, cards=ups) in lines
    assert t("en", "table.war_step_mixed", n=2) not in lines


def test_a_teammate_who_supplies_cards_is_named_before_the_step() -> None:
    played, lines = told(Rules.preset("lag", players=4), 49, 23)
    ((giver, to, n),) = played.war_steps[0].supplied

    supplied = t("en", "table.supplied", count=n, giver=NAMES[giver], name=NAMES[to], n=n)
    after = lines[lines.index(supplied) + 1]
    assert after.startswith("War step 1: 1 card face down each")


def test_steal_war_tells_a_short_fighter_and_the_winner_who_placed_nothing() -> None:
    rules = Rules.preset("stjel", players=2)
    game, played = next(
        (game, played)
        for game, played in steal_rounds(rules, 4)
        if any(step.knocked_out for step in played.war_steps)
    )
    (step,) = played.war_steps
    short = step.knocked_out[0]
    other = 1 - short
    down = len(step.face_down[step.fighters.index(short)])

    lines = (round_embed(row_for(rules), game, played, "da").description or "").splitlines()

    at = lines.index(t("da", "table.war_step_mixed", n=1))
    expected = {
        short: fighter("short_out", "da", count=down, name=NAMES[short], n=down),
        other: fighter("unneeded", "da", name=NAMES[other], out=NAMES[short]),
    }
    assert lines[at + 1 : at + 3] == [expected[seat] for seat in step.fighters]
    assert card_label(step.compared[step.fighters.index(other)], "da") not in "\n".join(lines[at:])


def war_under_way(game: StealGame) -> StealGame:
    """Play a Steal War deal by default choices until a war step waits for its face-up cards."""
    while not game.finished:
        played = game.begin_battle()
        while played is None:
            if game.battle_view().war_steps and game.pending():
                return game
            played = game.apply_defaults()
    raise AssertionError("no war step under way in this deal")


def test_a_steal_war_step_under_way_tells_the_short_fighter_and_hides_the_cards_to_come() -> None:
    rules = Rules.preset("stjel", players=3)
    game = war_under_way(StealGame.new(rules, 2365))
    (step,) = game.battle_view().war_steps
    assert step.knocked_out == (0,)

    embed = steal_table_embed(row_for(rules), game, "nb")
    lines = (embed.description or "").splitlines()

    at = lines.index(t("nb", "table.war_step_mixed", n=1))
    assert lines[at + 1 : at + 5] == [
        fighter("short_out", "nb", count=1, name="Alice", n=1),
        fighter("placed", "nb", count=3, name="Bob", n=3, card="?"),
        fighter("placed", "nb", count=3, name="Carol", n=3, card="?"),
        t("nb", "table.eliminated", name="Alice"),
    ]


def test_the_table_picture_shows_each_fighters_own_face_down_pile() -> None:
    # Five down, round 4: Alice runs short in the second step and places her last 4 cards.
    game = Game.new(Rules.preset("fem"), 8133)
    played = [game.play_round() for _ in range(4)][-1]

    layout = layout_round(played, 2)

    piles = {
        seat: [p.down for p in layout.placed if p.seat == seat and p.card is None]
        for seat in (0, 1)
    }
    assert piles == {0: [5, 4], 1: [5]}
