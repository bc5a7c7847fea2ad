"""Languages, translation with fallback and plurals, cards and numbers as players see them."""

from __future__ import annotations

import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING

import discord
import pytest

import krigbot.i18n
from krigbot.engine import CardError, parse_card
from krigbot.i18n import (
    Lang,
    card_label,
    catalog,
    fmt_date,
    fmt_list,
    fmt_number,
    fmt_percent,
    lang_for,
    rank_name,
    supported_lang,
    t,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

JOKER = {lang: f"🃏 {catalog(lang)['card.joker']}" for lang in ("nb", "sv", "da", "en")}


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        (discord.Locale.norwegian, "nb"),
        (discord.Locale.swedish, "sv"),
        (discord.Locale.danish, "da"),
        (discord.Locale.american_english, "en"),
        (discord.Locale.british_english, "en"),
        (discord.Locale.german, "en"),
        (discord.Locale.finnish, "en"),
        (discord.Locale.french, "en"),
        (discord.Locale.polish, "en"),
        ("no", "nb"),
        ("sv-SE", "sv"),
        ("da", "da"),
        ("en-GB", "en"),
        ("nb", "nb"),
        ("nn-NO", "nb"),
        ("sv_SE", "sv"),
        ("EN-us", "en"),
        ("pt-BR", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_lang_for_maps_discord_locales_to_catalogs(
    locale: discord.Locale | str | None, lang: Lang
) -> None:
    assert lang_for(locale) == lang


def test_only_scandinavian_and_english_locales_are_supported() -> None:
    supported = {locale.value for locale in discord.Locale if supported_lang(locale)}
    assert supported == {"no", "sv-SE", "da", "en-US", "en-GB"}


def test_t_formats_named_fields() -> None:
    body = catalog("en")["challenge.body"]
    assert "{challenger}" in body
    assert "{players}" in body
    shown = t("en", "challenge.body", challenger="Ada", players="Bo")
    assert shown == body.replace("{challenger}", "Ada").replace("{players}", "Bo")
    winner = t(discord.Locale.swedish, "over.winner", name="Ada")
    assert winner == catalog("sv")["over.winner"].replace("{name}", "Ada")


def test_t_speaks_english_to_a_locale_without_a_catalog() -> None:
    assert t("fr", "err.self") == catalog("en")["err.self"]
    assert t(discord.Locale.german, "err.self") == catalog("en")["err.self"]
    assert t(None, "over.draw") == t("en", "over.draw")


@pytest.mark.parametrize("locale", ["no", "nb", "nn", "nb-NO", discord.Locale.norwegian])
def test_t_speaks_norwegian_to_every_norwegian_locale(locale: discord.Locale | str) -> None:
    assert t(locale, "err.self") == catalog("nb")["err.self"]


def test_t_falls_back_to_english_for_a_key_a_catalog_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def without_swedish_err_self(lang: Lang) -> Mapping[str, str]:
        messages = dict(catalog.__wrapped__(lang))
        if lang == "sv":
            del messages["err.self"]
        return MappingProxyType(messages)

    monkeypatch.setattr(krigbot.i18n, "catalog", without_swedish_err_self)
    assert t("sv", "err.self") == catalog("en")["err.self"]
    assert t("sv", "err.bot") == catalog("sv")["err.bot"]


def test_t_raises_key_error_for_a_key_no_catalog_has() -> None:
    with pytest.raises(KeyError, match=r"err\.no_such_key"):
        t("en", "err.no_such_key")


def test_t_asks_for_count_when_a_plural_key_is_used_without_it() -> None:
    with pytest.raises(KeyError, match="count"):
        t("en", "table.takes", name="Ada", n=2)


def test_t_raises_key_error_for_a_missing_field() -> None:
    with pytest.raises(KeyError, match="name"):
        t("en", "over.winner")


@pytest.mark.parametrize(
    ("lang", "count", "form"),
    [
        ("en", 1, "one"),
        ("en", 2, "other"),
        ("en", 0, "other"),
        ("nb", 1, "one"),
        ("da", 6, "other"),
    ],
)
def test_t_picks_the_plural_form_for_count(lang: Lang, count: int, form: str) -> None:
    expected = catalog(lang)[f"table.takes.{form}"].format(name="Ada", n=count)
    assert t(lang, "table.takes", count=count, name="Ada", n=count) == expected


@pytest.mark.parametrize(
    ("lang", "one", "many"),
    [
        ("nb", "Høyst 1 runde", "Høyst 50 runder"),
        ("sv", "Högst 1 omgång", "Högst 50 omgångar"),
        ("da", "Højst 1 runde", "Højst 50 runder"),
        ("en", "At most 1 round", "At most 50 rounds"),
    ],
)
def test_round_limit_is_singular_for_one_round(lang: Lang, one: str, many: str) -> None:
    # Exact wording on purpose: this checks each catalog's grammar, that one round is singular.
    assert t(lang, "rule.max_rounds", count=1, n=1) == one
    assert t(lang, "rule.max_rounds", count=50, n=50) == many


@pytest.mark.parametrize(
    ("code", "labels"),
    [
        ("QD", {"nb": "D♦", "sv": "D♦", "da": "D♦", "en": "Q♦"}),
        ("JH", {"nb": "Kn♥", "sv": "Kn♥", "da": "B♥", "en": "J♥"}),
        ("AS", {"nb": "E♠", "sv": "E♠", "da": "E♠", "en": "A♠"}),
        ("KC", {"nb": "K♣", "sv": "K♣", "da": "K♣", "en": "K♣"}),
        ("TS", {"nb": "10♠", "sv": "10♠", "da": "10♠", "en": "10♠"}),
        ("2D", {"nb": "2♦", "sv": "2♦", "da": "2♦", "en": "2♦"}),
        ("X1", JOKER),
        ("X2", JOKER),
    ],
)
def test_card_label_shows_the_local_rank_and_suit(code: str, labels: dict[Lang, str]) -> None:
    assert {lang: card_label(code, lang) for lang in labels} == labels


def test_card_label_shows_an_engine_card_like_its_code() -> None:
    assert card_label(parse_card("JC"), discord.Locale.danish) == "B♣"
    assert card_label(parse_card("X2"), "en") == JOKER["en"]


@pytest.mark.parametrize("card", ["", "Q", "QDX", "1S", "QX", "10S", "X3", "XS", -1, 400])
def test_card_label_rejects_what_is_not_a_card(card: str | int) -> None:
    with pytest.raises(CardError):
        card_label(card, "nb")


@pytest.mark.parametrize(
    ("value", "names"),
    [
        (11, {"nb": "knekt", "sv": "knekt", "da": "knægt", "en": "jack"}),
        (12, {"nb": "dame", "sv": "dam", "da": "dame", "en": "queen"}),
        (13, {"nb": "konge", "sv": "kung", "da": "konge", "en": "king"}),
        (14, {"nb": "ess", "sv": "ess", "da": "es", "en": "ace"}),
        (15, {"nb": "joker", "sv": "joker", "da": "joker", "en": "joker"}),
        (8, {"nb": "8", "sv": "8", "da": "8", "en": "8"}),
    ],
)
def test_rank_name_gives_the_spoken_name(value: int, names: dict[Lang, str]) -> None:
    assert {lang: rank_name(value, lang) for lang in names} == names


@pytest.mark.parametrize("value", [1, 16])
def test_rank_name_rejects_values_that_are_not_cards(value: int) -> None:
    with pytest.raises(ValueError, match="card value"):
        rank_name(value, "en")


@pytest.mark.parametrize(
    ("lang", "percent", "number", "date", "names"),
    [
        ("nb", "46\xa0%", "12\xa0345,5", "29. nov. 2025", "Ada, Bo og Cy"),
        ("sv", "46\xa0%", "12\xa0345,5", "29 nov. 2025", "Ada, Bo och Cy"),
        ("da", "46\xa0%", "12.345,5", "29. nov. 2025", "Ada, Bo og Cy"),
        ("en", "46%", "12,345.5", "Nov 29, 2025", "Ada, Bo and Cy"),
    ],
)
def test_numbers_dates_and_lists_follow_the_language(
    lang: Lang, percent: str, number: str, date: str, names: str
) -> None:
    assert fmt_percent(0.456, lang) == percent
    assert fmt_number(12345.5, lang) == number
    assert fmt_date(datetime.datetime(2025, 11, 29, 23, 30, tzinfo=datetime.UTC), lang) == date
    assert fmt_list(["Ada", "Bo", "Cy"], lang) == names


@pytest.mark.parametrize(
    ("locale", "date"),
    [
        (discord.Locale.american_english, "Dec 1, 2026"),
        (discord.Locale.british_english, "1 Dec 2026"),
        (discord.Locale.norwegian, "1. des. 2026"),
        (discord.Locale.swedish, "1 dec. 2026"),
        (discord.Locale.danish, "1. dec. 2026"),
        ("nn-NO", "1. des. 2026"),
        (discord.Locale.german, "Dec 1, 2026"),
        (discord.Locale.french, "Dec 1, 2026"),
        ("en", "Dec 1, 2026"),
        (None, "Dec 1, 2026"),
    ],
)
def test_dates_follow_the_readers_full_locale_and_english_for_the_rest(
    locale: discord.Locale | str | None, date: str
) -> None:
    # 23:30 in UTC: the date shown is the UTC one whatever the reader's language.
    assert fmt_date(datetime.datetime(2026, 12, 1, 23, 30, tzinfo=datetime.UTC), locale) == date
