"""The end of a game as its message tells it: the fairness check shows the command it is given."""

from __future__ import annotations

import discord

from krigbot.engine import Game, Rules, run_to_end
from krigbot.i18n import t
from krigbot.render.embeds import rules_lines
from krigbot.render.play import add_game_over
from tests.support.narration import NAMES, row_for

COMMAND = "python -m krigbot.sim play --seed 1 --variant standard"


def fairness_lines(command: str | None) -> list[str]:
    """Return the fairness field of a finished game's message, line by line."""
    rules = Rules.preset("standard")
    game = Game.new(rules, seed=1)
    run_to_end(game)
    embed = discord.Embed()
    add_game_over(embed, row_for(rules), game, "en", command=command)
    (field,) = [field for field in embed.fields if field.name == t("en", "fair.heading")]
    assert field.value is not None
    return field.value.splitlines()


def test_the_check_gives_the_seed_the_rules_and_the_command_to_run() -> None:
    rules = " · ".join(rules_lines(Rules.preset("standard"), NAMES[:2], "en"))

    assert fairness_lines(COMMAND) == [
        t("en", "fair.seed", seed=1),
        t("en", "fair.rules", rules=rules),
        t("en", "fair.command", command=f"`{COMMAND}`"),
    ]


def test_a_game_no_command_replays_is_checked_by_its_seed_and_rules_alone() -> None:
    lines = fairness_lines(None)

    assert lines[0] == t("en", "fair.seed", seed=1)
    assert len(lines) == 2
    assert "krigbot.sim" not in "\n".join(lines)
