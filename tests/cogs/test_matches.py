"""Best-of matches (a new deal after each game until someone has won most) and rematches."""

from __future__ import annotations

from pathlib import Path

import pytest

from krigbot.engine import Rules
from krigbot.i18n import t
from krigbot.sessions.matches import MatchKeeper
from tests.standin import DiscordStandIn, InteractionResponse
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    buttons,
    challenge_message,
    flip,
    game_id_of,
    game_row,
    press,
    settled,
    start_game,
    text_of,
)
from tests.support.texts import board_line

ALICE_WINS = 132
"""Standard: 34 rounds, Alice (seat 0) takes every card."""
BOB_WINS = 1146
"""Standard: 30 rounds, Bob (seat 1) takes every card."""
ALICE_AGAIN = 1230
"""Standard: 30 rounds, Alice wins."""
NEXT_CHALLENGE = 5


def match_field(answer: InteractionResponse) -> str:
    (field,) = [f for f in answer.embeds[0]["fields"] if f["name"] == t("nb", "match.heading")]
    return str(field["value"])


async def test_a_best_of_three_match_from_the_challenge_to_the_winner(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(ALICE_WINS, BOB_WINS, ALICE_AGAIN, NEXT_CHALLENGE)
    async with running_bot(standin, db_path, seeds) as bot:
        message = await challenge_message(
            standin, world.no_channel, world.alice, world.bob, best_of=3, rounds=500
        )
        assert t("nb", "match.rule", best_of=3, target=2) in text_of(message)
        first = game_id_of(message)
        dealt = await press(standin, message, f"krig:accept:{first}", world.bob)
        assert t("nb", "match.line", best_of=3, game=1, score="Alice 0 · Bob 0") in match_field(
            dealt
        )

        one = await flip(standin, world.no_channel, world.alice, count=50)

        assert "🏆 " + t("nb", "over.winner", name="**Alice**") in text_of(one)
        assert t("nb", "match.score", best_of=3, game=1, score="Alice 1 · Bob 0") in match_field(
            one
        )
        assert t("nb", "match.next", game=2) in match_field(one)
        (next_flip,) = buttons(one)
        second = int(next_flip.split(":")[2])
        assert next_flip == f"krig:flip:{second}:0"
        row = await game_row(bot, second)
        first_row = await game_row(bot, first)
        assert (row.status, row.players, row.rules) == (
            "running",
            first_row.players,
            first_row.rules,
        )
        assert row.rules["max_rounds"] == 500  # the same rules, options included
        assert row.extra["match"] == {"id": first, "best_of": 3, "game": 2, "score": [1, 0]}
        assert row.seed == BOB_WINS

        assert one.message is not None
        opened = await press(standin, one.message, next_flip, world.bob)
        assert opened.type == UPDATE_MESSAGE
        assert t("nb", "table.title", round=1) in text_of(opened)
        assert t("nb", "match.line", best_of=3, game=2, score="Alice 1 · Bob 0") in match_field(
            opened
        )
        two = await flip(standin, world.no_channel, world.bob, count=50)

        assert "🏆 " + t("nb", "over.winner", name="**Bob**") in text_of(two)
        assert t("nb", "match.score", best_of=3, game=2, score="Alice 1 · Bob 1") in match_field(
            two
        )
        (third_flip,) = buttons(two)
        three = await flip(standin, world.no_channel, world.alice, count=50)

        assert t("nb", "match.score", best_of=3, game=3, score="Alice 2 · Bob 1") in match_field(
            three
        )
        assert "🏆 " + t("nb", "match.winner", name="**Alice**") in match_field(three)
        third = int(third_flip.split(":")[2])
        assert list(buttons(three)) == [f"krig:rematch:{third}"]
        assert await bot.service.registry.game_in(world.no_channel.id) is None  # the match is over

        board = await command(standin, world.no_channel, world.alice, "leaderboard")
        stats = await command(standin, world.no_channel, world.alice, "stats")

        lines = board.embeds[0]["description"].splitlines()
        assert lines[0].startswith(
            board_line("nb", 1, world.alice.id, wins=2, games=3, draws=0, medal="🥇")
        )
        assert lines[0].endswith(t("nb", "lb.matches", wins=1, matches=1))
        assert lines[1].endswith(t("nb", "lb.matches", wins=0, matches=1))
        fields = {f["name"]: f["value"] for f in stats.embeds[0]["fields"]}
        assert (fields[t("nb", "stats.wins")], fields[t("nb", "stats.matches")]) == (
            "2",
            t("nb", "stats.matches_value", wins=1, matches=1),
        )

        assert three.message is not None
        onlooker = await press(standin, three.message, f"krig:rematch:{third}", world.carol)
        rematch = await press(standin, three.message, f"krig:rematch:{third}", world.bob)

        assert onlooker.ephemeral
        assert onlooker.content == t("en", "err.not_player")
        assert not rematch.ephemeral
        assert rematch.content == f"<@{world.alice.id}>"
        assert t("nb", "match.rule", best_of=3, target=2) in text_of(rematch)
        new = game_id_of(rematch)
        row = await game_row(bot, new)
        assert (row.status, row.players, row.rules) == (
            "challenge",
            (world.bob.id, world.alice.id),
            first_row.rules,
        )
        assert row.extra["match"] == {"id": new, "best_of": 3, "game": 1, "score": [0, 0]}


async def test_a_rematch_of_a_single_game_has_the_same_rules_and_starts_when_accepted(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, NEXT_CHALLENGE)  # 32 rounds with these rules
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(
            standin, world.no_channel, world.alice, world.bob, pickup="table", shortage="last_card"
        )
        over = await flip(standin, world.no_channel, world.alice, count=50)
        assert t("nb", "over.title") in text_of(over)
        assert over.message is not None

        rematch = await press(standin, over.message, f"krig:rematch:{table.game_id}", world.alice)
        new = game_id_of(rematch)
        assert rematch.message is not None
        accepted = await press(standin, rematch.message, f"krig:accept:{new}", world.bob)

        assert accepted.type == UPDATE_MESSAGE
        assert t("nb", "table.title", round=0) in text_of(accepted)
        old, row = await game_row(bot, table.game_id), await game_row(bot, new)
        assert (row.status, row.players, row.rules) == ("running", old.players, old.rules)
        assert Rules.from_dict(row.rules) == Rules.preset(
            "standard", pickup="table", shortage="last_card"
        )
        assert "match" not in row.extra
        assert row.seed == NEXT_CHALLENGE


async def test_a_match_game_that_finished_just_before_a_stop_is_counted_at_start_up(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    errors_expected: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(ALICE_WINS, BOB_WINS)

    async def crash(self: MatchKeeper, *_: object) -> None:
        raise OSError("the process died here")

    with monkeypatch.context() as patched:
        patched.setattr(MatchKeeper, "advance", crash)
        async with running_bot(standin, db_path, seeds):
            standin.fail_fast_on_bot_errors = False  # the crash is logged; the test claims it
            message = await challenge_message(
                standin, world.no_channel, world.alice, world.bob, best_of=3
            )
            first = game_id_of(message)
            await press(standin, message, f"krig:accept:{first}", world.bob)
            one = await flip(standin, world.no_channel, world.alice, count=50)
            assert "🏆 " + t("nb", "over.winner", name="**Alice**") in text_of(one)
            assert buttons(one) == {}  # no next game yet, and no rematch in a match
            (logged,) = standin.accept_bot_errors()
            assert "after game" in logged.getMessage()
            await settled()  # its end was shown: the restarted bot need not show it again
    watcher = standin.watch(world.no_channel)

    async with running_bot(standin, db_path, seeds) as restarted:
        told = await watcher.next("create")

        assert told.message.content == t("nb", "match.dealt_after_restart", game=first)
        (next_flip,) = told.message.custom_ids()
        second = int(next_flip.split(":")[2])
        await settled()
        row = await game_row(restarted, second)
        assert row.extra["match"] == {"id": first, "best_of": 3, "game": 2, "score": [1, 0]}
        assert row.table_message_id == told.message.id
        assert next_flip == f"krig:flip:{second}:0"
        # It is the channel's live table: the next table greys its button.
        opened = await flip(standin, world.no_channel, world.bob)
        assert t("nb", "match.line", best_of=3, game=2, score="Alice 1 · Bob 0") in match_field(
            opened
        )
        await settled()
        assert [b for b in buttons(told.message).values() if not b.get("disabled")] == []
