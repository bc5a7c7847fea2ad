"""A round won by a house rule (rules §1) says so, for every option declared as a house rule: a
narration line just before who takes the cards, and a pill on the picture's header.

The wording of each rule's line and its own examples are in its own file
(tests/render/test_peace.py, tests/render/test_table.py for ``two_beats_ace``).
"""

from __future__ import annotations

import functools

import pytest

from krigbot.engine import Game, Round, Rules
from krigbot.i18n import LANGS, Lang, catalog, t
from krigbot.render.reasons import NAMED
from tests.support.house_rule_table import narration, pill_pixels
from tests.support.house_rules import HOUSE_RULES, with_house_rule

EMOJI: dict[str, str] = {reason: emoji for reason, emoji in NAMED.items()}
"""The emoji each reason the table names starts its narration line with."""


def first_round(rules: Rules, seed: int) -> tuple[Game, Round]:
    game = Game.new(rules, seed)
    return game, game.play_round()


@functools.cache
def battle_seed(key: str) -> int:
    """Return the first seed whose first round is a battle, no war, won by the house rule."""
    rules = with_house_rule(key)
    for seed in range(5000):
        played = first_round(rules, seed)[1]
        if played.won_by == key and not played.is_war:
            return seed
    raise AssertionError(f"no deal found whose first battle {key} decides")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("key", HOUSE_RULES)
def test_a_house_rules_line_and_pill_are_written_in_every_language(key: str, lang: Lang) -> None:
    # In the language's own catalog: t() would fall back to English for a missing key.
    assert key in EMOJI
    assert f"table.{key}" in catalog(lang)
    assert f"picture.{key}" in catalog(lang)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("key", HOUSE_RULES)
def test_a_battle_won_by_a_house_rule_is_told_before_who_takes_it_and_has_its_pill(
    key: str, lang: Lang
) -> None:
    rules = with_house_rule(key)
    game, played = first_round(rules, battle_seed(key))
    lines = narration(rules, game, played, lang)
    said = f"{EMOJI[key]} {t(lang, f'table.{key}')}"
    assert said in lines
    takes = next(i for i, line in enumerate(lines) if line.startswith("➜ "))
    assert lines.index(said) == takes - 1
    assert pill_pixels(played, lang) > 2000


@pytest.mark.parametrize("key", HOUSE_RULES)
def test_the_same_deal_without_the_house_rule_says_nothing_of_it(key: str) -> None:
    rules = Rules.preset("standard")
    game, played = first_round(rules, battle_seed(key))
    assert played.won_by == "highest"
    lines = narration(rules, game, played, "en")
    assert not any(t("en", f"table.{key}") in line for line in lines)
    assert pill_pixels(played, "en") == 0
