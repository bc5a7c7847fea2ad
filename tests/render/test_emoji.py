"""The card emojis: legal uploads, and tables that show them within Discord's limits."""

from __future__ import annotations

import io
import re

from PIL import Image

from krigbot.engine import Round, Rules, Variant, new_game
from krigbot.engine.steal import StealGame
from krigbot.i18n import card_label
from krigbot.render.embeds import fits, round_embed
from krigbot.render.emoji import EMOJI_CARDS, CardFaces, emoji_name, emoji_set, is_ours
from krigbot.render.play import replay_embed
from krigbot.render.replays import rebuild
from krigbot.render.steal import steal_table_embed
from tests.support.narration import row_for

MENTION = re.compile(r"<:krig_[0-9a-f]{6}_\w+:\d+>")
RULES = Rules.preset("jokere", players=4)
"""The game with the longest war narration found: four players, jokers, ties and more ties."""


def every_face() -> CardFaces:
    """Return faces with an emoji for every card, with ids as long as Discord's (19 digits)."""
    faces = CardFaces()
    faces.use("0a1b2c", {card: 1_234_567_890_123_456_789 + i for i, card in enumerate(EMOJI_CARDS)})
    return faces


def longest_war() -> tuple[Variant, Round]:
    """Return a game (as it ended) and its round with the longest war of forty seeded games."""
    found: tuple[int, Variant, Round] | None = None
    for seed in range(40):
        game = new_game(RULES, seed)
        while not game.finished:
            played = game.play_round()
            steps = len(played.war_steps)
            if found is None or steps > found[0]:
                found = (steps, game, played)
    assert found is not None
    return found[1], found[2]


def test_every_emoji_is_a_legal_upload_named_by_discords_rule() -> None:
    version, images = emoji_set()

    assert len(images) == 55
    for card, png in images.items():
        name = emoji_name(version, card)
        assert re.fullmatch(r"[A-Za-z0-9_]{2,32}", name)
        assert is_ours(name)
        assert png.startswith(b"\x89PNG")
        assert len(png) <= 256 * 1024
        assert Image.open(io.BytesIO(png)).size == (128, 128)
    assert not is_ours("krig")
    assert not is_ours("krig_0a1b2c_ZZ")


def test_a_table_shows_each_turned_card_as_its_emoji_and_the_readers_letters() -> None:
    game = new_game(Rules.preset("standard", players=2), 3)
    played = game.play_round()
    row = row_for(game.rules)

    text = round_embed(row, game, played, "nb", faces=every_face()).description or ""

    assert len(MENTION.findall(text)) == len(played.battle)
    for _seat, card in played.battle:
        assert f"<:{emoji_name('0a1b2c', card)}:" in text
        assert (
            f":{1_234_567_890_123_456_789 + EMOJI_CARDS.index(card)}> {card_label(card, 'nb')}"
            in text
        )
    assert "<:" not in (round_embed(row, game, played, "nb").description or "")


def test_the_longest_war_fits_discords_limits_with_its_emojis() -> None:
    game, played = longest_war()

    embed = round_embed(row_for(RULES), game, played, "nb", faces=every_face())

    assert len(played.war_steps) >= 3
    assert fits(embed)
    assert MENTION.search(embed.description or "")


def test_a_table_too_long_with_emojis_shows_the_cards_labels_whole() -> None:
    game, played = longest_war()
    row = row_for(RULES)
    # War steps added until the emojis' mentions no longer fit in Discord's description.
    longer = played
    shown = round_embed(row, game, longer, "nb", faces=every_face())
    while "<:" in (shown.description or ""):
        longer = longer._replace(war_steps=longer.war_steps + played.war_steps)
        shown = round_embed(row, game, longer, "nb", faces=every_face())

    assert shown.description == round_embed(row, game, longer, "nb").description
    assert len(shown.description or "") < 4000
    assert fits(shown)


def test_a_replayed_round_shows_its_cards_as_emojis() -> None:
    game = new_game(Rules.preset("standard", players=2), 3)
    while not game.finished:
        game.play_round()
    rebuilt = rebuild(game.to_dict())
    row = row_for(game.rules)

    shown = replay_embed(row, rebuilt, 1, game, "en", every_face())

    assert len(MENTION.findall(shown.description or "")) >= 2
    assert "<:" not in (replay_embed(row, rebuilt, 1, game, "en").description or "")


def test_a_steal_war_battle_under_way_shows_its_face_up_cards_as_emojis() -> None:
    rules = Rules.preset("stjel", players=3)
    game = StealGame.new(rules, 2365)
    # Default choices until a war waits for its next face-up cards: the tie's cards lie open.
    played = game.begin_battle()
    while not (game.battle_view().war_steps and game.pending()):
        played = game.apply_defaults() if played is None else game.begin_battle()

    shown = steal_table_embed(row_for(rules), game, "nb", faces=every_face())
    plain = steal_table_embed(row_for(rules), game, "nb")

    for _seat, card in game.battle_view().battle:
        assert f"{emoji_name('0a1b2c', card)}:" in (shown.description or "")
        assert card_label(card, "nb") in (plain.description or "")
    assert "<:" not in (plain.description or "")
    assert fits(shown)
