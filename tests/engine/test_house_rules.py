"""What every house rule of rules §1 owes, written once for each option declared as one.

A house rule is off in every preset (rules §11), Steal War refuses it naming it (rules §10),
rules saved before it existed load with it off, it is a flag of exact type, and the fast path
plays the same games as the general one with it on (or leaves them to the general path). What a
house rule does to the cards is tested in its own file (tests/engine/test_peace.py, ...).
"""

from __future__ import annotations

from typing import Any

import pytest

from krigbot.engine import (
    HOUSE_RULES,
    PRESETS,
    FixedOptionError,
    Game,
    Rules,
    RulesError,
    fast,
    run_to_end,
)
from krigbot.engine.rules import OPTIONS_BY_KEY
from krigbot.i18n import LANGS, Lang, catalog, t
from tests.support.deals import play
from tests.support.house_rules import HOUSE_RULES as DECLARED
from tests.support.house_rules import with_house_rule


def test_the_house_rules_are_every_option_declared_as_one_both_of_them_among_them() -> None:
    # Parametrised over an empty list, every test of this file would pass without running.
    assert DECLARED
    assert {"two_beats_ace", "lowest_wins"} <= set(DECLARED)
    assert HOUSE_RULES == DECLARED


@pytest.mark.parametrize("key", DECLARED)
def test_a_house_rule_is_a_flag_off_in_every_preset(key: str) -> None:
    assert OPTIONS_BY_KEY[key].kind == "flag"
    assert getattr(Rules(), key) is False
    for name in PRESETS:
        assert getattr(Rules.preset(name), key) is False, name
    assert getattr(with_house_rule(key), key) is True


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("key", DECLARED)
def test_steal_war_refuses_a_house_rule_naming_it_whatever_the_value(key: str, value: bool) -> None:
    # rules §10: Steal War plays no house rule, and says which one it cannot play.
    with pytest.raises(FixedOptionError, match=f"^{key} cannot be set for variant stjel") as caught:
        Rules.preset("stjel", **{key: value})
    assert (caught.value.option, caught.value.variant) == (key, "stjel")
    with pytest.raises(FixedOptionError, match=f"^{key} cannot be set"):
        Rules.preset("stjel").replace(**{key: value})
    with pytest.raises(FixedOptionError, match=f"^{key} cannot be set"):
        Rules.preset("standard", variant="stjel", jokers=2, **{key: value})


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("key", DECLARED)
def test_steal_wars_refusal_of_a_house_rule_is_written_in_every_language(
    key: str, lang: Lang
) -> None:
    # In the language's own catalog: t() would fall back to English for a missing key.
    assert f"err.fixed.{key}" in catalog(lang)
    variant = t(lang, "variant.stjel.name")
    assert variant in t(lang, f"err.fixed.{key}", variant=variant)


@pytest.mark.parametrize("key", DECLARED)
def test_rules_saved_before_a_house_rule_existed_load_with_it_off(key: str) -> None:
    saved = Rules.preset("klassisk").to_dict()
    del saved[key]
    loaded = Rules.from_dict(saved)
    assert loaded == Rules.preset("klassisk")
    assert getattr(loaded, key) is False


@pytest.mark.parametrize("value", ["no", "false", "true", "", 0, 1, None])
@pytest.mark.parametrize("key", DECLARED)
def test_a_house_rule_asked_for_with_anything_but_a_boolean_is_refused_not_played(
    key: str, value: Any
) -> None:
    # "no" is a true value in Python: taken as it was, it would turn the house rule on.
    with pytest.raises(RulesError, match=rf"^{key} must be true or false"):
        Rules.preset("standard", **{key: value})
    with pytest.raises(RulesError, match=rf"^{key} must be true or false"):
        Rules.preset("standard").replace(**{key: value})
    with pytest.raises(RulesError, match=rf"^{key} must be true or false"):
        Rules.from_dict({**Rules.preset("klassisk").to_dict(), key: value})


def fast_path_plays(key: str) -> bool:
    """Tell whether the fast path declares that it plays the house rule turned on."""
    allowed = fast.FAST_OPTIONS[key]
    return allowed is fast.EVERY or True in allowed


@pytest.mark.parametrize("preset", ["standard", "klassisk", "razboi", "jokere"])
@pytest.mark.parametrize("key", DECLARED)
def test_the_fast_path_plays_a_house_rule_inline_only_where_it_declares_it(
    key: str, preset: str
) -> None:
    rules = with_house_rule(key, preset)
    assert fast.plays_inline(rules) is fast_path_plays(key)
    assert fast.plays_inline(rules.replace(**{key: False}))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("preset", ["standard", "klassisk", "razboi", "jokere"])
@pytest.mark.parametrize("key", DECLARED)
def test_whole_games_with_a_house_rule_are_the_same_on_both_paths(
    key: str, preset: str, seed: int
) -> None:
    # run_to_end plays them inline, or hands them to the general path: the same game either way.
    rules = with_house_rule(key, preset)
    slow = Game.new(rules, seed)
    play(slow, 1_000_000)
    quick = Game.new(rules, seed)
    assert run_to_end(quick) == slow.outcome
    assert quick.to_dict() == slow.to_dict()
