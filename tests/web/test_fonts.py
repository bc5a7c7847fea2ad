"""The web fonts' slices, cut where the bot's pictures are drawn."""

from __future__ import annotations

import io
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest
from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

from krigbot.web import fonts
from krigbot.web.fonts import FontSlices, slices

pytestmark = pytest.mark.slow  # starts a worker process


async def test_a_slice_cut_in_a_worker_process_is_the_font_a_browser_gets() -> None:
    # A slice of Greek, in FiraGO: small, so the worker cuts it in a moment.
    name = next(n for n, piece in slices().items() if piece.codes[0] == 0x370)
    fonts._CUT.pop(name, None)  # cut by another test in this process: cut it again here
    submitted: list[str] = []

    class Workers(ProcessPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(args[0].name)
            return super().submit(fn, *args, **kwargs)

    with Workers(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as workers:
        served = await FontSlices(cutter=workers).get(name)

    assert submitted == [name]
    assert served is not None
    assert served[:4] == b"wOF2"
    font = TTFont(io.BytesIO(served))
    assert set(font.getBestCmap()) == set(slices()[name].codes)  # every letter, no other
