"""The commands the bot registers: names, descriptions and choices in every language."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from krigbot.adapter.group import SUBCOMMANDS, KrigGroup, is_subcommand, subcommand
from krigbot.bot import KrigBot
from krigbot.engine import PRESETS
from krigbot.engine.rules import MAX_ROUND_LIMIT
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import answer_of, start_game

LOCALES = {"no", "sv-SE", "da"}
USER, STRING, INTEGER, SUB_COMMAND, SUB_COMMAND_GROUP = 6, 3, 4, 1, 2


def options_of(command: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {option["name"]: option for option in command.get("options") or []}


@pytest.fixture
def synced(standin: DiscordStandIn, bot: KrigBot) -> dict[str, dict[str, Any]]:
    """Return the global commands as Discord stored them, by name."""
    return {command["name"]: command for command in standin.synced_commands()}


def test_the_bot_registers_krig_with_its_subcommands_and_flip(
    synced: dict[str, dict[str, Any]],
) -> None:
    assert set(synced) == {"krig", "flip"}
    subcommands = options_of(synced["krig"])
    # Every command of the bot issue is there (later features add more subcommands).
    assert set(subcommands) >= {
        "start",
        "status",
        "forfeit",
        "cancel",
        "leaderboard",
        "stats",
        "rules",
    }
    groups = {name for name, sub in subcommands.items() if sub["type"] == SUB_COMMAND_GROUP}
    assert groups == {"tournament"}
    commands = [sub for name, sub in subcommands.items() if name not in groups]
    assert all(sub["type"] == SUB_COMMAND for sub in commands)
    assert set(options_of(subcommands["tournament"])) == {
        "create",
        "join",
        "leave",
        "start",
        "cancel",
        "status",
    }


def test_every_command_is_described_in_norwegian_swedish_and_danish(
    synced: dict[str, dict[str, Any]],
) -> None:
    described = [synced["krig"], synced["flip"], *options_of(synced["krig"]).values()]
    for command in described:
        assert set(command["description_localizations"]) >= LOCALES, command["name"]
        assert all(command["description_localizations"].values())
    assert synced["flip"]["description_localizations"]["no"] == "Snu neste kort (spill én runde)"


@pytest.mark.parametrize(
    ("path", "names"),
    [
        (("flip",), {"no": "snu", "sv-SE": "vänd", "da": "vend"}),
        (("krig", "forfeit"), {"no": "gi-opp", "sv-SE": "ge-upp", "da": "giv-op"}),
        (("krig", "leaderboard"), {"no": "toppliste", "sv-SE": "topplista", "da": "topliste"}),
        (("krig", "stats"), {"no": "statistikk", "sv-SE": "statistik", "da": "statistik"}),
        (
            ("krig", "start", "opponent"),
            {"no": "motstander", "sv-SE": "motståndare", "da": "modstander"},
        ),
        (("krig", "start", "rounds"), {"no": "runder", "sv-SE": "omgångar", "da": "runder"}),
        (("flip", "count"), {"no": "antall", "sv-SE": "antal", "da": "antal"}),
    ],
)
def test_names_are_localised(
    synced: dict[str, dict[str, Any]], path: tuple[str, ...], names: dict[str, str]
) -> None:
    item = synced[path[0]]
    for part in path[1:]:
        item = options_of(item)[part]

    assert item["name_localizations"] == names


def test_start_takes_opponents_a_variant_a_round_limit_and_rule_overrides(
    synced: dict[str, dict[str, Any]],
) -> None:
    start = options_of(options_of(synced["krig"])["start"])

    assert [(name, o["type"], o.get("required", False)) for name, o in start.items()] == [
        ("opponent", USER, True),
        ("opponent2", USER, False),
        ("opponent3", USER, False),
        ("variant", STRING, False),
        ("rounds", INTEGER, False),
        ("minutes", INTEGER, False),
        ("pickup", STRING, False),
        ("shortage", STRING, False),
        ("house_rule", STRING, False),
        ("best_of", INTEGER, False),
    ]
    # The round limit Discord offers is the engine's, not a lower one of the command's own.
    assert (start["rounds"]["min_value"], start["rounds"]["max_value"]) == (1, MAX_ROUND_LIMIT)
    assert [c["value"] for c in start["pickup"]["choices"]] == ["winner_first", "table", "shuffled"]
    assert [c["value"] for c in start["shortage"]["choices"]] == ["lose", "last_card"]
    assert [c["value"] for c in start["best_of"]["choices"]] == [3, 5]
    # The house rules it offers, each named in every language: tests/cogs/test_house_rules.py.


def test_every_variant_is_a_choice_named_in_every_language(
    synced: dict[str, dict[str, Any]],
) -> None:
    for command in ("start", "rules"):
        variant = options_of(options_of(synced["krig"])[command])["variant"]
        choices = {choice["value"]: choice for choice in variant["choices"]}

        assert set(choices) == set(PRESETS)
        for choice in choices.values():
            assert set(choice["name_localizations"]) >= LOCALES
        assert choices["lag"]["name_localizations"]["no"] == "Lag (2 mot 2)"
        assert choices["lag"]["name_localizations"]["sv-SE"] == "Lag (2 mot 2)"
        assert choices["lag"]["name_localizations"]["da"] == "Hold (2 mod 2)"
        assert choices["best3"]["name_localizations"]["no"] == "Best av 3 runder"
        assert choices["best5"]["name_localizations"]["sv-SE"] == "Bäst av 5 omgångar"


def test_the_other_options_have_the_right_types_and_limits(
    synced: dict[str, dict[str, Any]],
) -> None:
    (count,) = synced["flip"]["options"]
    assert (count["name"], count["type"], count["min_value"], count["max_value"]) == (
        "count",
        INTEGER,
        1,
        50,
    )
    (period,) = options_of(synced["krig"])["leaderboard"]["options"]
    assert period["type"] == STRING
    assert [c["value"] for c in period["choices"]] == ["all", "month", "week"]
    assert period["choices"][2]["name_localizations"]["no"] == "Siste 7 dager"
    (user,) = options_of(synced["krig"])["stats"]["options"]
    assert (user["type"], user.get("required", False)) == (USER, False)


async def test_a_norwegian_player_can_use_the_norwegian_names(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)

    played = await answer_of(
        standin,
        await standin.slash(
            "snu", user=world.alice, channel=world.no_channel, options={"antall": 3}
        ),
    )
    board = await answer_of(
        standin,
        await standin.slash(
            "krig toppliste",
            user=world.alice,
            channel=world.no_channel,
            options={"periode": "Siste 7 dager"},
        ),
    )

    assert played.embeds[0]["title"] == "Krig — runde 3"
    assert board.embeds[0]["title"] == "Toppliste — Siste 7 dager"


def declared_subcommands(bot: KrigBot) -> dict[str, list[str]]:
    """Return, per cog, the /krig subcommands its class declares."""
    return {
        name: [command.name for command in vars(type(cog)).values() if is_subcommand(command)]
        for name, cog in bot.cogs.items()
    }


def test_each_cog_adds_its_own_subcommands_to_the_one_krig_group(bot: KrigBot) -> None:
    group = bot.tree.get_command("krig")
    assert isinstance(group, KrigGroup)
    declared = declared_subcommands(bot)

    # Each listed subcommand is declared by exactly one cog, and none is left out.
    assert sorted(name for names in declared.values() for name in names) == sorted(SUBCOMMANDS)
    assert [command.name for command in group.commands] == list(SUBCOMMANDS)
    for cog_name, names in declared.items():
        for name in names:
            command = group.get_command(name)
            # A group of subcommands (/krig tournament …) is bound through its commands.
            each = command.commands if isinstance(command, app_commands.Group) else [command]
            for one in each:
                assert isinstance(one, app_commands.Command)
                assert one.binding is bot.get_cog(cog_name), name
    assert declared["Autoplay"] == ["auto", "finish"]
    assert declared["History"] == ["history", "replay"]


async def test_a_second_cog_cannot_declare_a_subcommand_again(bot: KrigBot) -> None:
    class Again(commands.Cog):
        @subcommand
        async def status(self, interaction: discord.Interaction[Any]) -> None:
            """Show the game in this channel"""

    with pytest.raises(app_commands.CommandAlreadyRegistered):
        await bot.add_cog(Again())


async def test_a_subcommand_not_listed_in_the_group_is_refused(bot: KrigBot) -> None:
    class Unlisted(commands.Cog):
        @subcommand
        async def shuffle(self, interaction: discord.Interaction[Any]) -> None:
            """Shuffle the deck"""

    with pytest.raises(ValueError, match="shuffle"):
        await bot.add_cog(Unlisted())
