"""The table's layout: badges on their piles, a growing pot, greyed seats, an even table."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator

import pytest
from PIL import Image

from krigbot.engine import Game, Round, Rules
from krigbot.render.samples import find_round
from krigbot.render.table import FOOTER, HEIGHT, MARGIN, WIDTH, Layout, layout_round, render_round
from tests.support.pixels import pixels

Box = tuple[int, int, int, int]


def picture(played: Round, names: tuple[str, ...], *, teams: bool = False) -> Image.Image:
    png = render_round(played, names, "nb", total_cards=sum(played.counts), teams=teams)
    return Image.open(io.BytesIO(png)).convert("RGB")


def war_rounds(rules: Rules, count: int) -> Iterator[Round]:
    """Yield the first ``count`` rounds with a war in seeded games."""
    seed = 0
    while count:
        game = Game.new(rules, seed)
        while not game.finished and count:
            played = game.play_round()
            if played.war_steps:
                count -= 1
                yield played
        seed += 1


def inside(inner: Box, outer: Box, margin: int) -> bool:
    return (
        inner[0] >= outer[0] + margin
        and inner[1] >= outer[1] + margin
        and inner[2] <= outer[2] - margin
        and inner[3] <= outer[3] - margin
    )


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def saturation(image: Image.Image, box: Box) -> float:
    """Return the mean spread between a pixel's strongest and weakest colour in a box."""
    seen = pixels(image.crop(box))
    return sum(max(p) - min(p) for p in seen) / len(seen)


def brightness(image: Image.Image, box: Box) -> float:
    seen = pixels(image.crop(box))
    return sum(sum(p) for p in seen) / (3 * len(seen))


@pytest.mark.parametrize(
    ("preset", "players"),
    [("standard", 2), ("razboi", 2), ("fem", 2), ("klassisk", 3), ("standard", 4), ("lag", 4)],
)
def test_no_badge_sits_across_a_card_edge(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players)
    for played in war_rounds(rules, 150):
        places = layout_round(played, players, teams=rules.teams)
        for i, pile in enumerate(places.placed):
            if pile.card is not None:
                continue
            badge = places.badge_box(pile)
            # On the pile's own strip, clear of its edges and of every card laid on top of it.
            assert inside(badge, places.box(pile), 2), played
            for later in places.placed[i + 1 :]:
                assert not overlaps(badge, places.box(later)), played
            assert badge[2] - badge[0] >= 16  # a number still legible in a small preview


def pot_height(played: Round) -> int:
    """Return how many rows of the footer show the pot's card edges (paper-white pixels)."""
    footer = picture(played, ("Ingrid", "Bjørn")).crop((0, HEIGHT - FOOTER, WIDTH, HEIGHT))
    rows = [
        y
        for y in range(footer.height)
        if any(min(p) > 200 for p in pixels(footer.crop((0, y, WIDTH, y + 1))))
    ]
    return max(rows) - min(rows) + 1


def test_the_pot_stack_grows_with_every_pot_from_the_smallest_up() -> None:
    played = find_round(Rules.preset("standard"), lambda r: not r.war_steps and r.winner == 0)
    heights = [pot_height(played._replace(taken=taken)) for taken in (2, 4, 6, 10, 20, 40)]
    assert heights == sorted(set(heights)), heights  # taller at every step
    assert heights[-1] >= 2 * heights[0]
    assert heights[-1] < FOOTER  # still inside the footer


def test_seats_that_sit_out_the_war_are_greyed_and_dimmed() -> None:
    # Four players, two of them in the war: the other two battle cards stay, in grey.
    played = find_round(
        Rules.preset("standard", players=4),
        lambda r: len(r.battle) == 4 and bool(r.war_steps) and len(r.war_steps[0].fighters) == 2,
    )
    image, places = picture(played, ("Ada", "Bo", "Cy", "Dag")), layout_round(played, 4)
    fighters = set(played.war_steps[0].fighters)
    for seat in range(4):
        first = next(p for p in places.placed if p.seat == seat)
        box = places.box(first)
        if seat in fighters:
            assert saturation(image, box) > 20, seat
        else:
            assert saturation(image, box) < 6, seat
            assert brightness(image, box) < 170, seat  # a white card reads well over 200


def test_a_seat_out_of_the_game_shows_a_smaller_grey_card() -> None:
    played = find_round(
        Rules.preset("standard", players=3), lambda r: [s for s, _ in r.battle] == [0, 2]
    )
    image, places = picture(played, ("Ingrid", "Bjørn", "Åsa")), layout_round(played, 3)
    assert list(places.out) == [1]
    out = places.out[1]
    assert saturation(image, out) < 6
    assert out[3] - out[1] < places.card_height
    assert not any(p.seat == 1 for p in places.placed)


def seat_extents(places: Layout) -> list[Box]:
    """Return, seat by seat in the order drawn, the box around everything the seat shows."""
    extents = []
    for seat in places.columns:
        boxes = [places.box(p) for p in places.placed if p.seat == seat]
        if seat in places.out:
            boxes.append(places.out[seat])
        extents.append(
            (
                min(b[0] for b in boxes),
                min(b[1] for b in boxes),
                max(b[2] for b in boxes),
                max(b[3] for b in boxes),
            )
        )
    return extents


@pytest.mark.parametrize("out_seat", [0, 1, 2])
@pytest.mark.parametrize("war", [False, True])
def test_three_players_with_one_out_sit_evenly_across_the_table(out_seat: int, war: bool) -> None:
    playing = [s for s in range(3) if s != out_seat]
    played = find_round(
        Rules.preset("standard", players=3),
        lambda r: [s for s, _ in r.battle] == playing and bool(r.war_steps) == war,
    )
    places = layout_round(played, 3)
    extents = seat_extents(places)
    left_margin, right_margin = extents[0][0] - MARGIN, WIDTH - MARGIN - extents[-1][2]
    gaps = [b[0] - a[2] for a, b in itertools.pairwise(extents)]
    # The same room between every two seats, and half of it at either side of the table.
    assert max(gaps) - min(gaps) <= 2, gaps
    assert abs(left_margin - right_margin) <= 2
    assert abs(2 * left_margin - gaps[0]) <= 3
    # The seat out takes less room than either player.
    widths = {seat: right - left for seat, (left, right) in places.columns.items()}
    assert all(widths[out_seat] < widths[seat] for seat in playing)
    # The middle of the cards is the middle of the picture.
    middle = (extents[0][0] + extents[-1][2]) / 2
    assert abs(middle - WIDTH / 2) <= 2


def test_four_players_in_play_get_columns_of_one_width() -> None:
    played = find_round(Rules.preset("standard", players=4), lambda r: len(r.battle) == 4)
    places = layout_round(played, 4)
    widths = [right - left for left, right in places.columns.values()]
    assert max(widths) - min(widths) <= 1
    assert places.columns[0][0] == MARGIN
    assert places.columns[3][1] == WIDTH - MARGIN
