"""A tournament's round opened through Discord: ``python -m bench.tournament [--players 64]``.

Runs the bot in this process against the Discord stand-in of ``tests/standin`` on loopback,
signs ``--players`` people up to a knockout, starts it, and prints how long the bot took to open
the first round (a thread per match, its two players added, its game dealt and its table posted)
and the requests it sent for it, by route. The stand-in answers at once and limits no route, so
the time is the bot's own work; on Discord each route's bucket paces it further (discord.py waits
out a 429 by itself). Nothing here asserts; it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

from krigbot.bot import KrigBot
from krigbot.storage import Storage
from tests.standin import Channel, DiscordStandIn, User, run_bot
from tests.support.settings import make_settings

_ID = re.compile(r"\d{6,}|standin-[\w-]+")


async def measure(players: int) -> None:
    """Open a knockout's first round of ``players`` and print the figures."""
    async with DiscordStandIn(check_bodies=False) as standin:
        moderator = standin.add_user("moderator", "Mona Mod", locale="nb")
        guild = standin.add_guild("Bench", locale="nb")
        role = standin.add_role(guild, "Moderator", ["manage_messages"])
        standin.add_member(guild, moderator, roles=[role])
        channel = standin.add_channel(guild, "cup")
        people = [standin.add_user(f"p{n}", f"Player {n}", locale="nb") for n in range(players)]
        for person in people:
            standin.add_member(guild, person)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "krig.db"
            async with await Storage.open(path) as storage:
                bot = KrigBot(make_settings(path), storage, guild_ready_timeout=0.05)
                async with run_bot(bot, standin):
                    await round_one(standin, bot, channel, moderator, people, players)


async def round_one(
    standin: DiscordStandIn,
    bot: KrigBot,
    channel: Channel,
    moderator: User,
    people: list[User],
    players: int,
) -> None:
    """Create, sign up, start, and time the round's opening."""
    made = await standin.slash(
        "krig tournament create",
        user=moderator,
        channel=channel,
        options={"name": "Bench", "signup_minutes": 0},
    )
    answer = await made.response(timeout=10)
    assert answer.message is not None
    tournament_id = int(next(iter(answer.message.custom_ids())).split(":")[2])
    for person in people:
        pressed = await standin.click(
            answer.message,
            f"krig:tjoin:{tournament_id}",
            user=person,
        )
        await pressed.response(timeout=10)
    matches = players // 2  # a power of two: no byes
    before = len(standin.requests.items)
    started = time.perf_counter()
    await standin.slash(
        "krig tournament start",
        user=moderator,
        channel=channel,
    )
    while True:
        tables = sum(
            1
            for thread in standin.threads(channel)
            if any("krig:flip:" in c for m in thread.messages for c in m.custom_ids())
        )
        if tables >= matches:
            break
        await asyncio.sleep(0.01)
    seconds = time.perf_counter() - started
    routes = Counter(
        f"{r.method} {_ID.sub('{id}', r.path.split('/api/v10', 1)[-1])}"
        for r in standin.requests.items[before:]
    )
    print(f"players {players}, matches {matches}: round opened in {seconds:.2f} s")
    print(f"requests: {sum(routes.values())} ({sum(routes.values()) / matches:.1f} a match)")
    for route, count in routes.most_common():
        print(f"  {count:4d}  {route}")
    stored = await bot.storage.tournaments.get(tournament_id)
    assert stored is not None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tournament", description=__doc__)
    parser.add_argument("--players", type=int, default=64, help="a power of two, 2 to 64")
    args = parser.parse_args()
    asyncio.run(measure(args.players))


if __name__ == "__main__":
    main()
