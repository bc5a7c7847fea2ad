"""Message catalogs (nb, sv, da, en), localised cards and numbers, and the slash command translator.

Catalogs are gettext ``.po`` files in ``locales/`` with symbolic msgids (``"err.not_player"``),
read with Babel on first use; there is no compile step. English is the fallback for every locale
without a catalog (German, French, Finnish ...) and for keys a catalog lacks; Norwegian stays for
Discord's ``no`` (and ``nb``/``nn``). Placeholders are ``str.format`` fields.

A message shown with a number is stored as ``key.one``/``key.other``; ``t(..., count=n)`` picks
the CLDR plural form (falling back to ``.other``); the number itself is passed as a field like any
other. A key missing from both the language's catalog and the Norwegian one raises KeyError, so a
typo fails in the tests instead of showing a raw key to players; a missing ``{field}`` raises
KeyError too.

Dates are formatted for the reader's full locale, not for the catalog: en-US reads month first,
en-GB day first, and a locale without a catalog reads them as en-US does.

>>> t("en", "over.winner", name="Ada")
'Ada wins!'
>>> t("sv-SE", "table.takes", count=1, name="Ada", n=1)
'Ada tar 1 kort'
>>> t("de", "challenge.accept")
'Accept'
>>> fmt_date(datetime.date(2026, 12, 1), "en-US"), fmt_date(datetime.date(2026, 12, 1), "en-GB")
('Dec 1, 2026', '1 Dec 2026')
>>> card_label("QD", "nb"), card_label("JH", "da"), card_label("TS", "en"), card_label("X1", "sv")
('D♦', 'B♥', '10♠', '🃏 Joker')
>>> fmt_percent(0.46, "nb")
'46\\xa0%'
"""

from __future__ import annotations

import datetime
from functools import cache, lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, Protocol, get_args

from babel import Locale
from babel.dates import format_date
from babel.lists import format_list
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent

from krigbot.engine.cards import JOKER_VALUE, card_code, card_value, is_joker, parse_card

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from krigbot.i18n.translator import Translator

__all__ = [
    "FALLBACK",
    "LANGS",
    "REFERENCE",
    "Lang",
    "LocaleLike",
    "Translator",
    "card_label",
    "catalog",
    "fmt_date",
    "fmt_duration",
    "fmt_list",
    "fmt_number",
    "fmt_percent",
    "lang_for",
    "rank_name",
    "supported_lang",
    "t",
]

Lang = Literal["nb", "sv", "da", "en"]
LANGS: Final[tuple[Lang, ...]] = get_args(Lang)
FALLBACK: Final[Lang] = "en"
"""The language of every locale without a catalog, and of keys a catalog lacks."""
REFERENCE: Final[Lang] = "nb"
"""The catalog the messages are written in first; every other one has exactly its keys."""

_LOCALES_DIR: Final = Path(__file__).parent / "locales"

# Discord sends "no" for Norwegian; "nb"/"nn" are accepted so callers may pass a Lang or a
# standard language tag as well.
_LANG_BY_PRIMARY_SUBTAG: Final[dict[str, Lang]] = {
    "no": "nb",
    "nb": "nb",
    "nn": "nb",
    "sv": "sv",
    "da": "da",
    "en": "en",
}

# Numbers and lists in English follow British conventions ("Ada, Bo and Cy"); dates instead
# follow the reader's own locale (fmt_date), since only the reader can say which they expect.
_BABEL_LOCALE: Final[dict[Lang, str]] = {"nb": "nb", "sv": "sv", "da": "da", "en": "en_GB"}
_DATE_FALLBACK: Final = "en-US"
"""Dates for a locale without a catalog (and for plain "en"): Discord's default English."""

