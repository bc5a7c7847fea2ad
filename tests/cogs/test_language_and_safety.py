"""Who reads which language, who gets pinged, names that try to be markup, DMs, and failures."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from krigbot.adapter import replies
from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.i18n import t
from tests.standin import DiscordStandIn, User
from tests.standin.fixtures import SampleWorld
from tests.standin.messages import EPHEMERAL
from tests.support.players import (
    DEFERRED_CHANNEL_MESSAGE,
    answer_of,
    challenge,
    challenge_message,
    flip,
    flip_button,
    game_id_of,
    live_mentions,
    press,
    public_messages,
    start_game,
    text_of,
    visible,
)
from tests.support.texts import pattern

# Spelled out, not asked of lang_for: these tests check the bot's choice of language.
CATALOG_OF = {"no": "nb", "sv-SE": "sv", "da": "da", "en-US": "en"}
NO_GAME = {locale: t(lang, "err.no_game") for locale, lang in CATALOG_OF.items()}
CHALLENGE_BODY = {
    locale: t(lang, "challenge.body", challenger="Ada", players="Bo")
    for locale, lang in CATALOG_OF.items()
}
ACCEPT_LABEL = {locale: t(lang, "challenge.accept") for locale, lang in CATALOG_OF.items()}


# ---------------------------------------------------------------------------- language


async def test_a_swedish_player_in_a_norwegian_server_reads_public_norwegian_and_private_swedish(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.bob, world.alice)
    assert t("nb", "challenge.body", challenger="Bob", players="Alice") in text_of(message)

    early = await flip(standin, world.no_channel, world.bob)
    assert early.ephemeral
    assert early.content == t("sv", "err.not_running")

    await press(standin, message, f"krig:accept:{game_id_of(message)}", world.alice)
    played = await flip(standin, world.no_channel, world.bob)
    assert not played.ephemeral
    assert played.embeds[0]["title"] == t("nb", "table.title", round=1)


@pytest.mark.parametrize("locale", list(NO_GAME))
async def test_a_private_answer_follows_the_readers_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, locale: str
) -> None:
    rec = await standin.slash("flip", user=world.alice, channel=world.no_channel, locale=locale)
    answer = await answer_of(standin, rec)

    assert answer.ephemeral
    assert answer.content == NO_GAME[locale]


@pytest.mark.parametrize("locale", list(CHALLENGE_BODY))
async def test_a_public_message_follows_the_servers_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, locale: str
) -> None:
    guild = standin.add_guild(f"Krig {locale}", locale=locale, owner=world.owner)
    channel = standin.add_channel(guild, "krig")
    ada = standin.add_user("ada", "Ada", locale="de")  # a language without a catalog
    bo = standin.add_user("bo", "Bo", locale="sv-SE")
    for user in (ada, bo):
        standin.add_member(guild, user)

    message = await challenge_message(standin, channel, ada, bo)

    assert CHALLENGE_BODY[locale] in text_of(message)
    accept = f"krig:accept:{game_id_of(message)}"
    assert [b["label"] for b in message.walk_components() if b.get("custom_id") == accept] == [
        ACCEPT_LABEL[locale]
    ]


@pytest.mark.parametrize("locale", ["de", "fr", "fi", "pl", "pt-BR", "ja"])
async def test_a_reader_whose_language_has_no_catalog_reads_english(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, locale: str
) -> None:
    rec = await standin.slash("flip", user=world.alice, channel=world.no_channel, locale=locale)
    answer = await answer_of(standin, rec)

    assert answer.ephemeral
    assert answer.content == NO_GAME["en-US"]


@pytest.mark.parametrize("locale", ["de", "fr", "fi", "pl"])
async def test_a_server_whose_language_has_no_catalog_is_answered_in_english_in_public(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, locale: str
) -> None:
    guild = standin.add_guild(f"Krieg {locale}", locale=locale, owner=world.owner)
    channel = standin.add_channel(guild, "krig")
    ada = standin.add_user("ada", "Ada", locale="no")  # Norwegian herself: public is the server's
    bo = standin.add_user("bo", "Bo", locale=locale)
    for user in (ada, bo):
        standin.add_member(guild, user)

    message = await challenge_message(standin, channel, ada, bo)
    refused = await answer_of(standin, await challenge(standin, channel, bo, ada))

    assert CHALLENGE_BODY["en-US"] in text_of(message)
    accept = f"krig:accept:{game_id_of(message)}"
    assert [b["label"] for b in message.walk_components() if b.get("custom_id") == accept] == [
        ACCEPT_LABEL["en-US"]
    ]
    assert refused.ephemeral
    assert pattern("en", "err.busy").match(refused.content)


# ---------------------------------------------------------------------------- dates

HISTORY_DATE = {
    "en-US": "Dec 1, 2026",
    "en-GB": "1 Dec 2026",
    "no": "1. des. 2026",
    "sv-SE": "1 dec. 2026",
    "da": "1. dec. 2026",
    "de": "Dec 1, 2026",
    "fr": "Dec 1, 2026",
}


@pytest.mark.parametrize("locale", list(HISTORY_DATE))
async def test_history_dates_follow_the_readers_own_locale(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, locale: str
) -> None:
    when = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    row = await bot.storage.games.create_game(
        guild_id=world.no_guild.id,
        channel_id=world.no_channel.id,
        challenger_id=world.alice.id,
        players=[world.alice.id, world.bob.id],
        names=["Alice", "Bob"],
        variant="standard",
        rules=Rules.preset("standard").to_dict(),
        seed=1,
        now=when,
    )
    assert await bot.storage.games.end_game(row.id, "cancelled", when)

    rec = await standin.slash(
        "krig history", user=world.carol, channel=world.no_channel, locale=locale
    )
    answer = await answer_of(standin, rec)

    (line,) = answer.embeds[0]["description"].splitlines()
    assert line.startswith(f"`#{row.id}` · {HISTORY_DATE[locale]} · Alice – Bob")


# ---------------------------------------------------------------------------- mentions


async def test_nothing_but_the_challenge_pings_anyone(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice)
    await press(standin, table.message, flip_button(table.message), world.bob)
    for command, user in [
        ("krig status", world.bob),
        ("krig stats", world.alice),
        ("krig leaderboard", world.carol),
        ("krig rules", world.alice),
        ("krig forfeit", world.carol),  # a refusal
    ]:
        await answer_of(standin, await standin.slash(command, user=user, channel=world.no_channel))
    confirm = (
        await answer_of(
            standin, await standin.slash("krig forfeit", user=world.bob, channel=world.no_channel)
        )
    ).message
    assert confirm is not None
    watcher = standin.watch(world.no_channel)
    await press(standin, confirm, f"krig:forfeit:{table.game_id}:{world.bob.id}:yes", world.bob)
    await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    second = await challenge_message(standin, world.no_channel, world.bob, world.carol)
    await answer_of(
        standin, await standin.slash("krig cancel", user=world.bob, channel=world.no_channel)
    )
    await watcher.next("edit", predicate=lambda e: e.message is second)

    messages = standin.messages(world.no_channel)
    assert len(messages) >= 10
    # A challenge keeps naming whom it challenged (edits ping nobody); nothing else names anyone.
    challenged = {table.message.id: {world.bob.id}, second.id: {world.carol.id}}
    for message in messages:
        assert not message.mention_everyone
        assert message.mention_role_ids == []
        pinged = {user.id for user in message.mentions}
        assert pinged <= challenged.get(message.id, set()), text_of(message)
    sent = [r.json for r in standin.requests.items if isinstance(r.json, dict)]
    mentions = [
        (payload.get("data") or payload).get("allowed_mentions")
        for payload in sent
        if "embeds" in (payload.get("data") or payload)
        or "content" in (payload.get("data") or payload)
    ]
    challenges = [m for m in mentions if m and m.get("users")]
    assert challenges == [
        {"parse": [], "users": [world.bob.id]},
        {"parse": [], "users": [world.carol.id]},
    ]
    assert all(m == {"parse": []} for m in mentions if m not in challenges), mentions


# ------------------------------------------------------------------------ display names

TRICKY_NAMES = ["@everyone", "@here", "**bold**", "<@123>", "<@BOB>", "__under__ `code`"]


def assert_shown_literally(text: str, name: str) -> None:
    """Check that ``text`` shows ``name`` character for character and none of it acts as markup."""
    assert name in visible(text)
    assert name not in text  # every name here has markup in it, which must come out escaped
    assert live_mentions(text) == []
    assert "@everyone" not in text
    assert "@here" not in text


def tricky_user(standin: DiscordStandIn, world: SampleWorld, name: str) -> User:
    literal = name.replace("BOB", str(world.bob.id))
    user = standin.add_user("mallory", literal, locale="nb")
    standin.add_member(world.no_guild, user)
    return user


@pytest.mark.parametrize("name", TRICKY_NAMES)
async def test_a_display_name_that_looks_like_markup_renders_literally_and_pings_nobody(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, name: str
) -> None:
    mallory = tricky_user(standin, world, name)
    literal = mallory.display_name
    assert literal is not None

    table = await start_game(standin, world.no_channel, mallory, world.bob)
    played = await flip(standin, world.no_channel, mallory)
    cancelled = await answer_of(
        standin, await standin.slash("krig cancel", user=world.moderator, channel=world.no_channel)
    )

    for shown in (text_of(table.message), text_of(played)):
        assert_shown_literally(shown, literal)
    assert table.message.mentions == []
    assert not table.message.mention_everyone
    assert played.message is not None
    assert played.message.mentions == []
    assert cancelled.message is not None
    assert cancelled.message.mentions == []


@pytest.mark.parametrize("name", TRICKY_NAMES)
async def test_a_tricky_name_in_a_public_line_of_text_is_escaped(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, name: str
) -> None:
    mallory = tricky_user(standin, world, name)
    await challenge_message(standin, world.no_channel, mallory, world.bob)

    answer = await answer_of(
        standin, await standin.slash("krig cancel", user=mallory, channel=world.no_channel)
    )

    assert visible(answer.content) == t("nb", "cancel.withdrawn", name=mallory.display_name)
    assert_shown_literally(answer.content, mallory.display_name or "")
    assert answer.message is not None
    assert answer.message.mentions == []
    assert not answer.message.mention_everyone


@pytest.mark.parametrize("name", TRICKY_NAMES)
async def test_a_tricky_name_in_a_refusal_is_escaped(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, name: str
) -> None:
    mallory = tricky_user(standin, world, name)

    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, world.alice, mallory, mallory)
    )

    assert answer.ephemeral
    assert visible(answer.content) == t("nb", "err.duplicate", name=mallory.display_name)
    assert_shown_literally(answer.content, mallory.display_name or "")


# ----------------------------------------------------------------------- unknown errors


async def broken_flip(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the flux capacitor melted")


def assert_logged_once_with_traceback(standin: DiscordStandIn) -> None:
    (record,) = standin.accept_bot_errors()
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)


async def test_an_unexpected_error_in_a_command_is_logged_and_the_user_told_briefly(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    monkeypatch: pytest.MonkeyPatch,
    errors_expected: None,
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)
    monkeypatch.setattr(bot.service.play, "flip", broken_flip)

    answer = await flip(standin, world.no_channel, world.bob)

    assert answer.ephemeral
    assert answer.content == t("sv", "err.unknown")
    assert "flux" not in answer.content
    assert_logged_once_with_traceback(standin)
    assert len(public_messages(standin, world.no_channel)) == 1


async def test_an_unexpected_error_in_a_button_is_logged_and_the_user_told_briefly(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    monkeypatch: pytest.MonkeyPatch,
    errors_expected: None,
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    monkeypatch.setattr(bot.service.play, "flip", broken_flip)

    answer = await press(standin, table.message, flip_button(table.message), world.carol)

    assert answer.ephemeral
    assert answer.content == t("en", "err.unknown")
    assert_logged_once_with_traceback(standin)
    assert t("nb", "table.title", round=0) in text_of(table.message)


async def test_an_error_after_deferring_leaves_no_public_trace_and_one_private_line(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    monkeypatch: pytest.MonkeyPatch,
    errors_expected: None,
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)
    release = asyncio.Event()

    async def slow_then_broken(*args: Any, **kwargs: Any) -> Any:
        await release.wait()
        raise RuntimeError("the flux capacitor melted")

    monkeypatch.setattr(replies, "DEFER_AFTER", 0.05)  # defer at once instead of after 2 s
    monkeypatch.setattr(bot.service.play, "flip", slow_then_broken)
    rec = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    deferred = await rec.response()
    assert deferred.type == DEFERRED_CHANNEL_MESSAGE
    assert deferred.message is not None

    release.set()
    await rec.followup(timeout=5)

    assert deferred.message.deleted  # the public "thinking..." message is gone
    # The stand-in lets a follow-up fill a deleted "thinking" message, so read what the bot sent.
    (sent,) = [r.json for r in standin.requests_matching("POST", f"/webhooks/.*/{rec.token}$")]
    assert sent["flags"] & EPHEMERAL
    assert sent["content"] == t("nb", "err.unknown")
    assert len(public_messages(standin, world.no_channel)) == 1
    assert_logged_once_with_traceback(standin)
