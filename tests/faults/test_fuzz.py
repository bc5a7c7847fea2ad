"""Bad input, generated: every slash command's options and every button's id, through the stand-in.

Hypothesis draws the interactions. One bot and one set of games serve all the examples of a test:
pytest-asyncio runs each example on the test's own event loop, so the function-scoped fixtures
are set up once (which is why that health check is silenced). Examples are derandomized, so a
failure seen once is seen again. Each example must get a clear private answer within Discord's
3 seconds, log no error, and change nothing: not a row of the database, not a public message.

The commands fuzzed are the ones the bot synced, read from the stand-in, so a command added
later is fuzzed too; every example carries at least one defect (a wrong type, a value out of
range or not among the choices, a user Discord did not resolve, a missing or unknown option, an
unknown subcommand). Buttons are pressed on the bot's real messages (as Discord sends them, with
the message's real components) by people who may not use them, from channels and servers they
do not belong to, with ids of games that do not exist, have ended, or are not on the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krigbot.bot import KrigBot
from tests.standin import Channel, DiscordStandIn, InteractionRecord, Message, User
from tests.standin.fixtures import SampleWorld
from tests.standin.records import MESSAGE_COMPONENT
from tests.support.consistency import snapshot
from tests.support.players import (
    answer_of,
    buttons,
    challenge_message,
    flip,
    game_id_of,
    press,
    settled,
    start_game,
)

pytestmark = pytest.mark.slow

FUZZ = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
DISCORD_DEADLINE = 3.0
JSON_INT = 2**53
"""Discord's integers stay within what JavaScript holds exactly."""
USER, STRING, INTEGER, NUMBER = 6, 3, 4, 10


@dataclass
class Arena:
    """Games in every state, in two servers, and the messages showing them."""

    bot: KrigBot
    channels: list[Channel]
    messages: list[Message]
    users: list[User]
    games: list[int]
    allowed: set[tuple[int, str, int, int]]
    """(message id, custom id, presser id, channel id): the presses that would really play."""

    def __repr__(self) -> str:
        return f"Arena(games={self.games})"


@pytest.fixture
async def arena(standin: DiscordStandIn, world: SampleWorld, bot: KrigBot) -> Arena:
    """Set up a running game, an open challenge, a finished and a declined one, another server's."""
    running = await start_game(standin, world.no_channel, world.alice, world.bob)
    newest = (await flip(standin, world.no_channel, world.alice)).message
    assert newest is not None
    challenges = standin.add_channel(world.no_guild, "utfordring")
    open_challenge = await challenge_message(standin, challenges, world.alice, world.bob)
    finished_here = standin.add_channel(world.no_guild, "ferdig")
    finished = await start_game(standin, finished_here, world.alice, world.carol, rounds=1)
    over = (await flip(standin, finished_here, world.carol)).message
    assert over is not None
    quiet = standin.add_channel(world.no_guild, "stille")
    declined = await challenge_message(standin, quiet, world.carol, world.alice)
    declined_id = game_id_of(declined)
    await press(standin, declined, f"krig:decline:{declined_id}", world.alice)
    abroad = await start_game(standin, world.sv_channel, world.bob, world.carol)
    confirm = (
        await answer_of(
            standin, await standin.slash("krig forfeit", user=world.bob, channel=world.no_channel)
        )
    ).message
    assert confirm is not None
    game, mine = running.game_id, world.bob.id
    allowed = {
        (newest.id, f"krig:flip:{game}:1", world.alice.id, world.no_channel.id),
        (newest.id, f"krig:flip:{game}:1", world.bob.id, world.no_channel.id),
        (confirm.id, f"krig:forfeit:{game}:{mine}:yes", mine, world.no_channel.id),
        (confirm.id, f"krig:forfeit:{game}:{mine}:no", mine, world.no_channel.id),
        (abroad.message.id, f"krig:flip:{abroad.game_id}:0", world.bob.id, world.sv_channel.id),
        (abroad.message.id, f"krig:flip:{abroad.game_id}:0", world.carol.id, world.sv_channel.id),
    }
    challenge_id = game_id_of(open_challenge)
    for kind in ("accept", "decline"):
        allowed.add((open_challenge.id, f"krig:{kind}:{challenge_id}", mine, challenges.id))
    for player in (world.alice, world.carol):  # a rematch of the finished game: a new challenge
        allowed.add((over.id, f"krig:rematch:{finished.game_id}", player.id, finished_here.id))
    await settled()
    return Arena(
        bot=bot,
        channels=[world.no_channel, challenges, finished_here, quiet, world.sv_channel],
        messages=[
            *(running.message, newest, open_challenge, finished.message, over),
            *(declined, abroad.message, confirm),
        ],
        users=[world.alice, world.bob, world.carol, world.moderator],
        games=[
            running.game_id,
            challenge_id,
            finished.game_id,
            declined_id,
            abroad.game_id,
        ],
        allowed=allowed,
    )


