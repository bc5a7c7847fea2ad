"""/krig leaderboard, /krig stats and /krig rules."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import PRESETS, Rules
from krigbot.i18n import t
from krigbot.storage import PlayerResult, Storage
from tests.standin import Channel, DiscordStandIn, InteractionResponse, User
from tests.standin.fixtures import SampleWorld
from tests.support.players import ChosenSeeds, answer_of, find_seed, flip, start_game, text_of
from tests.support.settings import BACKENDS
from tests.support.texts import board_line

_channels = itertools.count(1)


async def record_game(
    storage: Storage,
    guild_id: int,
    players: Sequence[int],
    outcomes: Sequence[str],
    *,
    ago: timedelta = timedelta(0),
    rounds: int = 100,
    wars_won: Sequence[int] = (0, 0),
    pots: Sequence[int] = (0, 0),
) -> None:
    """Store a finished two-player game as the bot would have, ``ago`` in the past."""
    when = datetime.now(UTC) - ago
    row = await storage.games.create_game(
        guild_id=guild_id,
        channel_id=next(_channels),
        challenger_id=players[0],
        players=players,
        names=[str(p) for p in players],
        variant="standard",
        rules=Rules.preset("standard").to_dict(),
        seed=1,
        now=when,
    )
    for player in players[1:]:
        await storage.games.accept(row.id, player, when)
    await storage.games.start_game(row.id, state={}, now=when)
    results = [
        PlayerResult(p, seat, outcome, rounds, wars_won[seat], pots[seat])  # type: ignore[arg-type]
        for seat, (p, outcome) in enumerate(zip(players, outcomes, strict=True))
    ]
    finished = await storage.games.finish_game(
        row.id,
        expected_round=0,
        state={},
        round=rounds,
        result={"reason": "all_cards"},
        results=results,
        now=when,
    )
    assert finished


async def ask(
    standin: DiscordStandIn, channel: Channel, asker: User, command: str, **options: object
) -> InteractionResponse:
    rec = await standin.slash(f"krig {command}", user=asker, channel=channel, options=options)
    return await answer_of(standin, rec)


def board_lines(answer: InteractionResponse) -> list[str]:
    return str(answer.embeds[0]["description"]).splitlines()


# ------------------------------------------------------------------------- leaderboard


async def test_an_empty_leaderboard_says_no_game_has_finished(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await ask(standin, world.no_channel, world.alice, "leaderboard")

    assert not answer.ephemeral
    assert answer.embeds[0]["title"] == t("nb", "lb.title", period=t("nb", "period.all"))
    assert answer.embeds[0]["description"] == t("nb", "lb.empty")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_game_played_to_the_end_puts_its_winner_on_top(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    rules = Rules.preset("standard", max_rounds=1)
    seed = find_seed(rules, lambda played: played.winner == 1)  # bob takes the only round
    seeds.fix(seed)
    await start_game(standin, world.no_channel, world.alice, world.bob, rounds=1)
    finished = await flip(standin, world.no_channel, world.alice)
    assert "🏆 " + t("nb", "over.winner", name="**Bob**") in text_of(finished)

    answer = await ask(standin, world.no_channel, world.carol, "leaderboard")

    assert board_lines(answer) == [
        board_line("nb", 1, world.bob.id, wins=1, games=1, draws=0, medal="🥇"),
        board_line("nb", 2, world.alice.id, wins=0, games=1, draws=0, medal="🥈"),
    ]
    assert answer.allowed_mentions == {"parse": []}


async def test_the_leaderboard_shows_the_top_ten_by_wins_with_games_draws_and_win_rate(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    guild = world.no_guild.id
    players = list(range(1001, 1013))  # twelve players; player 1001 + i wins 12 - i games
    for rank, player in enumerate(players):
        for _ in range(12 - rank):
            await record_game(bot.storage, guild, [player, 9999], ["win", "loss"])
    await record_game(bot.storage, guild, [1001, 9999], ["draw", "draw"])

    answer = await ask(standin, world.no_channel, world.alice, "leaderboard")

    lines = board_lines(answer)
    assert len(lines) == 10
    assert lines[0] == board_line("nb", 1, 1001, wins=12, games=13, draws=1, medal="🥇")
    assert lines[1] == board_line("nb", 2, 1002, wins=11, games=11, draws=0, medal="🥈")
    assert lines[2] == board_line("nb", 3, 1003, wins=10, games=10, draws=0, medal="🥉")
    assert lines[9] == board_line("nb", 10, 1010, wins=3, games=3, draws=0)
    assert "<@9999>" not in answer.embeds[0]["description"]  # many games, no wins: 11th or lower
    assert "<@1011>" not in answer.embeds[0]["description"]


@pytest.mark.parametrize(
    ("period", "wins"),
    [("all", 3), ("month", 2), ("week", 1)],
)
@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_leaderboard_period_counts_only_games_finished_within_it(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    period: str,
    wins: int,
) -> None:
    alice, bob = world.alice.id, world.bob.id
    for days in (40, 10, 1):
        await record_game(
            bot.storage, world.no_guild.id, [alice, bob], ["win", "loss"], ago=timedelta(days=days)
        )

    answer = await ask(standin, world.no_channel, world.alice, "leaderboard", period=period)

    assert answer.embeds[0]["title"] == t("nb", "lb.title", period=t("nb", f"period.{period}"))
    assert board_lines(answer)[0] == board_line("nb", 1, alice, wins, wins, draws=0, medal="🥇")


async def test_each_server_has_its_own_leaderboard(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await record_game(
        bot.storage, world.no_guild.id, [world.alice.id, world.bob.id], ["win", "loss"]
    )
    await record_game(
        bot.storage, world.sv_guild.id, [world.carol.id, world.bob.id], ["win", "loss"]
    )

    norwegian = await ask(standin, world.no_channel, world.bob, "leaderboard")
    swedish = await ask(standin, world.sv_channel, world.alice, "leaderboard")

    assert f"<@{world.alice.id}>" in board_lines(norwegian)[0]
    assert f"<@{world.carol.id}>" not in text_of(norwegian)
    assert swedish.embeds[0]["title"] == t("sv", "lb.title", period=t("sv", "period.all"))
    assert board_lines(swedish)[0] == board_line(
        "sv", 1, world.carol.id, wins=1, games=1, draws=0, medal="🥇"
    )
    assert f"<@{world.alice.id}>" not in text_of(swedish)


# ------------------------------------------------------------------------------- stats


def fields(answer: InteractionResponse) -> dict[str, str]:
    return {field["name"]: field["value"] for field in answer.embeds[0].get("fields", [])}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_stats_show_a_players_whole_record_on_this_server(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    guild, alice, bob, carol = world.no_guild.id, world.alice.id, world.bob.id, world.carol.id
    await record_game(
        bot.storage, guild, [alice, bob], ["win", "loss"], rounds=120, wars_won=(3, 1), pots=(14, 6)
    )
    await record_game(
        bot.storage,
        guild,
        [alice, bob],
        ["win", "loss"],
        rounds=300,
        wars_won=(5, 2),
        pots=(22, 10),
    )
    await record_game(
        bot.storage, guild, [bob, alice], ["win", "loss"], rounds=80, wars_won=(4, 1), pots=(18, 6)
    )
    await record_game(
        bot.storage, guild, [alice, carol], ["draw", "draw"], rounds=50, wars_won=(2, 2)
    )
    # Another server's game is not part of this record.
    await record_game(bot.storage, world.sv_guild.id, [alice, bob], ["win", "loss"], rounds=900)

    answer = await ask(standin, world.no_channel, world.carol, "stats", user=world.alice)

    assert not answer.ephemeral
    assert answer.embeds[0]["title"] == t("nb", "stats.title", name="Alice")
    assert fields(answer) == {
        t("nb", "stats.games"): "4",
        t("nb", "stats.wins"): "2",
        t("nb", "stats.draws"): "1",
        t("nb", "stats.losses"): "1",
        t("nb", "stats.wars_won"): "11",
        t("nb", "stats.biggest_pot"): t("nb", "unit.cards", count=22, n=22),
        t("nb", "stats.longest"): t("nb", "unit.rounds", count=300, n=300),
        t("nb", "stats.opponent"): t(
            "nb",
            "stats.head_to_head",
            count=3,
            opponent=f"<@{bob}>",
            player="Alice",
            games=3,
            won=2,
            lost=1,
            neither=0,
        ),
        # Her record everywhere counts the other server's game too.
        t("nb", "stats.everywhere"): t("nb", "stats.in_servers")
        + ": "
        + t("nb", "stats.line", wins=3, losses=1, draws=1),
    }


async def test_stats_without_a_user_show_the_askers_own_record(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await record_game(
        bot.storage, world.sv_guild.id, [world.bob.id, world.carol.id], ["loss", "win"]
    )

    answer = await ask(standin, world.sv_channel, world.bob, "stats")

    assert answer.embeds[0]["title"] == t("sv", "stats.title", name="Bob")
    assert fields(answer)[t("sv", "stats.losses")] == "1"
    assert fields(answer)[t("sv", "stats.opponent")] == t(
        "sv",
        "stats.head_to_head",
        count=1,
        opponent=f"<@{world.carol.id}>",
        player="Bob",
        games=1,
        won=0,
        lost=1,
        neither=0,
    )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_head_to_head_in_three_player_games_mirrors_between_the_two_players(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    guild, alice, bob, carol = world.no_guild.id, world.alice.id, world.bob.id, world.carol.id
    three: dict[str, Any] = {"wars_won": (0, 0, 0), "pots": (0, 0, 0)}
    await record_game(bot.storage, guild, [alice, bob, carol], ["win", "loss", "loss"], **three)
    # Carol's wins are lost by both: they count for neither Alice nor Bob against the other.
    for _ in range(2):
        await record_game(bot.storage, guild, [carol, alice, bob], ["win", "loss", "loss"], **three)
    await record_game(bot.storage, guild, [alice, bob, carol], ["draw", "draw", "loss"], **three)
    await record_game(bot.storage, guild, [bob, alice], ["draw", "draw"])

    alices = fields(await ask(standin, world.no_channel, world.carol, "stats", user=world.alice))
    bobs = fields(await ask(standin, world.no_channel, world.carol, "stats", user=world.bob))

    def record(opponent: int, player: str, won: int, lost: int) -> str:
        return t(
            "nb",
            "stats.head_to_head",
            count=5,
            opponent=f"<@{opponent}>",
            player=player,
            games=5,
            won=won,
            lost=lost,
            neither=4,
        )

    opponent, wins, losses = (
        t("nb", key) for key in ("stats.opponent", "stats.wins", "stats.losses")
    )
    assert alices[opponent] == record(bob, "Alice", won=1, lost=0)
    assert bobs[opponent] == record(alice, "Bob", won=0, lost=1)
    assert (alices[wins], alices[losses], bobs[wins], bobs[losses]) == ("1", "2", "0", "3")


async def test_stats_of_someone_who_has_not_played_say_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await ask(standin, world.no_channel, world.alice, "stats", user=world.carol)

    assert answer.embeds[0]["description"] == t("nb", "stats.none", name="Carol")


# ------------------------------------------------------------------------------- rules


async def test_rules_are_shown_to_the_reader_in_their_own_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await ask(standin, world.no_channel, world.bob, "rules")

    assert answer.ephemeral
    embed = answer.embeds[0]
    assert embed["title"] == t("sv", "rules.title")
    assert embed["description"] == t("sv", "rules.basic")
    variants, time_limit, house = embed["fields"]
    assert (time_limit["name"], time_limit["value"]) == (
        t("sv", "status.time_heading"),
        t("sv", "rules.time_limit"),
    )
    assert house["name"] == t("sv", "rules.house_heading")
    assert variants["name"] == t("sv", "rules.variants_heading")
    assert f"`lag` — {t('sv', 'variant.lag.name')}" in variants["value"]
    assert len(variants["value"].splitlines()) == len(PRESETS)
    assert f"`best3` — {t('sv', 'variant.best3.name')}" in variants["value"]


async def test_rules_of_a_variant_explain_it_and_list_its_rules(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await ask(standin, world.no_channel, world.carol, "rules", variant="klassisk")

    embed = answer.embeds[0]
    assert embed["title"] == t("en", "rules.title")
    shown = fields(answer)
    assert shown[t("en", "variant.klassisk.name")] == t("en", "rules.variant.klassisk")
    assert shown[t("en", "challenge.rules_heading")].splitlines() == [
        t("en", "rule.face_down", count=3, n=3),
        t("en", "rule.shortage.last_card"),
        t("en", "rule.pickup.winner_first"),
    ]


async def test_rules_of_the_team_variant_say_four_players_play_two_against_two(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await ask(standin, world.no_channel, world.alice, "rules", variant="lag")

    assert fields(answer)[t("nb", "variant.lag.name")] == t("nb", "rules.variant.lag")
