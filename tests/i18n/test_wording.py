"""What a native reader of each catalog would trip over: grammar, words that change, duplicates."""

from __future__ import annotations

import datetime
import re

import pytest

from krigbot.i18n import LANGS, Lang, catalog, fmt_duration, t

# These tests read the catalogs' own wording, so their exact texts are deliberate: a rewording
# that trips one should be read by someone who speaks the language before the test is changed.
LOOT_PILE = {"nb": "byttebunke", "sv": "bytehög", "da": "byttebunke", "en": "loot pile"}
OTHER_LOOT_WORDS = {"nb": ["fangstbunke"], "sv": ["fångsthög"], "da": ["fangstbunke"], "en": []}


def test_swedish_writes_no_ordinal_suffix_after_a_number_it_does_not_know() -> None:
    # Swedish ordinals end :a after 1 and 2 (2:a, 22:a) and :e otherwise: "var {n}:e" is wrong
    # for half the numbers. The messages say it without an ordinal.
    suffixed = {key: text for key, text in catalog("sv").items() if re.search(r"\}:[ae]\b", text)}
    assert suffixed == {}
    assert "2:e" not in t("sv", "over.reason.eternal_cycle", count=2, n=2)
    assert "22:e" not in t("sv", "summary.eternal", count=22, n=22, start=5)


@pytest.mark.parametrize("lang", LANGS)
def test_the_loot_pile_has_one_name_in_each_language(lang: Lang) -> None:
    texts = "\n".join(catalog(lang).values()).lower()
    assert LOOT_PILE[lang] in texts
    assert [word for word in OTHER_LOOT_WORDS[lang] if word in texts] == []


def test_swedish_calls_a_game_a_parti_wherever_it_has_a_number() -> None:
    assert t("sv", "game.id", game=7) == "Parti #7"
    numbered = [text for text in catalog("sv").values() if re.search(r"\bSpel #", text)]
    assert numbered == []


def test_danish_uses_the_reflexive_possessive_after_a_singular_subject() -> None:
    assert "Ingen kigger på sine kort." in catalog("da")["rules.basic"]


def test_the_english_figures_of_a_result_are_written_alike() -> None:
    figures = t("en", "over.stats", rounds=5, wars=2, pot=10)
    summary = t("en", "summary.rounds", rounds=5, wars=2, changes=1)
    assert figures == "Rounds: 5 · wars: 2 · biggest pot: 10 cards"
    assert summary.startswith("Rounds: 5 · wars: 2 · ")


@pytest.mark.parametrize(
    ("duration", "texts"),
    [
        (
            datetime.timedelta(hours=1.5),
            {"nb": "1,5 timer", "sv": "1,5 timmar", "da": "1,5 time", "en": "1.5 hours"},
        ),
        (
            datetime.timedelta(minutes=5),
            {"nb": "5 minutter", "sv": "5 minuter", "da": "5 minutter", "en": "5 minutes"},
        ),
        (
            datetime.timedelta(minutes=1),
            {"nb": "1 minutt", "sv": "1 minut", "da": "1 minut", "en": "1 minute"},
        ),
        (
            datetime.timedelta(seconds=90),
            {"nb": "1,5 minutter", "sv": "1,5 minuter", "da": "1,5 minut", "en": "1.5 minutes"},
        ),
        (
            datetime.timedelta(minutes=100),
            {"nb": "100 minutter", "sv": "100 minuter", "da": "100 minutter", "en": "100 minutes"},
        ),
        (
            datetime.timedelta(seconds=45),
            {"nb": "45 sekunder", "sv": "45 sekunder", "da": "45 sekunder", "en": "45 seconds"},
        ),
    ],
)
def test_durations_are_said_exactly_in_the_largest_fitting_unit(
    duration: datetime.timedelta, texts: dict[Lang, str]
) -> None:
    assert {lang: fmt_duration(duration, lang) for lang in texts} == texts