_SUITS: Final[dict[str, str]] = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_COURT_LETTERS: Final[dict[Lang, dict[int, str]]] = {
    "nb": {11: "Kn", 12: "D", 13: "K", 14: "E"},
    "sv": {11: "Kn", 12: "D", 13: "K", 14: "E"},
    "da": {11: "B", 12: "D", 13: "K", 14: "E"},
    "en": {11: "J", 12: "Q", 13: "K", 14: "A"},
}
_RANK_NAMES: Final[dict[Lang, dict[int, str]]] = {
    "nb": {11: "knekt", 12: "dame", 13: "konge", 14: "ess", 15: "joker"},
    "sv": {11: "knekt", 12: "dam", 13: "kung", 14: "ess", 15: "joker"},
    "da": {11: "knægt", 12: "dame", 13: "konge", 14: "es", 15: "joker"},
    "en": {11: "jack", 12: "queen", 13: "king", 14: "ace", 15: "joker"},
}


class _HasValue(Protocol):
    @property
    def value(self) -> str: ...


LocaleLike = str | _HasValue | None
"""A Lang, a language tag such as ``"sv-SE"``, a ``discord.Locale``, or None."""


def _tag(locale: str | _HasValue) -> str:
    # discord.Locale is an enum whose value is the tag; reading .value keeps discord optional here.
    return (locale if isinstance(locale, str) else locale.value).replace("_", "-")


def supported_lang(locale: LocaleLike) -> Lang | None:
    """Return the catalog language for a locale, or None when there is no catalog for it."""
    if locale is None:
        return None
    primary = _tag(locale).split("-", 1)[0].lower()
    return _LANG_BY_PRIMARY_SUBTAG.get(primary)


def lang_for(locale: LocaleLike) -> Lang:
    """Return the catalog language for a locale, English for every locale without a catalog."""
    return supported_lang(locale) or FALLBACK


def catalog_files(lang: Lang) -> list[Path]:
    """Return a language's .po files: the main one, then one per feature folder."""
    return [_LOCALES_DIR / f"{lang}.po", *sorted(_LOCALES_DIR.glob(f"*/{lang}.po"))]


@cache
def catalog(lang: Lang) -> Mapping[str, str]:
    """Return one language's messages by key, read from its .po files on first use.

    Features may keep their messages in ``locales/<feature>/<lang>.po``; a key may be defined
    in only one file, so two features can never silently override each other.
    """
    messages: dict[str, str] = {}
    for path in catalog_files(lang):
        with path.open("rb") as po:
            parsed = read_po(po, locale=_BABEL_LOCALE[lang], abort_invalid=True)
        for message in parsed:
            # Like msgfmt, treat fuzzy and empty entries as untranslated: the fallback shows.
            if not (
                isinstance(message.id, str)
                and message.id
                and isinstance(message.string, str)
                and message.string
                and not message.fuzzy
            ):
                continue
            if message.id in messages:
                raise ValueError(f"{path}: key {message.id!r} is already defined")
            messages[message.id] = message.string
    return MappingProxyType(messages)


@cache
def _babel_locale(lang: Lang) -> Locale:
    return Locale.parse(_BABEL_LOCALE[lang])


@lru_cache(maxsize=1024, typed=True)  # a table asks for a few counts; 1 and 1.0 differ
def _plural(lang: Lang, count: float) -> str:
    return _babel_locale(lang).plural_form(count)


def _lookup(lang: Lang, key: str, count: float | None) -> str | None:
    messages = catalog(lang)
    if count is not None:
        category = _plural(lang, count)
        for candidate in (f"{key}.{category}", f"{key}.other"):
            if candidate in messages:
                return messages[candidate]
    return messages.get(key)


def t(
    lang_or_locale: LocaleLike, key: str, /, *, count: float | None = None, **fields: object
) -> str:
    """Return message ``key`` in the locale's language and ``count``'s plural form, formatted."""
    lang = lang_for(lang_or_locale)
    for candidate in (lang, FALLBACK, REFERENCE):
        text = _lookup(candidate, key, count)
        if text is not None:
            return text.format(**fields)
    if count is None and f"{key}.other" in catalog(REFERENCE):
        raise KeyError(f"{key} has plural forms: pass count=")
    raise KeyError(key)


