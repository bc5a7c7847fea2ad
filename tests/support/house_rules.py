"""The house rules (rules §1) as the engine declares them, for tests written once for every one.

A house rule is an option declared with ``house_rule=True`` in ``krigbot.engine.rules.OPTIONS``:
a flag off in every preset that players may turn on for one game. The list is read from those
declarations, not from ``krigbot.engine.HOUSE_RULES``, so a test parametrised over it covers a
new house rule as soon as it is declared, and checks the product's own list against it.
"""

from __future__ import annotations

from typing import Any

from krigbot.engine import Rules
from krigbot.engine.rules import OPTIONS

HOUSE_RULES: tuple[str, ...] = tuple(option.key for option in OPTIONS if option.house_rule)
"""The key of every option declared as a house rule, in the order of ``OPTIONS``."""


def with_house_rule(key: str, preset: str = "standard", **options: Any) -> Rules:
    """Return a preset's rules with the house rule ``key`` turned on (and other options)."""
    return Rules.preset(preset, **{key: True}, **options)
