"""The four catalogs agree with each other and with Discord's limits."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from string import Formatter
from typing import get_args

import pytest

from krigbot.engine import END_REASONS, PRESETS
from krigbot.engine.rules import Pickup, Shortage
from krigbot.i18n import LANGS, Lang, catalog, catalog_files
from tests.support.discord_limits import (
    CHOICE_KEYS,
    DESCRIPTION_KEYS,
    NAME_KEYS,
    is_discord_name,
    keys_like,
)

LOCALES_DIR = Path(__file__).parents[2] / "krigbot" / "i18n" / "locales"
PLURAL_SUFFIX = re.compile(r"\.(zero|one|two|few|many|other)$")
RULES_LIMIT = 1000  # one embed field value is 1024 characters


def placeholders(text: str) -> set[str]:
    """Return the names of the str.format fields in a message."""
    return {field for _, field, _, _ in Formatter().parse(text) if field is not None}


@pytest.mark.parametrize("lang", LANGS)
def test_every_catalog_has_exactly_the_norwegian_keys(lang: Lang) -> None:
    expected = set(catalog("nb"))
    if lang == "en":
        # The English descriptions of commands and options are the code's (docstrings, describe).
        expected -= set(keys_like("nb", DESCRIPTION_KEYS))
    assert set(catalog(lang)) == expected


@pytest.mark.parametrize("lang", LANGS)
def test_no_catalog_repeats_a_key(lang: Lang) -> None:
    # Babel keeps the first of two equal msgids silently, so a repeated key would hide an edit.
    text = "\n".join(path.read_text(encoding="utf-8") for path in catalog_files(lang))
    counts = Counter(re.findall(r'^msgid "(.+)"$', text, flags=re.MULTILINE))
    assert [key for key, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_has_the_same_placeholders_as_norwegian(lang: Lang) -> None:
    norwegian = catalog("nb")
    differing = {
        key: (placeholders(text), placeholders(norwegian[key]))
        for key, text in catalog(lang).items()
        if placeholders(text) != placeholders(norwegian[key])
    }
    assert differing == {}


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_formats_with_its_placeholders(lang: Lang) -> None:
    for text in catalog(lang).values():
        text.format(**dict.fromkeys(placeholders(text), "x"))  # a stray brace raises here


def test_plural_keys_have_one_and_other_and_no_plain_twin() -> None:
    keys = set(catalog("nb"))
    bases = {PLURAL_SUFFIX.sub("", key) for key in keys if PLURAL_SUFFIX.search(key)}
    assert bases, "the catalogs should have plural keys"
    for base in bases:
        assert {f"{base}.one", f"{base}.other"} <= keys, base
        assert base not in keys, base


def test_english_names_are_the_canonical_command_and_option_names() -> None:
    names = keys_like("en", NAME_KEYS)
    assert {key: text for key, text in names.items() if key.split(".")[-2] != text} == {}


@pytest.mark.parametrize("lang", LANGS)
def test_command_and_option_names_fit_discords_name_rules(lang: Lang) -> None:
    names = keys_like(lang, NAME_KEYS)
    assert names
    assert [text for text in names.values() if not is_discord_name(text)] == []


@pytest.mark.parametrize("lang", LANGS)
def test_command_and_option_names_are_unique_within_a_language(lang: Lang) -> None:
    for prefix in ("cmd", "opt"):
        names = list(keys_like(lang, rf"{prefix}\.\w+\.name").values())
        assert len(names) == len(set(names)), names


@pytest.mark.parametrize("lang", LANGS)
def test_descriptions_and_choice_names_fit_discords_length_limits(lang: Lang) -> None:
    texts = keys_like(lang, DESCRIPTION_KEYS) | keys_like(lang, CHOICE_KEYS)
    assert texts
    assert {key: text for key, text in texts.items() if not 1 <= len(text) <= 100} == {}


@pytest.mark.parametrize("lang", LANGS)
def test_rules_texts_fit_in_an_embed_field(lang: Lang) -> None:
    rules = keys_like(lang, r"rules\..+")
    assert "rules.basic" in rules
    assert {key: len(text) for key, text in rules.items() if len(text) > RULES_LIMIT} == {}


def test_every_engine_preset_has_a_name_and_a_rules_text() -> None:
    names = {key.split(".")[1] for key in keys_like("nb", r"variant\.\w+\.name")}
    texts = {key.split(".")[2] for key in keys_like("nb", r"rules\.variant\.\w+")}
    assert names == texts == set(PRESETS)


def test_every_end_reason_and_option_value_has_a_text() -> None:
    keys = set(catalog("nb"))
    reasons = {PLURAL_SUFFIX.sub("", key) for key in keys if key.startswith("over.reason.")}
    assert {f"over.reason.{reason}" for reason in END_REASONS} <= reasons
    for option, values in (("pickup", get_args(Pickup)), ("shortage", get_args(Shortage))):
        assert {f"{option}.{value}" for value in values} <= keys
        assert {f"rule.{option}.{value}" for value in values} <= keys
