"""/krig history lists a server's ended games; /krig replay steps through one, round by round."""

from __future__ import annotations

from pathlib import Path

from krigbot.engine import Game, Rules, run_to_end
from krigbot.i18n import fmt_list, t
from tests.standin import DiscordStandIn, InteractionResponse
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    buttons,
    flip,
    game_row,
    press,
    start_game,
    text_of,
)

STANDARD = Rules.preset("standard")
SHORT_SEED = 1146
"""Standard: 30 rounds, Bob (seat 1) wins, six wars."""
OTHER_SEED = 1230
"""Standard: 30 rounds, Alice (seat 0) wins."""


def replay_buttons(answer: InteractionResponse) -> dict[str, str]:
    """Return the replay buttons by move, with the custom id each carries."""
    return {custom_id.rsplit(":", 1)[1]: custom_id for custom_id in buttons(answer)}


async def test_replay_pages_show_exactly_the_rounds_that_were_played(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(SHORT_SEED)
    expected = Game.new(STANDARD, SHORT_SEED)
    run_to_end(expected)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        played = []
        for _ in range(29):
            played.append(await flip(standin, world.no_channel, world.alice))
        last = await flip(standin, world.no_channel, world.bob)
        assert t("nb", "over.title") in text_of(last)
        played.append(last)
        assert (await game_row(bot, table.game_id)).status == "finished"

        page = await command(standin, world.no_channel, world.alice, "replay", id=table.game_id)

        assert page.ephemeral
        shown = []
        for number in range(1, 31):
            (embed,) = page.embeds
            assert embed["title"] == t(
                "nb", "replay.title", game=table.game_id, round=number, rounds=30
            )
            assert embed["footer"]["text"] == t(
                "nb", "replay.footer", seed=SHORT_SEED, variant=t("nb", "variant.standard.name")
            )
            shown.append(embed)
            if number < 30:
                assert page.message is not None
                page = await press(standin, page.message, replay_buttons(page)["next"], world.alice)
                assert page.type == UPDATE_MESSAGE
        for original, replayed in zip(played, shown, strict=True):
            table_embed = original.embeds[0]
            assert replayed["description"] == table_embed["description"]
            assert replayed["fields"][0] == table_embed["fields"][0]  # the counts after it
        result = shown[-1]["fields"][-1]
        assert result["name"] == t("nb", "over.title")
        assert "🏆 " + t("nb", "over.winner", name="**Bob**") in result["value"]
        moves = replay_buttons(page)
        assert set(moves) == {"first", "prev", "next", "war", "last"}
        disabled = {move for move, cid in moves.items() if buttons(page)[cid].get("disabled")}
        assert disabled == {"next", "war", "last"}  # the last round: nowhere further to go


async def test_replay_jumps_to_the_next_war(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(SHORT_SEED)
    game = Game.new(STANDARD, SHORT_SEED)
    wars = []
    while game.outcome is None:
        played = game.play_round()
        if played.is_war:
            wars.append(played.number)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        await flip(standin, world.no_channel, world.alice, count=30)
        page = await command(standin, world.no_channel, world.bob, "replay", id=table.game_id)

        for war in [number for number in wars if number > 1]:  # the replay opens at round 1
            assert page.message is not None
            page = await press(standin, page.message, replay_buttons(page)["war"], world.bob)
            assert page.embeds[0]["title"] == t(
                "sv", "replay.title", game=table.game_id, round=war, rounds=30
            )
            assert "⚔️" in page.embeds[0]["description"]

        war_button = buttons(page)[replay_buttons(page)["war"]]
        assert war_button.get("disabled")


async def test_replay_is_refused_for_unknown_and_running_games(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path):
        table = await start_game(standin, world.no_channel, world.alice, world.bob)

        running = await command(standin, world.no_channel, world.alice, "replay", id=table.game_id)
        unknown = await command(standin, world.no_channel, world.alice, "replay", id=999)
        elsewhere = await command(standin, world.sv_channel, world.bob, "replay", id=table.game_id)

        assert running.ephemeral
        assert running.content == t("nb", "replay.not_over", id=table.game_id)
        assert unknown.content == t("nb", "replay.not_found", id=999)
        assert elsewhere.content == t("sv", "replay.not_found", id=table.game_id)


async def test_history_lists_ended_games_newest_first_with_result_reason_and_length(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(SHORT_SEED, OTHER_SEED, 5)
    async with running_bot(standin, db_path, seeds):
        first = await start_game(standin, world.no_channel, world.alice, world.bob)
        await flip(standin, world.no_channel, world.alice, count=30)
        second = await start_game(standin, world.no_channel, world.carol, world.alice)
        await flip(standin, world.no_channel, world.carol, count=30)
        third = await start_game(standin, world.no_channel, world.bob, world.carol)
        await command(standin, world.no_channel, world.moderator, "cancel")

        everyone = await command(standin, world.no_channel, world.alice, "history")
        carols = await command(standin, world.no_channel, world.alice, "history", user=world.carol)

        assert everyone.ephemeral
        (embed,) = everyone.embeds
        assert embed["title"] == t("nb", "history.title")
        lines = embed["description"].splitlines()
        assert [line.split("`")[1] for line in lines] == [
            f"#{third.game_id}",
            f"#{second.game_id}",
            f"#{first.game_id}",
        ]
        all_cards, thirty = (
            t("nb", "history.reason.all_cards"),
            t("nb", "unit.rounds", count=30, n=30),
        )
        no_rounds = t("nb", "unit.rounds", count=0, n=0)
        assert f"Bob – Carol · {t('nb', 'history.cancelled')} · {no_rounds}" in lines[0]
        assert f"Carol – Alice · 🏆 Carol · {all_cards} · {thirty}" in lines[1]
        assert f"Alice – Bob · 🏆 Bob · {all_cards} · {thirty}" in lines[2]
        assert embed["footer"]["text"] == t("nb", "history.page", page=1)
        carol_lines = carols.embeds[0]["description"].splitlines()
        assert carol_lines[0] == t("nb", "history.of", name=f"<@{world.carol.id}>")
        assert [line.split("`")[1] for line in carol_lines[1:]] == [
            f"#{third.game_id}",
            f"#{second.game_id}",
        ]


async def test_history_pages_with_buttons(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path) as bot:
        ids = []
        for _ in range(13):
            row = await bot.service.registry.storage.games.create_game(
                guild_id=world.no_guild.id,
                channel_id=world.no_channel.id,
                challenger_id=world.alice.id,
                players=[world.alice.id, world.bob.id],
                names=["Alice", "Bob"],
                variant="standard",
                rules=STANDARD.to_dict(),
                seed=1,
                now=bot.service.registry.clock(),
            )
            assert await bot.storage.games.end_game(
                row.id, "cancelled", bot.service.registry.clock()
            )
            ids.append(row.id)

        first = await command(standin, world.no_channel, world.bob, "history")
        assert first.message is not None
        prev_id, next_id = list(buttons(first))
        assert buttons(first)[prev_id].get("disabled")
        second = await press(standin, first.message, next_id, world.bob)

        shown = [line.split("`")[1] for line in second.embeds[0]["description"].splitlines()]
        assert shown == [f"#{game}" for game in reversed(ids[:3])]
        assert second.embeds[0]["footer"]["text"] == t("sv", "history.page", page=2)
        assert buttons(second)[list(buttons(second))[1]].get("disabled")  # no third page


async def test_history_names_who_drew_when_only_some_of_three_players_did(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    rules = Rules.preset("standard", players=3, max_rounds=5)
    seed = next(
        seed
        for seed in range(1000)
        if len((outcome := run_to_end(Game.new(rules, seed))).drawn) == 2 and not outcome.winners
    )
    expected = run_to_end(Game.new(rules, seed))
    seeds.fix(seed)
    players = (world.alice, world.bob, world.carol)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, *players, rounds=5)
        await flip(standin, world.no_channel, world.alice, count=5)
        assert (await game_row(bot, table.game_id)).status == "finished"

        history = await command(standin, world.no_channel, world.alice, "history")
        (lost,) = {0, 1, 2} - set(expected.drawn)
        stats = await bot.storage.stats.player_stats(world.no_guild.id, players[lost].id)

    (line,) = history.embeds[0]["description"].splitlines()
    drew = [str(players[seat].display_name) for seat in expected.drawn]
    assert t("nb", "history.draw_among", names=fmt_list(drew, "nb")) in line
    # The one who did not draw lost, as their record says.
    assert (stats.draws, stats.losses) == (0, 1)