def card_label(card: int | str, lang: LocaleLike) -> str:
    """Return what players see for an engine card or its code ("QD" -> "D♦"); CardError if bad."""
    if isinstance(card, str):
        card = parse_card(card)
    code = card_code(card)  # validates an int card too
    language = lang_for(lang)
    if is_joker(card):
        return f"🃏 {t(language, 'card.joker')}"
    value = card_value(card)
    rank = _COURT_LETTERS[language].get(value, str(value))
    return f"{rank}{_SUITS[code[-1]]}"


def rank_name(value: int, lang: LocaleLike) -> str:
    """Return the spoken name of a card value 2–15 (12 -> "dame"); ValueError outside that range."""
    if not 2 <= value <= JOKER_VALUE:
        raise ValueError(f"not a card value: {value}")
    return _RANK_NAMES[lang_for(lang)].get(value, str(value))


def fmt_number(n: float, lang: LocaleLike) -> str:
    """Format a number the language's way ("12 345,5" in Norwegian)."""
    return format_decimal(n, locale=_babel_locale(lang_for(lang)))


def fmt_percent(x: float, lang: LocaleLike) -> str:
    """Format a fraction as a whole percentage the language's way (0.46 -> "46 %" in Norwegian)."""
    return format_percent(x, locale=_babel_locale(lang_for(lang)))


@cache
def _date_locale(tag: str) -> Locale:
    lang = supported_lang(tag)
    if lang is None or tag.lower() == "en":
        return Locale.parse(_DATE_FALLBACK, sep="-")
    try:
        # The region matters here: "en-GB" reads 1 Dec 2026, "en-US" Dec 1, 2026.
        return Locale.parse(tag, sep="-")
    except (ValueError, LookupError):
        return _babel_locale(lang)


def fmt_date(dt: datetime.date, locale: LocaleLike) -> str:
    """Format the calendar date of ``dt`` the reader's way ("1. des. 2026", "Dec 1, 2026").

    ``locale`` is the reader's full locale (a ``discord.Locale`` or a tag such as ``"en-GB"``),
    not only their catalog language. The month is named so that no reader can take the day for
    the month. The date is the one in UTC: the bot knows no reader's time zone.
    """
    tag = _DATE_FALLBACK if locale is None else _tag(locale)
    if isinstance(dt, datetime.datetime) and dt.tzinfo is not None:
        dt = dt.astimezone(datetime.UTC)
    return format_date(dt, format="medium", locale=_date_locale(tag))


_DURATION_UNITS: Final = (("unit.hours", 3600.0), ("unit.minutes", 60.0), ("unit.seconds", 1.0))


def fmt_duration(duration: datetime.timedelta, lang: LocaleLike) -> str:
    """Say a configured duration in words, exactly ("1,5 timer", "5 minutter", "90 sekunder").

    The largest unit that gives a whole number or one decimal is used: 5400 s is 1.5 hours,
    while 100 minutes stay 100 minutes rather than become a rounded 1.7 hours.

    >>> fmt_duration(datetime.timedelta(hours=1.5), "en")
    '1.5 hours'
    >>> fmt_duration(datetime.timedelta(seconds=300), "nb")
    '5 minutter'
    """
    seconds = duration.total_seconds()
    key, value = "unit.seconds", round(seconds, 1)
    for unit, size in _DURATION_UNITS:
        exact = seconds / size
        if exact >= 1 and abs(exact * 10 - round(exact * 10)) < 1e-6:
            key, value = unit, round(exact, 1)
            break
    number = int(value) if value == int(value) else value
    return t(lang, key, count=number, n=fmt_number(number, lang))


def fmt_list(items: Iterable[str], lang: LocaleLike) -> str:
    """Join names the language's way ("Ada, Bo og Cy" in Norwegian)."""
    return format_list(list(items), locale=_babel_locale(lang_for(lang)))


def __getattr__(name: str) -> object:
    # The translator needs discord.py; importing it lazily keeps the rest usable without it.
    if name == "Translator":
        from krigbot.i18n.translator import Translator

        return Translator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