class Witness:
    """Everything an example must leave as it was, and the checks that it did."""

    def __init__(self, standin: DiscordStandIn, arena: Arena) -> None:
        self.standin = standin
        self.db = Path(arena.bot.storage.path)
        self.rows = snapshot(self.db)
        self.events = len(standin.channel_events)
        self.errors = len(standin.bot_errors)

    async def check(self, rec: InteractionRecord) -> None:
        """Check the interaction was answered privately, in time, and nothing else happened."""
        answer = await rec.response(timeout=DISCORD_DEADLINE + 1)
        if answer.deferred:
            assert answer.ephemeral, "a public deferral for bad input"
            shown = await rec.followup(timeout=DISCORD_DEADLINE + 5)
            assert shown.ephemeral
        else:
            assert answer.ephemeral, (answer.type, answer.content, answer.embeds)
            assert answer.content
        assert answer.latency < DISCORD_DEADLINE
        assert rec.rejected == []
        assert len(self.standin.bot_errors) == self.errors
        for event in self.standin.channel_events.items[self.events :]:
            assert event.kind == "create", event
            assert event.message.ephemeral, event
        assert snapshot(self.db) == self.rows


# ------------------------------------------------------------------------ slash commands


def leaf_commands(standin: DiscordStandIn) -> list[tuple[list[str], list[dict[str, Any]]]]:
    """Return every synced chat command as (name path, declared options)."""
    found = []
    for command in standin.synced_commands():
        options = command.get("options") or []
        subs = [o for o in options if o["type"] in (1, 2)]
        if not subs:
            found.append(([command["name"]], options))
        for sub in subs:
            inner = sub.get("options") or []
            groups = [o for o in inner if o["type"] == 1]
            if sub["type"] == 2:
                found += [
                    ([command["name"], sub["name"], g["name"]], g.get("options") or [])
                    for g in groups
                ]
            else:
                found.append(([command["name"], sub["name"]], inner))
    return found


