"""Nobody let in: buttons copied to other channels and servers, moderators of another server,
and display names that try to be markup, mentions, or to turn the text around them backwards.

The everyday cases (only players flip, only the challenged answer, only a moderator or an early
challenger cancels, each server its own leaderboard and stats) are tested in ``tests/cogs``;
these are the ways around them.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from tests.standin import Channel, DiscordStandIn, InteractionResponse, Message, User
from tests.standin.fixtures import SampleWorld
from tests.standin.records import MESSAGE_COMPONENT
from tests.support.consistency import snapshot
from tests.support.players import (
    answer_of,
    challenge_message,
    flip,
    flip_button,
    game_id_of,
    live_mentions,
    press,
    settled,
    start_game,
    text_of,
    visible,
)

BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067")
"""Direction controls that must never reach a message (isolates FSI/PDI are how names are
wrapped, and come in pairs)."""


async def press_elsewhere(
    standin: DiscordStandIn, message: Message, custom_id: str, user: User, channel: Channel
) -> InteractionResponse:
    """Press a button of ``message`` as if the message were in ``channel`` (a copied button)."""
    rec = await standin.send_interaction(
        MESSAGE_COMPONENT,
        {"custom_id": custom_id, "component_type": 2},
        user=user,
        channel=channel,
        message=message,
    )
    return await answer_of(standin, rec)


async def test_a_button_copied_to_another_channel_or_server_changes_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    here = standin.add_channel(world.no_guild, "her")
    challenge = await challenge_message(standin, here, world.carol, world.bob)
    accept = f"krig:accept:{game_id_of(challenge)}"
    decline = f"krig:decline:{game_id_of(challenge)}"
    confirm = (
        await answer_of(
            standin, await standin.slash("krig forfeit", user=world.bob, channel=world.no_channel)
        )
    ).message
    assert confirm is not None
    forfeit = f"krig:forfeit:{table.game_id}:{world.bob.id}:yes"
    await settled()
    before = snapshot(Path(bot.storage.path))
    print("SNAP", before["games"][1][11:15])

    # Each press is by someone who may use the button, but from where the game is not.
    answers = [
        await press_elsewhere(standin, challenge, accept, world.bob, world.sv_channel),
        await press_elsewhere(standin, challenge, decline, world.bob, world.no_channel),
        await press_elsewhere(
            standin, table.message, flip_button(table.message), world.alice, world.sv_channel
        ),
        await press_elsewhere(standin, confirm, forfeit, world.bob, here),
    ]

    elsewhere = {"en": t("en", "err.elsewhere"), "sv": t("sv", "err.elsewhere")}
    assert [a.content for a in answers[:2]] == [elsewhere["sv"], elsewhere["sv"]]
    assert all(answer.ephemeral for answer in answers)
    assert answers[2].content == t("nb", "err.game_over")
    assert answers[3].content == t("sv", "err.game_over")
    assert snapshot(Path(bot.storage.path)) == before
    assert t("nb", "table.title", round=0) in text_of(table.message)
    assert accept in challenge.custom_ids()


async def test_a_moderator_of_one_server_is_nobody_special_in_another(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    abroad = await start_game(standin, world.sv_channel, world.alice, world.bob)

    rec = await standin.slash("krig cancel", user=world.moderator, channel=world.sv_channel)
    answer = await answer_of(standin, rec)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.cancel_denied")
    row = await bot.storage.games.get_game(abroad.game_id)
    assert row is not None
    assert row.status == "running"


# --------------------------------------------------------------------------------- names

NAMES = [
    "\u202eecilA",  # a right-to-left override: the rest of the line would read backwards
    "مرحبا يا صديقي",  # Arabic
    "שלום **עולם**",  # Hebrew with markdown
    "@everyone " + "W" * 120,  # very long (Discord allows 32; a forged payload need not)
    "<@&1> __x__ `y` ||z|| [link](https://x.test)",
    "\u2067<@1>\u2069 ~~strike~~ > quote",
]


def assert_safe(text: str, players: list[User]) -> None:
    """Check text shows no markup, no mention but of players, and keeps its direction."""
    pills = {f"<@{player.id}>" for player in players}  # shown as names; pinging is checked apart
    assert set(live_mentions(text)) <= pills, text
    assert "@everyone" not in text
    assert not BIDI_CONTROLS & set(text), [hex(ord(c)) for c in BIDI_CONTROLS & set(text)]
    assert text.count("\u2068") == text.count("\u2069")  # every isolate is closed
    assert "W" * 40 not in text  # long names are cut


@pytest.mark.parametrize("locale", ["nb", "en-US"])
async def test_names_that_are_markup_mentions_long_or_right_to_left_render_safely(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, locale: str
) -> None:
    guild = standin.add_guild("Navn", locale=locale, owner=world.owner)
    channel = standin.add_channel(guild, "krig")
    moderator_role = standin.add_role(guild, "Mod", ["manage_messages"])
    standin.add_member(guild, world.moderator, roles=[moderator_role])
    players = [standin.add_user(f"p{n}", name, locale=locale) for n, name in enumerate(NAMES)]
    for player in players:
        standin.add_member(guild, player)

    message = await challenge_message(standin, channel, players[0], *players[1:4])
    # The challenge's own line pings the challenged, on purpose; the rest is checked below.
    assert message.content == " ".join(f"<@{p.id}>" for p in players[1:4])
    shown = ["\n".join(text_of(message).splitlines()[1:])]
    for player in players[1:4]:
        accepted = await press(standin, message, f"krig:accept:{game_id_of(message)}", player)
        shown.append(text_of(accepted))
    shown.append(text_of(await flip(standin, channel, players[0], count=3)))
    status = await answer_of(
        standin, await standin.slash("krig status", user=players[1], channel=channel)
    )
    shown.append(text_of(status))
    refused = await answer_of(
        standin,
        await standin.slash(
            "krig start", user=players[4], channel=channel, options={"opponent": players[5]}
        ),
    )
    shown.append(text_of(refused))
    cancelled = await answer_of(
        standin, await standin.slash("krig cancel", user=world.moderator, channel=channel)
    )
    shown.append(text_of(cancelled))
    # A short game played out: the result names the winner.
    second = await start_game(standin, channel, players[4], players[5], rounds=1)
    shown.append(text_of(await flip(standin, channel, players[5])))
    stats = await answer_of(
        standin,
        await standin.slash(
            "krig stats", user=players[4], channel=channel, options={"user": players[5]}
        ),
    )
    shown.append(text_of(stats))

    for text in shown:
        assert_safe(text, players)
    everything = "\n".join(visible(text) for text in shown)
    assert "ecilA" in everything  # the name is there, without its override
    rtl = [name for name in NAMES if any(unicodedata.bidirectional(c) in ("R", "AL") for c in name)]
    for name in rtl:
        assert f"\u2068{name.split()[0]}" in everything.replace("\\", "")
    # Only a challenge pings, and only the challenged; no name pings anyone.
    challenged = {message.id: set(players[1:4]), second.message.id: {players[5]}}
    for sent in standin.messages(channel):
        assert {user.id for user in sent.mentions} <= {p.id for p in challenged.get(sent.id, ())}
        assert not sent.mention_everyone
        assert sent.mention_role_ids == []
