"""Where a round's picture spends its time, stage by stage: ``python -m bench.pictures``.

Prints the median and the range (10th to 90th percentile) of each stage of a picture's way from
the round to the Discord stand-in, over rounds of seeded games:

- drawing the table (Pillow, in the worker) and encoding it (mapping onto the palette, PNG);
- the worker round trip: pickling the call and its PNG, and the process pool's trip there and
  back, with no drawing and with it, awaited from an event loop as the bot does;
- the upload: discord.py's multipart form with the PNG, posted to a server that reads it as the
  stand-in does, against the same reply without a file;
- the PNG settings tried for the encoding (its zlib level and strategy), with the bytes each gives.

Nothing here asserts; it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import pickle
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord
from aiohttp import web
from discord.http import handle_message_parameters
from PIL import Image

from krigbot.engine import Game, Round, Rules
from krigbot.render import table
from krigbot.render.worker import pool, stop_workers, warm_up_workers
from tests.standin.rest import RECORD_KEY, read_payload

NAMES = ("Ingrid", "Bjørn")
WARM_UP = 40
"""Rounds drawn before measuring, so the card cache holds what a running bot's holds."""


def rounds_of(count: int) -> list[Round]:
    """Return the first ``count`` rounds of seeded standard games."""
    rules = Rules.preset("standard")
    found: list[Round] = []
    seed = 0
    while len(found) < count:
        game = Game.new(rules, seed)
        while not game.finished and len(found) < count:
            found.append(game.play_round())
        seed += 1
    return found


