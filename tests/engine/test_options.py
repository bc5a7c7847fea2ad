"""The declarative list of options that the command line and challenges are built from."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from krigbot.engine import (
    OPTION_KEYS,
    OPTIONS,
    PRESETS,
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


FLAGS = [option.key for option in OPTIONS if option.kind == "flag"]


@pytest.mark.parametrize("key", FLAGS)
@pytest.mark.parametrize("value", ["no", "false", "true", "", 0, 1, None])
def test_a_flag_is_a_boolean_in_the_api_and_in_stored_rules(key: str, value: Any) -> None:
    # "no" is a true value in Python: taken as it was, it would turn the option on.
    with pytest.raises(RulesError, match=rf"^{key} must be true or false"):
        Rules.preset("standard", **{key: value})
    with pytest.raises(RulesError, match=rf"^{key} must be true or false"):
        Rules.preset("standard").replace(**{key: value})
    with pytest.raises(RulesError, match=rf"^{key} must be true or false"):
        Rules.from_dict({**Rules.preset("standard").to_dict(), key: value})


def test_a_flag_stored_as_a_word_is_refused_not_played() -> None:
    with pytest.raises(RulesError, match="wide_war"):
        Rules.from_dict({**Rules.preset("klassisk").to_dict(), "wide_war": "false"})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("face_down", True),  # True == 1, yet no number of cards
        ("face_down", "3"),
        ("face_down", 3.0),
        ("jokers", 2.0),
        ("decks", False),
        ("shortage", "LOSE"),
        ("pickup", None),
        ("players", True),
        ("players", 2.0),
        ("max_rounds", True),
        ("max_rounds", "50"),
        ("target_tricks", 2.5),
        ("time_limit", "5"),
        ("time_limit", False),
    ],
)
def test_a_choice_or_a_number_of_another_type_is_refused(key: str, value: Any) -> None:
    with pytest.raises(RulesError, match=rf"^{key} must be "):
        Rules.preset("standard", **{key: value})
    saved = {**Rules.preset("standard").to_dict(), key: value}
    with pytest.raises(RulesError, match=rf"^{key} must be "):
        Rules.from_dict(saved)


def test_stored_rules_are_typed_json_and_load_as_they_were_saved() -> None:
    # The storage writes Rules.to_dict() with json.dumps: flags are JSON true and false.
    for name in PRESETS:
        house: dict[str, Any] = {} if name == "stjel" else {"two_beats_ace": True}
        rules = Rules.preset(name, **house)
        text = json.dumps(rules.to_dict())
        assert '"teams": true' in text or '"teams": false' in text
        assert Rules.from_dict(json.loads(text)) == rules


def test_a_flag_stored_as_a_number_is_refused_even_after_the_boolean_was_loaded() -> None:
    saved = Rules.preset("standard").to_dict()
    assert Rules.from_dict(saved).points is False  # cached by its items
    with pytest.raises(RulesError, match=r"^points must be true or false"):
        Rules.from_dict({**saved, "points": 0})  # 0 == False: the cache must not answer it
