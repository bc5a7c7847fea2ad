"""The rules a game is played by: every option of docs/rules.md and the presets of rules §11.

>>> Rules.preset("klassisk").face_down
3
>>> Rules.preset("standard", players=3).pickup
'shuffled'
>>> Rules.preset("poeng").max_rounds
50
>>> Rules.preset("standard").replace(face_down="rank").face_down
'rank'
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .errors import FixedOptionError, RulesError

FaceDown: TypeAlias = int | Literal["rank"]
Shortage: TypeAlias = Literal["lose", "last_card"]
Pickup: TypeAlias = Literal["winner_first", "table", "shuffled"]
WarPlayers: TypeAlias = Literal["tied", "all"]
VariantName: TypeAlias = Literal["krig", "stjel"]

FACE_DOWN_CHOICES: tuple[FaceDown, ...] = (1, 3, 5, "rank")
SHORTAGES: tuple[Shortage, ...] = ("lose", "last_card")
PICKUPS: tuple[Pickup, ...] = ("winner_first", "table", "shuffled")
WAR_PLAYERS: tuple[WarPlayers, ...] = ("tied", "all")
DEFAULT_POINTS_ROUNDS = 50
MAX_ROUND_LIMIT = 1_000_000
MIN_TIME_LIMIT = 1
MAX_TIME_LIMIT = 24 * 60
"""``time_limit`` is in whole minutes: at least one, at most a day (rules §7)."""

# rules §11: a preset is only a starting point; each entry lists what differs from `standard`.
PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "klassisk": {"face_down": 3, "shortage": "last_card", "wide_war": True},
    "fem": {"face_down": 5},
    "razboi": {"face_down": "rank"},
    "jokere": {"jokers": 2},
    "hurtig": {"target_tricks": 10},
    # 002's "best av 3 eller 5 runder": the first to win 2 of 3 (3 of 5) rounds.
    "best3": {"target_tricks": 2},
    "best5": {"target_tricks": 3},
    "poeng": {"points": True, "max_rounds": DEFAULT_POINTS_ROUNDS},
    "dobbel": {"decks": 2},
    "lag": {"teams": True, "players": 4},
    "stjel": {"variant": "stjel", "jokers": 2, "face_down": 3, "shortage": "lose"},
}
PRESET_ALIASES = {"război": "razboi", "razboj": "razboi", "steal": "stjel", "classic": "klassisk"}

OptionKind: TypeAlias = Literal["choice", "flag", "number", "limit"]


@dataclass(frozen=True, slots=True)
class Option:
    """One option of docs/rules.md as the edge offers it: its key, its type and what it allows.

    ``choice`` is one of ``choices``; ``flag`` is true or false; ``number`` a whole number from
    ``low`` to ``high``; ``limit`` the same or none (no limit).
    """

    key: str
    kind: OptionKind
    choices: tuple[Any, ...] = ()
    low: int | None = None
    high: int | None = None
    chosen_apart: bool = False
    """Chosen on its own (the variant, the number of players), not as one of the rules."""
    needs_clock: bool = False
    """Only whoever runs the game with a clock can play it (rules §7 ``time_limit``)."""
    house_rule: bool = False
    """A flag off in every preset that players may turn on for one game (a house rule, 000)."""
    unit: str = ""
    """What a number counts, for the message that refuses one (``minutes``)."""

    def check(self, value: Any) -> None:
        """Refuse a value of another type or outside what the option allows (RulesError).

        Types are exact: ``"no"`` is no flag, and ``True`` is no number (nor ``1`` a flag).
        """
        if self.kind == "flag":
            if type(value) is not bool:
                raise RulesError(f"{self.key} must be true or false, not {value!r}")
        elif self.kind == "choice":
            if not any(type(value) is type(c) and value == c for c in self.choices):
                raise RulesError(f"{self.key} must be {_or_list(self.choices)}, not {value!r}")
        elif not (self.kind == "limit" and value is None) and not (
            type(value) is int
            and self.low is not None
            and self.high is not None
            and self.low <= value <= self.high
        ):
            none = " (or none)" if self.kind == "limit" else ""
            unit = f" of {self.unit}" if self.unit else ""
            raise RulesError(
                f"{self.key} must be a whole number{unit} from {self.low} to {self.high}{none},"
                f" not {value!r}"
            )

    def parse(self, text: str) -> Any:
        """Parse the option's value as typed on a command line (``true``, ``rank``, ``none``)."""
        value = text.strip().lower()
        if self.kind == "flag":
            if value in ("true", "1", "yes", "on"):
                return True
            if value in ("false", "0", "no", "off"):
                return False
            raise RulesError(f"{self.key} must be true or false, not {text!r}")
        if self.kind == "limit" and value in ("none", "off", ""):
            return None
        if self.kind == "choice":
            for choice in self.choices:
                if isinstance(choice, str) and choice == value:
                    return choice
            if not any(isinstance(choice, int) for choice in self.choices):
                return value  # Rules names the choices when it refuses another
        return _parse_int(self.key, value)


