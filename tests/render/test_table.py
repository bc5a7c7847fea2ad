"""The table picture: real rounds from the engine, drawn where the layout says, winner marked."""

from __future__ import annotations

import io
import itertools
from datetime import UTC, datetime

from PIL import Image

from krigbot.engine import Game, Round, Rules, parse_cards
from krigbot.i18n import t
from krigbot.render.embeds import round_embed
from krigbot.render.samples import find_round
from krigbot.render.table import (
    FOOTER,
    HEADER,
    HEIGHT,
    NAME_BLOCK,
    PALETTE_FILE,
    UPSET,
    WIDTH,
    Layout,
    layout_round,
    probe_palette,
    render_round,
)
from tests.support.pixels import pixels
from tests.support.rows import stored_row

NAMES2 = ("Ingrid", "Bjørn")
NAMES4 = ("Ada", "Bo", "Cy", "Dag")


def play(preset: str, *piles: str, **options: object) -> Round:
    """Play the first round of a deal given as one string of card codes per seat."""
    rules = Rules.preset(preset, players=len(piles), **options)
    game = Game.from_piles(rules, [parse_cards(pile.split()) for pile in piles])
    return game.play_round()


def picture(played: Round, names: tuple[str, ...] = NAMES2, *, teams: bool = False) -> Image.Image:
    png = render_round(played, names, "nb", total_cards=sum(played.counts), teams=teams)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


def layout(played: Round, *, teams: bool = False) -> Layout:
    return layout_round(played, len(played.counts), teams=teams)