def wrong_value(option: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Return values of the wrong JSON type for an option."""
    anything = st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=40),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.integers(-JSON_INT, JSON_INT),
    )
    kind = option["type"]
    if kind == INTEGER:
        return anything.filter(lambda v: not isinstance(v, int) or isinstance(v, bool))
    if kind == NUMBER:
        return anything.filter(lambda v: not isinstance(v, int | float) or isinstance(v, bool))
    if kind == STRING:
        return anything.filter(lambda v: not isinstance(v, str))
    return anything.filter(lambda v: not (isinstance(v, str) and v.isdigit()))


def defects(option: dict[str, Any]) -> list[str]:
    """Return the kinds of defect an option can carry."""
    kinds = ["wrong type", "wrong value type"]
    if option["type"] in (INTEGER, NUMBER) and ("min_value" in option or "max_value" in option):
        kinds.append("out of range")
    if option.get("choices"):
        kinds.append("not a choice")
    if option["type"] == USER:
        kinds.append("unresolved user")
    return kinds


@st.composite
def bad_command(
    draw: st.DrawFn, commands: list[tuple[list[str], list[dict[str, Any]]]], users: list[User]
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """Draw a command, options for it, and the resolved users, with at least one defect."""
    path, declared = draw(st.sampled_from(commands))
    resolved: dict[str, Any] = {"users": {}}
    options: list[dict[str, Any]] = []
    for option in declared:
        if option.get("required") or draw(st.booleans()):
            options.append(
                {
                    "type": option["type"],
                    "name": option["name"],
                    "value": draw(good_value(option, users, resolved)),
                }
            )
    whole = [("option", o, kind) for o in declared for kind in defects(o)]
    whole += [("unknown option", None, "")]
    if any(o.get("required") for o in declared):
        whole.append(("missing", None, ""))
    if len(path) > 1:
        whole.append(("unknown subcommand", None, ""))
    where, option, kind = draw(st.sampled_from(whole))
    if where == "option":
        assert option is not None
        options = [o for o in options if o["name"] != option["name"]]
        options.append(draw(defective(option, kind)))
    elif where == "unknown option":
        name = draw(
            st.text(min_size=1, max_size=20).filter(
                lambda n: n not in {o["name"] for o in declared}
            )
        )
        options.append({"type": STRING, "name": name, "value": "x"})
    elif where == "missing":
        required = [o["name"] for o in declared if o.get("required")]
        options = [o for o in options if o["name"] not in required]
    else:
        path = [*path[:-1], draw(st.text(min_size=1, max_size=20).filter(lambda n: n != path[-1]))]
    return path, draw(st.permutations(options)), resolved


def good_value(
    option: dict[str, Any], users: list[User], resolved: dict[str, Any]
) -> st.SearchStrategy[Any]:
    """Return values Discord could really send for an option."""
    if option.get("choices"):
        return st.sampled_from([c["value"] for c in option["choices"]])
    if option["type"] in (INTEGER, NUMBER):
        return st.integers(option.get("min_value", -JSON_INT), option.get("max_value", JSON_INT))
    if option["type"] == USER:

        def resolve(user: User) -> str:
            resolved["users"][str(user.id)] = user.to_json()
            return str(user.id)

        return st.sampled_from(users).map(resolve)
    return st.text(max_size=40)


@st.composite
def defective(draw: st.DrawFn, option: dict[str, Any], kind: str) -> dict[str, Any]:
    """Draw an option with the given kind of defect."""
    sent: dict[str, Any] = {"type": option["type"], "name": option["name"]}
    if kind == "wrong type":
        sent["type"] = draw(st.integers(0, 12).filter(lambda t: t != option["type"]))
        sent["value"] = draw(wrong_value(option) | st.integers(-JSON_INT, JSON_INT))
    elif kind == "wrong value type":
        sent["value"] = draw(wrong_value(option))
    elif kind == "out of range":
        low, high = option.get("min_value"), option.get("max_value")
        ranges = []
        if low is not None:
            ranges.append(st.integers(-JSON_INT, low - 1))
        if high is not None:
            ranges.append(st.integers(high + 1, JSON_INT))
        sent["value"] = draw(st.one_of(ranges))
    elif kind == "not a choice":
        values = {c["value"] for c in option["choices"]}
        sent["value"] = draw(
            (
                st.text(max_size=30)
                if option["type"] == STRING
                else st.integers(-JSON_INT, JSON_INT)
            ).filter(lambda v: v not in values)
        )
    else:  # a user Discord did not resolve: an id it never sent, or no id at all
        sent["value"] = draw(st.integers(1, 2**63 - 1).map(str) | st.text(max_size=20))
    return sent


@FUZZ
@given(data=st.data())
async def test_every_bad_command_gets_a_clear_private_answer_and_changes_nothing(
    standin: DiscordStandIn, arena: Arena, data: st.DataObject
) -> None:
    path, options, resolved = data.draw(bad_command(leaf_commands(standin), arena.users))
    user = data.draw(st.sampled_from(arena.users), label="user")
    channel = data.draw(st.sampled_from(arena.channels), label="channel")
    for name in reversed(path[1:]):
        options = [{"type": 1, "name": name, "options": options}]
    witness = Witness(standin, arena)

    rec = await standin.slash_raw(
        path[0], user=user, channel=channel, options=options, resolved=resolved
    )

    await witness.check(rec)


# ------------------------------------------------------------------------------- buttons


def other_ids(arena: Arena) -> st.SearchStrategy[str]:
    """Return button ids that are not (necessarily) on the pressed message."""
    games = st.sampled_from(arena.games)
    numbers = games | st.integers(0, 2**70) | st.sampled_from([999_999, 2**63, 2**64])
    users = st.sampled_from([u.id for u in arena.users]) | st.integers(0, 2**64)
    return st.one_of(
        st.builds("krig:accept:{}".format, numbers),
        st.builds("krig:decline:{}".format, numbers),
        st.builds("krig:flip:{}:{}".format, numbers, st.integers(0, 2**64)),
        st.builds("krig:forfeit:{}:{}:{}".format, numbers, users, st.sampled_from(["yes", "no"])),
        st.builds("krig:rematch:{}".format, numbers),
        st.builds("krig:look:{}".format, numbers),
        st.builds("krig:auto:{}:{}".format, numbers, st.sampled_from(["pause", "resume", "stop"])),
        st.builds("krig:finish:{}:{}".format, numbers, st.sampled_from(["yes", "no"])),
        st.builds("krig:{}".format, st.text(max_size=60)),
    )


@FUZZ
@given(data=st.data())
async def test_every_press_that_may_not_play_gets_a_clear_private_answer_and_changes_nothing(
    standin: DiscordStandIn, arena: Arena, data: st.DataObject
) -> None:
    message = data.draw(st.sampled_from(arena.messages), label="message")
    on_message = sorted(buttons(message))
    # Mostly the message's own buttons (discord.py ignores the others): who presses, and where.
    ids = other_ids(arena)
    if on_message:
        own = st.sampled_from(on_message)
        ids = st.one_of(own, own, own, ids)
    custom_id = data.draw(ids, label="custom id")
    user = data.draw(st.sampled_from(arena.users), label="presser")
    channel = data.draw(
        st.sampled_from([message.channel, message.channel, *arena.channels]), label="channel"
    )
    if (message.id, custom_id, user.id, channel.id) in arena.allowed:
        return  # a press that really plays (or answers the challenge): not bad input
    witness = Witness(standin, arena)

    rec = await standin.send_interaction(
        MESSAGE_COMPONENT,
        {"custom_id": custom_id, "component_type": 2},
        user=user,
        channel=channel,
        message=message,
    )

    await witness.check(rec)