OPTIONS: tuple[Option, ...] = (
    Option("face_down", "choice", FACE_DOWN_CHOICES),
    Option("shortage", "choice", SHORTAGES),
    Option("pickup", "choice", PICKUPS),
    Option("shuffle_won", "flag"),
    Option("jokers", "choice", (0, 2)),
    Option("decks", "choice", (1, 2)),
    Option("max_rounds", "limit", low=1, high=MAX_ROUND_LIMIT),
    Option(
        "time_limit",
        "limit",
        low=MIN_TIME_LIMIT,
        high=MAX_TIME_LIMIT,
        needs_clock=True,
        unit="minutes",
    ),
    Option("target_tricks", "limit", low=1, high=MAX_ROUND_LIMIT),
    Option("points", "flag"),
    Option("war_players", "choice", WAR_PLAYERS),
    Option("wide_war", "flag"),
    Option("two_beats_ace", "flag", house_rule=True),
    Option("lowest_wins", "flag", house_rule=True),
    Option("teams", "flag"),
    Option("variant", "choice", ("krig", "stjel"), chosen_apart=True),
    Option("players", "number", low=2, high=4, chosen_apart=True),
)
"""Every option of docs/rules.md in the order games are saved: what ``sim --set`` and a challenge's
settings are built from."""
OPTIONS_BY_KEY = {option.key: option for option in OPTIONS}
OPTION_KEYS = tuple(option.key for option in OPTIONS)
RULE_OPTION_KEYS = tuple(option.key for option in OPTIONS if not option.chosen_apart)
"""The options a challenge or ``sim --set`` changes (the variant and players are chosen apart)."""
HOUSE_RULES = tuple(option.key for option in OPTIONS if option.house_rule)
"""The flags a challenge may turn on by name; each has a rules line ``rule.<key>``."""
CHOSEN_APART = tuple(option.key for option in OPTIONS if option.chosen_apart)

_PLAYS: dict[str, frozenset[str]] = {}
"""The options each kind of game plays, by its name, as the kind declares them (its ``plays``,
recorded by ``variant.register``). Default-deny: an option a kind does not declare is fixed for
it, and setting it is refused whatever the value (rules §10)."""
_FIXED: dict[str, dict[str, Any]] = {}
"""Per kind of game, the value of every option it does not play: its own preset's."""


def declare_plays(variant: str, keys: Iterable[str]) -> None:
    """Record the options a kind of game plays; the others keep the values of its preset.

    Its preset is the first of :data:`PRESETS` that names the kind (``standard`` for Krig).
    """
    plays = frozenset(keys) | frozenset(CHOSEN_APART)
    unknown = plays - set(OPTION_KEYS)
    if unknown:
        raise RulesError(f"{variant} declares unknown options {sorted(unknown)}")
    home = next((p for p, o in PRESETS.items() if o.get("variant", "krig") == variant), None)
    if home is None:
        raise RulesError(f"no preset plays variant {variant!r}")
    defaults = {field.name: field.default for field in dataclasses.fields(Rules)}
    values = defaults | PRESETS[home]
    _PLAYS[variant] = plays
    _FIXED[variant] = {key: values[key] for key in OPTION_KEYS if key not in plays}
    _rules_from_items.cache_clear()