def red_in(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    return sum(1 for r, g, b in pixels(image.crop(box)) if r > 150 and g < 90 and b < 100)


def gold_in(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    return sum(1 for r, g, b in pixels(image.crop(box)) if r > 170 and g > 120 and b < 90)


def ring(box: tuple[int, int, int, int], width: int) -> list[tuple[int, int, int, int]]:
    """Return the four strips just outside a box."""
    left, top, right, bottom = box
    return [
        (left - width, top, left, bottom),
        (right, top, right + width, bottom),
        (left, top - width, right, top),
        (left, bottom, right, bottom + width),
    ]


def test_a_round_is_a_small_png_of_the_intended_size() -> None:
    played = play("standard", "QC 2S", "TD 3H")
    png = render_round(played, NAMES2, "nb", total_cards=4)
    assert Image.open(io.BytesIO(png)).size == (WIDTH, HEIGHT) == (480, 320)
    assert len(png) <= 100 * 1024


def test_the_picture_shows_the_cards_that_were_played() -> None:
    with_nine = picture(play("standard", "QC 2S", "9S 3H"))
    with_five = picture(play("standard", "QC 2S", "5S 3H"))
    places = layout(play("standard", "QC 2S", "9S 3H"))
    queen, other = places.last_card(0), places.last_card(1)
    assert queen is not None
    assert other is not None
    assert (
        with_nine.crop(places.box(other)).tobytes() != with_five.crop(places.box(other)).tobytes()
    )
    assert (
        with_nine.crop(places.box(queen)).tobytes() == with_five.crop(places.box(queen)).tobytes()
    )


def test_hearts_are_drawn_red_where_the_card_lies() -> None:
    hearts = play("standard", "7H 2S", "5S 3C")
    spades = play("standard", "7S 2S", "5S 3C")
    places = layout(hearts)
    seven = places.last_card(0)
    assert seven is not None
    assert red_in(picture(hearts), places.box(seven)) > 300
    assert red_in(picture(spades), places.box(seven)) == 0


def test_the_winner_glows_and_the_loser_does_not() -> None:
    for winner, piles in ((0, ("KH 2S", "4C 3C")), (1, ("4C 3C", "KH 2S"))):
        played = play("standard", *piles)
        assert played.winner == winner
        image, places = picture(played), layout(played)
        won, lost = places.last_card(winner), places.last_card(1 - winner)
        assert won is not None
        assert lost is not None
        assert sum(gold_in(image, strip) for strip in ring(places.box(won), 6)) > 400
        assert sum(gold_in(image, strip) for strip in ring(places.box(lost), 6)) == 0


def test_a_war_lays_out_the_piles_and_the_deciding_cards() -> None:
    # Two eights: one card down each, then the jack beats the seven.
    played = play("standard", "8S 2S JH 4S", "8H 2H 7C 4H")
    assert len(played.war_steps) == 1
    places = layout(played)
    for seat in (0, 1):
        items = [p for p in places.placed if p.seat == seat]
        assert [p.card is None for p in items] == [False, True, False]
        assert items[1].down == 1
    last = places.last_card(0)
    assert last is not None
    assert last.card == parse_cards(["JH"])[0]


def test_a_deep_war_still_fits_on_the_table() -> None:
    # Război: tied kings put nine cards down each; the seeded games have such a war go on.
    played = find_round(
        Rules.preset("razboi"),
        lambda r: len(r.war_steps) >= 3 and len(r.war_steps[0].face_down[0]) == 9,
    )
    places = layout(played)
    for item in places.placed:
        left, top, right, bottom = places.box(item)
        assert left >= 0
        assert right <= WIDTH
        assert top > HEADER + NAME_BLOCK
        assert bottom <= HEIGHT - FOOTER
    assert picture(played).size == (WIDTH, HEIGHT)


def test_four_players_get_a_column_each_and_nothing_overlaps() -> None:
    played = play("standard", "KS 2S", "9H 3H", "QD 4D", "5C 6C")
    places = layout(played)
    assert list(places.columns) == [0, 1, 2, 3]
    boxes = []
    for seat, (left, right) in places.columns.items():
        card = places.last_card(seat)
        assert card is not None
        box = places.box(card)
        assert left <= box[0]
        assert box[2] <= right
        boxes.append(box)
    for a, b in itertools.pairwise(boxes):
        assert a[2] <= b[0]
    assert picture(played, NAMES4).size == (WIDTH, HEIGHT)


def test_teams_sit_together_team_one_on_the_left() -> None:
    played = play("lag", "KS 2S", "9H 3H", "QD 4D", "5C 6C")
    places = layout(played, teams=True)
    assert list(places.columns) == [0, 2, 1, 3]
    assert picture(played, NAMES4, teams=True).size == (WIDTH, HEIGHT)


def test_jokers_are_drawn_as_jokers() -> None:
    played = play("standard", "X1 2S", "AS 3H", jokers=2)
    assert played.winner == 0
    image, places = picture(played), layout(played)
    joker = places.last_card(0)
    assert joker is not None
    purple = sum(1 for r, g, b in pixels(image.crop(places.box(joker))) if b > 110 and g < 70)
    assert purple > 2000


def test_any_name_can_be_drawn() -> None:
    played = play("standard", "QC 2S", "TD 3H")
    names = ("Åse Marie Kristoffersen-Haugland von Stralsund", "שרה לוי")
    assert picture(played, names).size == (WIDTH, HEIGHT)
    assert picture(played, ("🎮🎲", "")).size == (WIDTH, HEIGHT)


def test_a_2_that_takes_an_ace_gets_a_pill_in_the_header() -> None:
    # rules §1 two_beats_ace: the upset is named in the header, beside nothing else.
    upset = play("standard", "2S 3C", "AH 4C", two_beats_ace=True)
    usual = play("standard", "2S 3C", "AH 4C")
    assert upset.won_by == "two_beats_ace"
    assert upset.winner == 0
    assert usual.won_by == "highest"

    def upset_pixels(played: Round) -> int:
        header = picture(played).crop((0, 0, WIDTH, HEADER))
        return sum(1 for pixel in pixels(header) if pixel == UPSET)

    assert upset_pixels(upset) > 2000
    assert upset_pixels(usual) == 0


def test_a_2_left_alone_when_the_aces_run_short_is_no_upset() -> None:
    # No house rule: the aces tie, every player fights (war_players all) and both aces' holders
    # have no cards left, so the 2's holder takes the table because they ran short. The cards
    # compared (a 2, two aces) look like an upset; the round's recorded reason says otherwise.
    rules = Rules.preset("standard", players=3, war_players="all", pickup="winner_first")
    game = Game.from_piles(rules, [parse_cards(p.split()) for p in ("2C 5D 2D", "AS", "AH")])
    played = game.play_round()
    assert (played.winner, played.won_by) == (0, "shortage")
    names = ("Ada", "Bo", "Cy")

    header = picture(played, names).crop((0, 0, WIDTH, HEADER))
    assert sum(1 for pixel in pixels(header) if pixel == UPSET) == 0
    row = stored_row(rules, (1, 2, 3), names, at=datetime(2026, 12, 1, tzinfo=UTC))
    told = round_embed(row, game, played, "nb").description or ""
    assert t("nb", "table.two_beats_ace") not in told


def test_the_stored_palette_is_the_one_the_probe_rounds_build() -> None:
    # A change of any colour (cards, seats, felt, glow) changes the palette the code builds;
    # pictures mapped onto the stored one would lose that colour.
    assert PALETTE_FILE.read_bytes() == probe_palette(), (
        "the table colours changed: run python -m krigbot.render.table to store the new palette"
    )
