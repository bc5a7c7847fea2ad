"""The rules of Krig, apart from Discord, SQL and language (docs/rules.md).

The engine imports nothing of the project; everything else builds on it. Throughout the code,
"rules §N" cites the numbered section N of docs/rules.md.
"""

from __future__ import annotations

from .cards import card_code, card_value, format_cards, full_deck, is_joker, parse_card, parse_cards
from .errors import (
    CardError,
    ChoiceError,
    DealError,
    EngineError,
    FixedOptionError,
    GameOverError,
    PlayerError,
    RulesError,
    StateError,
)
from .events import END_REASONS, EndReason, Outcome, Round, WarStep
from .fast import find_repetition, run_to_end
from .game import Game
from .rules import (
    HOUSE_RULES,
    OPTION_KEYS,
    OPTIONS,
    PRESETS,
    RULE_OPTION_KEYS,
    Option,
    Rules,
    find_preset,
    parse_option,
)
from .steal import StealGame
from .variant import Variant, find_variant, load_game, new_game, variants_with_choices

__all__ = [
    "END_REASONS",
    "HOUSE_RULES",
    "OPTIONS",
    "OPTION_KEYS",
    "PRESETS",
    "RULE_OPTION_KEYS",
    "CardError",
    "ChoiceError",
    "DealError",
    "EndReason",
    "EngineError",
    "FixedOptionError",
    "Game",
    "GameOverError",
    "Option",
    "Outcome",
    "PlayerError",
    "Round",
    "Rules",
    "RulesError",
    "StateError",
    "StealGame",
    "Variant",
    "WarStep",
    "card_code",
    "card_value",
    "find_preset",
    "find_repetition",
    "find_variant",
    "format_cards",
    "full_deck",
    "is_joker",
    "load_game",
    "new_game",
    "parse_card",
    "parse_cards",
    "parse_option",
    "run_to_end",
    "variants_with_choices",
]
