"""Typed errors of the engine; each is a ``ValueError`` so callers can catch them broadly."""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises on bad input."""


class RulesError(EngineError):
    """An unknown variant or option, or options that cannot be combined."""


class FixedOptionError(RulesError):
    """An option the variant fixes was set to something else (Steal War, rules §10)."""

    def __init__(self, option: str, variant: str, fixed: object) -> None:
        super().__init__(
            f"{option} cannot be set for variant {variant}: it always plays {option}={fixed}"
        )
        self.option = option
        """The option that was set, a key of docs/rules.md (``shortage``)."""
        self.variant = variant
        """The preset whose rules fix it (``stjel``)."""


class CardError(EngineError):
    """A card code that is not in the notation of rules §1."""


class DealError(EngineError):
    """A deal that cannot be played: wrong number of piles, an empty pile, too many copies."""


class PlayerError(EngineError):
    """A seat that does not exist or is no longer in the game."""


class GameOverError(EngineError):
    """A move was asked of a game that has already ended."""


class ChoiceError(EngineError):
    """A Steal War choice that is not among the pending ones."""


class StateError(EngineError):
    """A saved game that cannot be restored (unknown format version or damaged data)."""