def figures(times: Sequence[float]) -> str:
    """Return the median and the 10th-90th percentile range of times in seconds, in ms."""
    ordered = sorted(t * 1000 for t in times)
    low, high = ordered[len(ordered) // 10], ordered[len(ordered) * 9 // 10]
    return f"{statistics.median(ordered):7.3f} ms  ({low:.3f}-{high:.3f})"


def timed(work: Callable[[Any], object], items: Sequence[Any]) -> list[float]:
    """Return how long ``work`` took on each item."""
    times = []
    for item in items:
        started = time.perf_counter()
        work(item)
        times.append(time.perf_counter() - started)
    return times


async def timed_async(
    work: Callable[[Any], Awaitable[object]], items: Sequence[Any]
) -> list[float]:
    """Return how long awaiting ``work`` took on each item."""
    times = []
    for item in items:
        started = time.perf_counter()
        await work(item)
        times.append(time.perf_counter() - started)
    return times


def draw(played: Round) -> Image.Image:
    """Draw a round as the renderer does, without encoding it."""
    return table._draw(played, NAMES, "nb", 52, False, table._felt())[0]


def render(played: Round) -> bytes:
    """Draw and encode a round (what a worker runs for a reply)."""
    return table.render_round(played, NAMES, "nb", total_cards=52)


def sized(size: int) -> bytes:
    """Return as many bytes as a picture has: the worker's answer without the drawing."""
    return bytes(size)


def stage(label: str, times: Sequence[float]) -> None:
    """Print one stage's figures."""
    print(f"  {label:<46} {figures(times)}")


async def worker_stages(rounds: Sequence[Round], png_size: int, processes: int) -> None:
    """Print the process pool's round trip, empty and with the drawing, as the bot awaits it."""
    await asyncio.wrap_future(warm_up_workers(processes))
    executor = pool(processes)
    for played in rounds[:WARM_UP]:
        await asyncio.wrap_future(executor.submit(render, played))

    async def empty(played: Round) -> bytes:
        return await asyncio.wrap_future(executor.submit(sized, png_size))

    async def drawn(played: Round) -> bytes:
        return await asyncio.wrap_future(executor.submit(render, played))

    stage("worker round trip, no drawing (PNG-sized answer)", await timed_async(empty, rounds))
    stage("worker round trip with the drawing", await timed_async(drawn, rounds))
    stop_workers()


async def upload_stages(png: bytes, stored: bytes, repeats: int) -> None:
    """Print a reply's POST to a stand-in-like server without a picture, with it, and stored.

    ``stored`` is the same picture with no compression (PNG level 0), to weigh its faster
    encoding against its larger upload.
    """

    async def callback(request: web.Request) -> web.Response:
        request[RECORD_KEY] = SimpleNamespace()  # type: ignore[misc]
        await read_payload(request)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/callback", callback)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/callback"
    embed = discord.Embed(title="Runde 12", description="Ingrid ♠K mot Bjørn ♥9")

    def form(file: bytes | None) -> aiohttp.FormData | None:
        if file is None:
            return None
        picture = discord.File(io.BytesIO(file), filename="round.png")
        params = handle_message_parameters(embed=embed, file=picture)
        data = aiohttp.FormData(quote_fields=False)
        for part in params.multipart or ():
            data.add_field(**part)
        return data

    async with aiohttp.ClientSession() as http:

        async def post(file: bytes | None) -> None:
            data = form(file)
            if data is None:
                payload = handle_message_parameters(embed=embed).payload
                async with http.post(url, json=payload) as answer:
                    await answer.read()
            else:
                async with http.post(url, data=data) as answer:
                    await answer.read()

        kinds: list[bytes | None] = [png, None, stored]
        for kind in kinds * 20:
            await post(kind)
        times: dict[bytes | None, list[float]] = {kind: [] for kind in kinds}
        for kind in kinds * repeats:  # in turn, so the machine's moods hit each alike
            started = time.perf_counter()
            await post(kind)
            times[kind].append(time.perf_counter() - started)
        stage("multipart form building (discord.py, aiohttp)", timed(form, [png] * repeats))
        stage("reply POST without a picture", times[None])
        stage(f"reply POST with the picture ({len(png) / 1024:.0f} KiB)", times[png])
        stage(f"reply POST with it uncompressed ({len(stored) / 1024:.0f} KiB)", times[stored])
    await runner.cleanup()


def encode_settings(images: Sequence[Image.Image]) -> None:
    """Print the encoders' time and size for the settings worth trying, on the same tables."""
    palette = table._palette()
    mapped = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    # compress_type: -1 zlib's default strategy, 2 Huffman only, 3 RLE, 4 fixed codes.
    settings: list[tuple[str, dict[str, Any]]] = [
        (
            f"PNG level {level}, strategy {strategy}",
            {"compress_level": level, "compress_type": strategy},
        )
        for level, strategy in ((0, -1), (1, -1), (1, 2), (1, 3), (1, 4), (2, -1), (3, -1), (6, -1))
    ]
    settings.append(("WebP lossless, method 0", {"format": "WEBP", "lossless": True, "method": 0}))
    for label, options in settings:
        sizes: list[int] = []

        def save(image: Image.Image, options: dict[str, Any] = options) -> None:
            out = io.BytesIO()
            image.save(out, **{"format": "PNG"} | options)
            sizes.append(out.tell())  # noqa: B023 (this setting's list, read just below)

        times = timed(save, mapped)
        stage(f"{label} ({statistics.median(sizes) / 1024:.0f} KiB)", times)


async def run(args: argparse.Namespace) -> None:
    rounds = rounds_of(WARM_UP + args.rounds)
    warm, measured = rounds[:WARM_UP], rounds[WARM_UP:]
    for played in warm:
        render(played)
    images = [draw(played) for played in measured]
    pngs = [render(played) for played in measured]
    png_size = int(statistics.median(len(png) for png in pngs))
    call = [functools.partial(render, played) for played in measured]
    print(f"a round's picture, 2 players, {len(measured)} rounds: median and 10th-90th percentile")
    print("in the worker:")
    stage("drawing (layout, pastes, text)", timed(draw, measured))
    stage("encoding (palette mapping and PNG)", timed(table._encode, images))
    stage("render_round (both)", timed(render, measured))
    print("between the bot and the worker:")
    stage("pickling the call there and back", timed(lambda c: pickle.loads(pickle.dumps(c)), call))
    stage("pickling the PNG there and back", timed(lambda p: pickle.loads(pickle.dumps(p)), pngs))
    await worker_stages(measured, png_size, args.processes)
    print("the upload:")
    middle = len(pngs) // 2
    stored = io.BytesIO()
    images[middle].quantize(palette=table._palette(), dither=Image.Dither.NONE).save(
        stored, "PNG", compress_level=0
    )
    await upload_stages(pngs[middle], stored.getvalue(), args.rounds)
    print("PNG settings (on the same drawn tables):")
    encode_settings(images)


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.pictures", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rounds", type=int, default=300, help="rounds measured in each stage")
    parser.add_argument("--processes", type=int, default=1, help="drawing workers")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
