"""The declarative list of options that the command line and challenges are built from."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from krigbot.engine import (
    OPTION_KEYS,
    OPTIONS,
    RULE_OPTION_KEYS,
    Option,
    Rules,
    RulesError,
    parse_option,
)


def test_every_option_of_the_rules_is_described_once_in_the_saved_order() -> None:
    fields = [field.name for field in dataclasses.fields(Rules) if field.name != "preset_name"]
    assert sorted(OPTION_KEYS) == sorted(fields)
    assert len(set(OPTION_KEYS)) == len(OPTION_KEYS)
    assert tuple(Rules.preset("standard").to_dict())[1:] == OPTION_KEYS


def test_the_variant_and_the_players_are_chosen_apart_from_the_rules() -> None:
    assert set(OPTION_KEYS) - set(RULE_OPTION_KEYS) == {"variant", "players"}


@pytest.mark.parametrize(
    ("key", "value"),
    [(o.key, c) for o in OPTIONS if o.kind == "choice" and o.key != "variant" for c in o.choices],
)
def test_every_choice_listed_is_accepted_and_parses_from_its_text(key: str, value: object) -> None:
    assert parse_option(key, str(value).upper()) == value
    options: dict[str, Any] = {key: value}
    assert getattr(Rules.preset("standard", **options), key) == value


@pytest.mark.parametrize(
    "option", [o for o in OPTIONS if o.low is not None], ids=lambda o: str(o.key)
)
def test_the_range_given_is_the_range_the_rules_accept(option: Option) -> None:
    key, low, high = option.key, option.low, option.high
    assert low is not None
    assert high is not None
    assert getattr(Rules.preset("standard", **{key: low}), key) == low
    assert getattr(Rules.preset("standard", **{key: high}), key) == high
    if option.kind == "limit":
        assert parse_option(key, "none") is None
    for outside in (low - 1, high + 1):
        with pytest.raises(RulesError):
            Rules.preset("standard", **{key: outside})


def test_a_flag_reads_the_usual_words() -> None:
    assert [parse_option("points", word) for word in ("on", "YES", "1", "off", "no")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    with pytest.raises(RulesError, match="points must be true or false"):
        parse_option("points", "maybe")