def played_options(variant: str) -> frozenset[str]:
    """Return the options a kind of game plays (the variant and the players included)."""
    try:
        return _PLAYS[variant]
    except (KeyError, TypeError):
        raise RulesError(f"variant must be one of {_or_list(_PLAYS)}") from None


def _refuse_fixed(variant: str, given: Iterable[str]) -> None:
    """Refuse an option given for a kind of game that does not play it, whatever its value."""
    plays = played_options(variant)
    for key in OPTION_KEYS:
        if key in given and key not in plays:
            raise FixedOptionError(key, variant, _text(_FIXED[variant][key]))


def _text(value: Any) -> str:
    """Return a value as the command line writes it (``true``, ``none``, ``rank``)."""
    return "none" if value is None else str(value).lower()


def _or_list(values: Iterable[Any]) -> str:
    words = [_text(value) for value in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


@dataclass(frozen=True, slots=True)
class Rules:
    """One complete, validated set of options (rules §4–§11)."""

    players: int = 2
    face_down: FaceDown = 1
    shortage: Shortage = "lose"
    pickup: Pickup = "winner_first"
    shuffle_won: bool = False
    jokers: int = 0
    decks: int = 1
    max_rounds: int | None = None
    time_limit: int | None = None
    """Minutes from the deal after which the game ends by counting; only a clock can tell."""
    target_tricks: int | None = None
    points: bool = False
    war_players: WarPlayers = "tied"
    wide_war: bool = False
    two_beats_ace: bool = False
    """rules §1: a 2 beats an ace and nothing else, whenever face-up cards are compared."""
    lowest_wins: bool = False
    """rules §1, Peace: the lowest face-up card wins (a joker, ranking highest, loses)."""
    teams: bool = False
    variant: VariantName = "krig"
    preset_name: str = "standard"

    def __post_init__(self) -> None:
        self._validate()

    @classmethod
    def preset(
        cls, name: str = "standard", *, players: int | None = None, **overrides: Any
    ) -> Rules:
        """Return the rules of a preset of rules §11, with options changed as given."""
        key = find_preset(name)
        unknown = set(overrides) - set(OPTION_KEYS)
        if unknown:
            raise RulesError(f"unknown option {sorted(unknown)[0]!r}")
        options: dict[str, Any] = dict(PRESETS[key])
        if players is not None:
            options["players"] = players
        variant = overrides.get("variant", options.get("variant", "krig"))
        _refuse_fixed(variant, overrides)
        options.update(overrides)
        options.update(_FIXED[variant])
        # rules §8: three players default to a shuffled pickup; a challenge may still choose.
        # A kind that does not play the pickup (Steal War's loot piles, §10) keeps its own.
        if (
            options.get("players", 2) == 3
            and "pickup" not in overrides
            and "pickup" in played_options(variant)
        ):
            options["pickup"] = "shuffled"
        if options.get("points") and options.get("max_rounds") is None:
            options["max_rounds"] = DEFAULT_POINTS_ROUNDS
        return cls(preset_name=key, **options)

    def replace(self, **changes: Any) -> Rules:
        """Return these rules with some options changed (refused if the variant fixes one)."""
        unknown = set(changes) - set(OPTION_KEYS)
        if unknown:
            raise RulesError(f"unknown option {sorted(unknown)[0]!r}")
        variant = changes.get("variant", self.variant)
        _refuse_fixed(variant, changes)
        if "variant" in changes:
            changes = {**_FIXED[variant], **changes}
        return dataclasses.replace(self, **changes)

    def settings(self) -> dict[str, Any]:
        """Return the options these rules set, as a challenge gives them: those the variant
        plays, without the variant and the players (chosen apart).

        ``Rules.preset(rules.preset_name, players=rules.players, **rules.settings())`` is these
        rules again: a rematch asks for exactly that.

        >>> sorted(Rules.preset("stjel").settings())
        ['decks', 'jokers', 'max_rounds', 'target_tricks', 'time_limit']
        """
        plays = played_options(self.variant)
        return {key: getattr(self, key) for key in RULE_OPTION_KEYS if key in plays}

    @property
    def deterministic(self) -> bool:
        """Tell whether nothing random happens after the deal (the condition for `eternal`)."""
        return self.pickup != "shuffled" and not self.shuffle_won and self.variant == "krig"

    @property
    def detects_eternal(self) -> bool:
        """Tell whether a repeating position ends the game as `eternal` (rules §7)."""
        return (
            self.deterministic
            and self.max_rounds is None
            and self.target_tricks is None
            and not self.points
        )

    @property
    def deck_size(self) -> int:
        """Return how many cards the game is dealt from."""
        return 52 * self.decks + self.jokers

    def to_dict(self) -> dict[str, Any]:
        """Return the options as a JSON-safe dict (the keys of docs/rules.md)."""
        return dict(_rules_to_items(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Rebuild rules saved with :meth:`to_dict`."""
        try:
            # Saved rules come back in the order to_dict wrote them: no need to sort for the cache.
            # The types are part of the key: 1 == True, yet only True is a flag.
            return _rules_from_items(tuple(data.items()), tuple(map(type, data.values())))
        except TypeError:  # an unhashable value: validate it the slow way, for the message
            return cls(preset_name=str(data.get("preset", "standard")), **_saved_options(data))

    def _validate(self) -> None:
        # Every option by its entry in OPTIONS, so the API, sim --set and stored rules agree.
        for option in OPTIONS:
            option.check(getattr(self, option.key))
        # rules §10: what a kind of game does not play holds the value it is played by.
        for key, fixed in _FIXED.get(self.variant, {}).items():
            if getattr(self, key) != fixed:
                raise FixedOptionError(key, self.variant, _text(fixed))
        if self.points and self.max_rounds is None:
            raise RulesError("a points game needs max_rounds")
        if self.teams and self.players != 4:
            raise RulesError("teams are played by exactly 4 players")
        if self.two_beats_ace and self.lowest_wins:
            # rules §1: with the lowest winning, a 2 already beats an ace (and everything else).
            raise RulesError("two_beats_ace and lowest_wins cannot be played together")


def find_preset(name: str) -> str:
    """Return the canonical preset name for a name or alias, or raise RulesError."""
    key = name.strip().lower()
    key = PRESET_ALIASES.get(key, key)
    if key not in PRESETS:
        raise RulesError(f"unknown variant {name!r} (choose from {', '.join(PRESETS)})")
    return key


def parse_option(key: str, text: str) -> Any:
    """Parse one ``KEY=VALUE`` option as given on the command line."""
    option = OPTIONS_BY_KEY.get(key)
    if option is None:
        raise RulesError(f"unknown option {key!r} (known: {', '.join(OPTION_KEYS)})")
    return option.parse(text)


def _parse_int(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise RulesError(f"{key} must be a whole number, not {value!r}") from None


# Saving and restoring a game converts its rules every time; a game has few distinct rule
# sets, so both directions are cached (Rules is frozen, and callers get a fresh dict).
@functools.lru_cache(maxsize=256)
def _rules_to_items(rules: Rules) -> tuple[tuple[str, Any], ...]:
    return (("preset", rules.preset_name), *((key, getattr(rules, key)) for key in OPTION_KEYS))


@functools.lru_cache(maxsize=256)
def _rules_from_items(items: tuple[tuple[str, Any], ...], types: tuple[type, ...]) -> Rules:
    data = dict(items)
    return Rules(preset_name=str(data.get("preset", "standard")), **_saved_options(data))


def _saved_options(data: Mapping[str, Any]) -> dict[str, Any]:
    options = {key: data[key] for key in OPTION_KEYS if key in data}
    # Steal War games saved before rules §10 fixed its options kept what the challenge asked
    # for (a shortage, a pickup) although Steal War never played by it: they load with the
    # values they were played by, which are now the only ones allowed.
    variant = options.get("variant", "krig")
    if isinstance(variant, str):
        options.update(_FIXED.get(variant, {}))
    return options
