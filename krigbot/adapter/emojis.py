"""The cards as the application's own emojis on Discord: uploaded by one process, read by all.

Discord gives every application up to 2,000 emojis of its own, usable in any server, DM or group
DM. The process running shard 0 makes the application's card emojis those of the art drawn
now (``render.emoji``): it uploads the ones missing, one at a time, and removes the card emojis
of other versions of the art; it leaves every other emoji of the application alone. A restart
with the same art finds them all and uploads nothing. Any other process only reads the list,
and while cards are missing from it (the first process may still be uploading them) reads it
again, less and less often. A card whose emoji is missing (not uploaded yet, refused, no room)
is shown as its label.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

import discord

from krigbot.render.emoji import CardFaces, emoji_name, emoji_set, is_ours, version_of

log = logging.getLogger(__name__)

MAX_EMOJIS: Final = 2000
"""How many emojis Discord lets an application own."""
NO_ROOM: Final = 30056
"""Discord's error code for an emoji past the application's 2,000."""
REREAD_SECONDS: Final = (15.0, 600.0)
"""A process that only reads the emojis and misses some reads the list again after the first
figure, then twice as long each time, up to the second."""


@dataclass(frozen=True, slots=True)
class EmojiSync:
    """What one sync did: emojis uploaded, found already there, removed, and not uploaded."""

    uploaded: int
    kept: int
    removed: int
    missing: int


async def sync_card_emojis(
    client: discord.Client,
    faces: CardFaces,
    *,
    upload: bool,
    art: tuple[str, Mapping[int | None, bytes]] | None = None,
) -> EmojiSync:
    """Make the application's card emojis those of ``art`` (the drawn set by default), if
    ``upload``; then show in ``faces`` those the application has. HTTPException if the list
    cannot be read."""
    version, images = art if art is not None else await asyncio.to_thread(emoji_set)
    existing = await client.fetch_application_emojis()
    wanted = {emoji_name(version, card): card for card in images}
    held = {e.name: e for e in existing if e.name in wanted}
    stale = [e for e in existing if is_ours(e.name) and version_of(e.name) != version]
    uploaded = removed = 0

    def show() -> None:
        faces.use(version, {wanted[name]: emoji.id for name, emoji in held.items()})

    show()
    if upload:
        room = MAX_EMOJIS - len(existing)
        # New ones first, so the emojis other processes show stay until their successors are
        # there; the stale ones then make room for any that did not fit.
        uploaded += await _upload(client, wanted, images, held, room, show)
        for emoji in stale:
            try:
                await emoji.delete()
            except discord.HTTPException as exc:
                log.warning("could not remove the card emoji %s: %s", emoji.name, exc)
            else:
                removed += 1
        uploaded += await _upload(client, wanted, images, held, removed, show)
    return EmojiSync(uploaded, len(held) - uploaded, removed, len(wanted) - len(held))


async def read_until_whole(client: discord.Client, faces: CardFaces, missing: int) -> None:
    """Read the application's card emojis again, less and less often, until none is missing;
    a read that fails is tried again at the next turn."""
    pause, most = REREAD_SECONDS
    while missing:
        await asyncio.sleep(pause)
        pause = min(2 * pause, most)
        try:
            missing = (await sync_card_emojis(client, faces, upload=False)).missing
        except discord.HTTPException as exc:
            log.warning("could not read the application's emojis again: %s", exc)


async def _upload(
    client: discord.Client,
    wanted: Mapping[str, int | None],
    images: Mapping[int | None, bytes],
    held: dict[str, discord.Emoji],
    room: int,
    show: Callable[[], None],
) -> int:
    """Upload the emojis not held yet, one at a time, at most ``room``, showing each as it
    comes; return how many."""
    done = 0
    for name, card in wanted.items():
        if done >= room:
            break
        if name in held:
            continue
        try:
            held[name] = await client.create_application_emoji(name=name, image=images[card])
        except discord.HTTPException as exc:
            log.warning("could not upload the card emoji %s: %s", name, exc)
            if exc.code == NO_ROOM:
                break  # the application is full: the next ones would be refused too
            continue
        done += 1
        show()
    return done
