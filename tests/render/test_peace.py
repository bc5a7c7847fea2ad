"""A Peace round (rules §1 `lowest_wins`) says so: a narration line and a pill on the picture.

That every house rule's battle is told and has its pill, and the same deal without it says
nothing, is in tests/render/test_house_rules.py; here are Peace's own examples of rules §1.
"""

from __future__ import annotations

import pytest

from krigbot.engine import Game, Round, Rules, parse_cards
from krigbot.i18n import LANGS, Lang, t
from tests.support.house_rule_table import narration, pill_pixels

PEACE = Rules.preset("standard", lowest_wins=True)


def first_round(rules: Rules, *piles: str) -> tuple[Game, Round]:
    game = Game.from_piles(rules, [parse_cards(pile.split()) for pile in piles])
    return game, game.play_round()


@pytest.mark.parametrize("lang", LANGS)
def test_a_battle_won_by_the_lowest_card_is_told_before_who_takes_it(lang: Lang) -> None:
    game, played = first_round(PEACE, "3C 5H", "KS 9D")
    assert (played.winner, played.won_by) == (0, "lowest_wins")
    lines = narration(PEACE, game, played, lang)
    said = "🕊️ " + t(lang, "table.lowest_wins")
    assert said in lines
    takes = next(i for i, line in enumerate(lines) if line.startswith("➜ "))
    assert lines.index(said) == takes - 1
    assert pill_pixels(played, lang) > 2000


@pytest.mark.parametrize("lang", LANGS)
def test_a_war_won_by_the_lowest_card_is_told_after_its_steps(lang: Lang) -> None:
    game, played = first_round(PEACE, "8C 4H KH", "8D 5S 2S")
    assert (played.winner, len(played.war_steps), played.won_by) == (1, 1, "lowest_wins")
    lines = narration(PEACE, game, played, lang)
    said = "🕊️ " + t(lang, "table.lowest_wins")
    war = next(i for i, line in enumerate(lines) if line.startswith("⚔️ "))
    takes = next(i for i, line in enumerate(lines) if line.startswith("➜ "))
    assert war < lines.index(said) == takes - 1


def test_a_round_won_by_shortage_is_not_told_as_peace() -> None:
    game, played = first_round(PEACE, "7C 4H 2H", "7D")
    assert played.won_by == "shortage"
    assert not any(
        t("en", "table.lowest_wins") in line for line in narration(PEACE, game, played, "en")
    )
    assert pill_pixels(played, "en") == 0
