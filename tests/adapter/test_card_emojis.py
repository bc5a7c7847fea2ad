"""The cards as the application's emojis: uploaded once, kept across restarts, shown in play."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from pathlib import Path

import pytest
from PIL import Image

from krigbot.bot import KrigBot
from krigbot.config import Shards
from krigbot.engine import parse_card
from krigbot.i18n import card_label
from krigbot.render.emoji import EMOJI_CARDS, emoji_name, emoji_set
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import running_bot
from tests.support.players import flip, start_game, text_of

UPLOADS = r"^/applications/\d+/emojis$"
MENTION = re.compile(r"<:(krig_[0-9a-f]{6}_(\w+)):(\d+)>")


async def synced(bot: KrigBot) -> None:
    """Wait for the bot's card emojis to be synced (or read) after it is ready."""
    await asyncio.wait_for(bot.faces_synced.wait(), 30)


def held(standin: DiscordStandIn) -> dict[str, int]:
    """Return the application's emojis on "Discord": name -> id."""
    return {e["name"]: int(e["id"]) for e in standin.app.emojis.values()}


def uploads(standin: DiscordStandIn) -> int:
    return len(standin.requests_matching("POST", UPLOADS))


def other_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (32, 32), (20, 140, 60, 255)).save(out, "PNG")
    return out.getvalue()


async def test_the_first_start_uploads_every_card_and_a_restart_uploads_nothing(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    db_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="krigbot")
    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
    assert "card emojis: 55 uploaded, 0 kept, 0 removed" in caplog.messages
    version, _ = emoji_set()
    names = sorted(held(standin))
    assert names == sorted(emoji_name(version, card) for card in EMOJI_CARDS)
    assert len(names) == 55  # 52 cards, 2 jokers, the back
    assert all(re.fullmatch(r"[A-Za-z0-9_]{2,32}", name) for name in names)
    assert uploads(standin) == 55

    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        assert bot.faces.text(parse_card("QD"), "nb").endswith("> D♦")
    assert "card emojis: 0 uploaded, 55 kept, 0 removed" in caplog.messages

    assert uploads(standin) == 55
    assert sorted(held(standin)) == names


async def test_changed_art_replaces_the_cards_emojis_and_leaves_the_others_alone(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        party = await bot.create_application_emoji(name="party", image=other_png())
    art = ("0a1b2c", {card: other_png() for card in EMOJI_CARDS})
    monkeypatch.setattr("krigbot.adapter.emojis.emoji_set", lambda: art)

    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        shown = bot.faces.text(parse_card("9C"), "en")

    assert set(held(standin)) == {"party", *(emoji_name("0a1b2c", card) for card in EMOJI_CARDS)}
    assert held(standin)["party"] == party.id
    assert shown == f"<:krig_0a1b2c_9C:{held(standin)['krig_0a1b2c_9C']}> 9♣"


async def test_a_flip_shows_the_turned_cards_as_emojis_with_the_tables_own_letters(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> None:
    world = standin_world
    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        await start_game(standin, world.no_channel, world.alice, world.bob)
        answer = await flip(standin, world.no_channel, world.alice)

    description = answer.embeds[0]["description"]
    shown = MENTION.findall(description)
    assert len(shown) >= 2, description  # a card for each player, more in a war
    ids = held(standin)
    for name, code, emoji_id in shown:
        assert ids[name] == int(emoji_id)
        # The Norwegian table keeps its letters beside the emoji: D for the queen, E for the ace.
        assert f"<:{name}:{emoji_id}> {card_label(code, 'nb')}" in description


async def test_refused_uploads_leave_the_cards_as_text(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> None:
    world = standin_world
    standin.fail_next("POST", UPLOADS, status=400, code=50035, times=len(EMOJI_CARDS))
    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        await start_game(standin, world.no_channel, world.alice, world.bob)
        answer = await flip(standin, world.no_channel, world.alice)

    assert held(standin) == {}
    assert "<:" not in text_of(answer)
    assert re.search(r"(10|[2-9]|Kn|[DKE])[♠♥♦♣]", answer.embeds[0]["description"])


async def test_a_card_whose_upload_failed_is_text_until_a_restart_uploads_it(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> None:
    standin.fail_next("POST", UPLOADS, status=400, code=50035)
    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        refused = bot.faces.text(parse_card("2S"), "nb")  # the first card uploaded
        taken = bot.faces.text(parse_card("3S"), "nb")
    assert (refused, len(held(standin))) == ("2♠", 54)
    assert taken.startswith("<:krig_")

    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        assert bot.faces.text(parse_card("2S"), "nb").startswith("<:krig_")
    assert uploads(standin) == 55 + 1


@pytest.mark.standin(shard_count=2)
async def test_a_process_without_shard_0_reads_the_emojis_and_uploads_none(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path, card_emojis=True, shards=Shards(2, (1,))) as bot:
        await synced(bot)
        assert bot.faces.text(parse_card("QD"), "en") == "Q♦"
    assert uploads(standin) == 0

    async with running_bot(standin, db_path, card_emojis=True, shards=Shards(2, (0,))) as bot:
        await synced(bot)
    async with running_bot(standin, db_path, card_emojis=True, shards=Shards(2, (1,))) as bot:
        await synced(bot)
        assert bot.faces.text(parse_card("QD"), "en").endswith("> Q♦")
    assert uploads(standin) == 55


async def test_with_card_emojis_off_nothing_is_uploaded_and_the_table_reads_labels(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> None:
    world = standin_world
    async with running_bot(standin, db_path, card_emojis=False) as bot:
        await start_game(standin, world.no_channel, world.alice, world.bob)
        answer = await flip(standin, world.no_channel, world.alice)
        assert not bot.faces_synced.is_set()

    assert "<:" not in text_of(answer)
    assert standin.requests_matching("*", r"/emojis") == []


async def test_an_application_near_its_2000_emojis_gets_only_what_fits_and_the_rest_is_text(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> None:
    for n in range(1, 1991):
        standin.app.emojis[n] = {
            "id": str(n),
            "name": f"server_{n}",
            "roles": [],
            "require_colons": True,
            "managed": False,
            "animated": False,
            "available": True,
        }
    async with running_bot(standin, db_path, card_emojis=True) as bot:
        await synced(bot)
        shown = len(bot.faces)

    assert len(standin.app.emojis) == 2000
    assert uploads(standin) == 10  # never one Discord would refuse
    assert shown == 10  # the first ten cards; the back is not among them


@pytest.mark.standin(shard_count=2)
async def test_a_process_started_before_the_uploads_shows_the_emojis_once_they_are_there(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("krigbot.adapter.emojis.REREAD_SECONDS", (0.05, 0.2))
    async with running_bot(standin, db_path, card_emojis=True, shards=Shards(2, (1,))) as reader:
        await synced(reader)
        assert reader.faces.text(parse_card("QD"), "en") == "Q♦"
        async with running_bot(standin, db_path, card_emojis=True, shards=Shards(2, (0,))) as first:
            await synced(first)
        await asyncio.wait_for(reader.faces_whole.wait(), 30)
        assert reader.faces.text(parse_card("QD"), "en").endswith("> Q♦")
    assert uploads(standin) == 55
