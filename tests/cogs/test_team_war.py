"""Team war (rules §9): two against two from the challenge to the result and the records."""

from __future__ import annotations

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Game, Rules, load_game, run_to_end
from krigbot.i18n import fmt_list, t
from tests.standin import DiscordStandIn, User
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    answer_of,
    challenge_message,
    flip,
    game_id_of,
    game_row,
    press,
    start_game,
    text_of,
)
from tests.support.team_war import team_seed
from tests.support.texts import board_line

ROUNDS = 10
NBSP = "\xa0"


def add_dave(standin: DiscordStandIn, world: SampleWorld) -> User:
    """Return a fourth player on the Norwegian server."""
    dave = standin.add_user("dave", "Dave", locale="da")
    standin.add_member(world.no_guild, dave)
    return dave


async def test_a_team_game_from_challenge_to_result_credits_both_partners(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    dave = add_dave(standin, world)
    seed, expected = team_seed(Rules.preset("lag", players=4, max_rounds=ROUNDS), (1, 3))
    seeds.fix(seed)
    alice, bob, carol = world.alice, world.bob, world.carol

    message = await challenge_message(
        standin, world.no_channel, alice, bob, carol, dave, variant="lag", rounds=ROUNDS
    )
    team1, team2 = fmt_list(["Alice", "Carol"], "nb"), fmt_list(["Bob", "Dave"], "nb")
    assert t("nb", "rule.teams", team1=team1, team2=team2) in text_of(message)
    game_id = game_id_of(message)
    for player in (bob, carol, dave):
        answer = await press(standin, message, f"krig:accept:{game_id}", player)
        assert answer.type == UPDATE_MESSAGE
    dealt = message.embeds[0]["fields"][0]["value"].splitlines()
    assert dealt[0] == "**" + t("nb", "table.team_total", team=1, names=team1, n=26) + "**"
    assert dealt[3] == "**" + t("nb", "table.team_total", team=2, names=team2, n=26) + "**"
    assert [line.split(":")[0] for line in dealt[1:3] + dealt[4:]] == [
        "Alice",
        "Carol",
        "Bob",
        "Dave",
    ]

    finished = await flip(standin, world.no_channel, alice, count=ROUNDS)

    shown = text_of(finished)
    assert (
        "🏆 " + t("nb", "team.winners", team=2, names=fmt_list(["**Bob**", "**Dave**"], "nb"))
        in shown
    )
    assert t("nb", "over.reason.round_limit", count=ROUNDS, n=ROUNDS) in shown
    team_two = expected.counts[1] + expected.counts[3]
    assert "**" + t("nb", "table.team_total", team=2, names=team2, n=team_two) + "**" in shown
    for seat, name in enumerate(("Alice", "Bob", "Carol", "Dave")):
        assert f"{name}: **{expected.counts[seat]}**" in shown
    row = await game_row(bot, game_id)
    assert row.status == "finished"

    board = await answer_of(
        standin, await standin.slash("krig leaderboard", user=carol, channel=world.no_channel)
    )
    lines = board.embeds[0]["description"].splitlines()
    assert lines == [
        board_line("nb", 1, bob.id, wins=1, games=1, draws=0, medal="🥇"),
        board_line("nb", 2, dave.id, wins=1, games=1, draws=0, medal="🥈"),
        board_line("nb", 3, alice.id, wins=0, games=1, draws=0, medal="🥉"),
        board_line("nb", 4, carol.id, wins=0, games=1, draws=0),
    ]

    stats = await answer_of(
        standin,
        await standin.slash(
            "krig stats", user=alice, channel=world.no_channel, options={"user": dave}
        ),
    )
    fields = {field["name"]: field["value"] for field in stats.embeds[0]["fields"]}
    assert fields[t("nb", "stats.wins")] == "1"
    assert fields[t("nb", "stats.partner")] == t(
        "nb",
        "stats.partner_line",
        count=1,
        partner=f"<@{bob.id}>",
        games=1,
        wins=1,
        draws=0,
        losses=0,
    )
    assert fields[t("nb", "stats.opponent")] == t(
        "nb",
        "stats.head_to_head",
        count=1,
        opponent=f"<@{alice.id}>",
        player="Dave",
        games=1,
        won=1,
        lost=0,
        neither=0,
    )


def team_draw_seed(rules: Rules) -> tuple[int, int]:
    """Return the first seed whose game is drawn while a member of a team is already out.

    Also return a seat still in at the end, which can flip all along.
    """
    for seed in range(500):
        game = Game.new(rules, seed)
        outcome = run_to_end(game)
        if outcome.is_draw and not all(game.in_game):
            return seed, game.in_game.index(True)
    raise AssertionError("no seed found")


async def test_a_team_draw_is_a_draw_for_all_four_on_the_leaderboard_and_in_stats(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    dave = add_dave(standin, world)
    # A deterministic pickup lets a team game repeat forever: a draw (rules §7), here with a
    # member of a team out of cards since earlier rounds, who shares the team's draw (§9).
    seed, flipper = team_draw_seed(Rules.preset("lag", players=4, pickup="table"))
    seeds.fix(seed)
    alice, bob, carol = world.alice, world.bob, world.carol
    players = (alice, bob, carol, dave)
    message = await challenge_message(
        standin, world.no_channel, alice, bob, carol, dave, variant="lag", pickup="table"
    )
    game_id = game_id_of(message)
    for player in (bob, carol, dave):
        await press(standin, message, f"krig:accept:{game_id}", player)

    while (await game_row(bot, game_id)).status == "running":
        await flip(standin, world.no_channel, players[flipper], count=50)

    board = await answer_of(
        standin, await standin.slash("krig leaderboard", user=carol, channel=world.no_channel)
    )
    medals = ("🥇 ", "🥈 ", "🥉 ", "")
    # Nobody won: equal records, ranked by user id.
    ranked = sorted(players, key=lambda player: player.id)
    rate = f"0{NBSP}%"
    assert board.embeds[0]["description"].splitlines() == [
        medal
        + t("nb", "lb.row", rank=rank, name=f"<@{player.id}>", wins=0, games=1, draws=1, rate=rate)
        for rank, (medal, player) in enumerate(zip(medals, ranked, strict=True), start=1)
    ]
    for player in players:
        stats = await answer_of(
            standin,
            await standin.slash(
                "krig stats", user=alice, channel=world.no_channel, options={"user": player}
            ),
        )
        fields = {field["name"]: field["value"] for field in stats.embeds[0]["fields"]}
        shown = tuple(fields[t("nb", f"stats.{key}")] for key in ("wins", "draws", "losses"))
        assert shown == ("0", "1", "0"), player


async def forfeit(standin: DiscordStandIn, world: SampleWorld, game_id: int, user: User) -> str:
    """Give up through /krig forfeit and its confirmation; return the public announcement."""
    asked = await answer_of(
        standin, await standin.slash("krig forfeit", user=user, channel=world.no_channel)
    )
    assert asked.message is not None, asked.content
    watcher = standin.watch(world.no_channel)
    await press(standin, asked.message, f"krig:forfeit:{game_id}:{user.id}:yes", user)
    announced = await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    return text_of(announced.revision)


@pytest.mark.parametrize("quitter", ["carol", "dave"])
async def test_a_member_who_forfeits_gives_up_for_the_team_and_the_other_team_wins(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, quitter: str
) -> None:
    # rules §9: the game ends at once with the other team's win; no card leaves play.
    dave = add_dave(standin, world)
    players = (world.alice, world.bob, world.carol, dave)
    table = await start_game(standin, world.no_channel, *players, variant="lag")
    await flip(standin, world.no_channel, world.alice, count=3)
    user = world.carol if quitter == "carol" else dave

    shown = await forfeit(standin, world, table.game_id, user)

    winners = (
        t("nb", "team.winners", team=2, names=fmt_list(["**Bob**", "**Dave**"], "nb"))
        if quitter == "carol"
        else t("nb", "team.winners", team=1, names=fmt_list(["**Alice**", "**Carol**"], "nb"))
    )
    assert f"🏆 {winners}" in shown
    row = await game_row(bot, table.game_id)
    assert row.status == "finished"
    assert row.state is not None
    game = load_game(row.state)
    assert sum(game.counts) == 52
    board = await bot.storage.stats.leaderboard(world.no_guild.id, limit=4)
    won = {entry.user_id for entry in board if entry.wins}
    team = {world.bob.id, dave.id} if quitter == "carol" else {world.alice.id, world.carol.id}
    assert won == team


async def test_a_member_already_out_may_still_give_up_for_the_team(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seed, rounds = 227, 7  # Bob has no cards left after round 7; Dave plays on for them
    expected = Game.new(Rules.preset("lag"), seed)
    for _ in range(rounds):
        expected.play_round()
    assert (expected.outcome, expected.in_game) == (None, [True, False, True, True])
    seeds.fix(seed)
    dave = add_dave(standin, world)
    table = await start_game(
        standin, world.no_channel, world.alice, world.bob, world.carol, dave, variant="lag"
    )
    await flip(standin, world.no_channel, world.alice, count=rounds)

    shown = await forfeit(standin, world, table.game_id, world.bob)

    assert (
        "🏆 " + t("nb", "team.winners", team=1, names=fmt_list(["**Alice**", "**Carol**"], "nb"))
        in shown
    )
    assert (await game_row(bot, table.game_id)).status == "finished"
