"""Who may see a server's pages: the moderators' switch, and links signed so none can be guessed.

A server's pages exist only while a moderator has turned the web view on (``/krig settings
web:on``). Every address carries an HMAC-SHA256 signature made with the bot's
``KRIG_WEB_SECRET`` over the server, a random key of the server's own and what the page shows,
so an address cannot be made up or changed: a wrong signature is a page that does not exist.
Rotating draws a new server key, which turns every address handed out before into a dead one.
Players are addressed by a signature of their id, never by the id itself.

>>> access = WebAccess(None, secret="s" * 16, base_url="https://krig.example")
>>> token = access.sign(7, "key", "game", 42)
>>> len(token), access.check(7, "key", "game", 42, token), access.check(7, "key", "game", 43, token)
(22, True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from krigbot.storage import Storage

SETTING: Final = "web"
"""The guild setting that turns the pages on ("on"; anything else or nothing: off)."""
KEY_SETTING: Final = "web_key"
"""The guild setting holding the server's own key; a new one retires every earlier link."""
NAME_SETTING: Final = "web_name"
"""The guild setting holding the server's name as the bot last saw it, for its pages' titles
(a chat has none). Stored, since the bot process serving a page need not hold its server."""
SIGNATURE_BYTES: Final = 16
"""128 bits of each HMAC: far past guessing, and short enough for a tidy address."""
PERIODS: Final = ("all", "month", "week")
MAX_ID: Final = 2**63 - 1
"""The largest id an address may name: what a 64-bit signed column holds, as every Discord
snowflake does. A larger one would overflow the database's integer, not merely miss."""
SIGNATURE_CHARS: Final = -(-SIGNATURE_BYTES * 4 // 3)
"""The length of a signature in unpadded base64: 22."""
_SEGMENT: Final = re.compile(
    rf"(?P<id>[1-9][0-9]{{0,18}})\.(?P<signature>[A-Za-z0-9_-]{{{SIGNATURE_CHARS}}})"
)
"""An id in ASCII digits (``str.isdigit`` takes ``٣``, ``３`` and ``¹`` too) and a signature in
the URL-safe base64 ``sign`` writes: anything else is no address, before it costs a look-up."""

Kind = Literal["site", "game", "player", "tournament", "activity"]
"""What a signature is of: ``activity`` signs a game's live stream for the Activity, with its
expiry in place of the server's key."""


@dataclass(frozen=True, slots=True)
class Site:
    """A server whose pages are on, with the key its links are signed with now."""

    guild_id: int
    key: str
    token: str
    """The address segment naming the server: its id and the signature of it."""
    name: str | None = None
    """The server's name as the bot last saw it; None where it knows none (a chat)."""


class WebAccess:
    """Remember each server's choice and key, and sign and check the addresses of its pages."""

    def __init__(self, storage: Storage, *, secret: str | None, base_url: str | None) -> None:
        self.storage = storage
        self._secret = (secret or "").encode()
        self.base_url = base_url if secret else None
        """Where the pages are served, for links in Discord (None: the bot posts no links)."""
        self._sites: dict[int, Site | None] = {}

    # ------------------------------------------------------------------ signatures

    def sign(self, guild_id: int, key: str, kind: Kind, subject: int) -> str:
        """Return the signature of one page's subject (a server, game or player id)."""
        message = f"krig-web:{kind}:{guild_id}:{key}:{subject}".encode()
        digest = hmac.new(self._secret, message, hashlib.sha256).digest()[:SIGNATURE_BYTES]
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def check(self, guild_id: int, key: str, kind: Kind, subject: int, signature: str) -> bool:
        """Tell whether a signature is the one ``sign`` makes (in constant time)."""
        return _same(self.sign(guild_id, key, kind, subject), signature)

    # ------------------------------------------------------------------ the switch

    async def site(self, guild_id: int, *, remember: bool = True) -> Site | None:
        """Return the server's pages if a moderator turned them on, else None.

        ``remember=False`` keeps a server without settings out of the cache: the ids in
        addresses are anyone's to make up, and must not fill the memory (each costs one read).
        """
        if guild_id in self._sites:
            return self._sites[guild_id]
        settings = await self.storage.settings.get_settings(guild_id)
        key = settings.get(KEY_SETTING)
        on = settings.get(SETTING) == "on" and bool(self._secret)
        site = (
            self._site(guild_id, key, settings.get(NAME_SETTING))
            if on and key is not None
            else None
        )
        if remember or settings:
            self._sites[guild_id] = site
        return site

    def _site(self, guild_id: int, key: str, name: str | None = None) -> Site:
        token = f"{guild_id}.{self.sign(guild_id, key, 'site', guild_id)}"
        return Site(guild_id, key, token, name)

    async def is_on(self, guild_id: int) -> bool:
        """Tell whether a moderator turned the server's pages on (whatever the bot's set-up)."""
        return await self.storage.settings.get_setting(guild_id, SETTING) == "on"

    async def set_on(self, guild_id: int, on: bool, *, name: str | None = None) -> None:
        """Turn the server's pages on or off; turning them on again brings the same links back.

        ``name`` is the server's name, for its pages' titles.
        """
        if name is not None:
            await self.storage.settings.set_setting(guild_id, NAME_SETTING, name)
        if on and await self.storage.settings.get_setting(guild_id, KEY_SETTING) is None:
            await self.storage.settings.set_setting(
                guild_id, KEY_SETTING, secrets.token_urlsafe(18)
            )
        await self.storage.settings.set_setting(guild_id, SETTING, "on" if on else "off")
        self._sites.pop(guild_id, None)

    async def rename(self, guild_id: int, name: str) -> None:
        """Keep a server's new name for its pages, where it has turned them on."""
        if await self.is_on(guild_id):
            await self.storage.settings.set_setting(guild_id, NAME_SETTING, name)
            self._sites.pop(guild_id, None)

    async def rotate(self, guild_id: int) -> None:
        """Give the server a new key: every link made before leads nowhere from now on."""
        await self.storage.settings.set_setting(guild_id, KEY_SETTING, secrets.token_urlsafe(18))
        self._sites.pop(guild_id, None)

    # ------------------------------------------------------------------ addresses

    async def open_site(self, token: str) -> Site | None:
        """Return the server an address segment names, if it is signed and its pages are on."""
        parts = self.split(token)
        if parts is None:
            return None
        site = await self.site(parts[0], remember=False)
        if site is None or not _same(site.token, token):
            return None
        return site

    @staticmethod
    def split(segment: str) -> tuple[int, str] | None:
        """Split a ``{id}.{signature}`` address segment; None when it is not one.

        >>> signature = "A" * SIGNATURE_CHARS
        >>> WebAccess.split(f"12.{signature}") == (12, signature)
        True
        >>> [WebAccess.split(f"{n}.{signature}") for n in ("١٢", "１２", "¹", "012", MAX_ID + 1)]
        [None, None, None, None, None]
        >>> WebAccess.split(f"12.{'é' * SIGNATURE_CHARS}"), WebAccess.split("12.abc")
        (None, None)
        """
        found = _SEGMENT.fullmatch(segment)
        if found is None:
            return None
        number = int(found["id"])
        if number > MAX_ID:
            return None
        return number, found["signature"]

    def game_path(self, site: Site, game_id: int) -> str:
        """Return the address of a game's page (its replay), below the base address."""
        return (
            f"/s/{site.token}/game/{game_id}.{self.sign(site.guild_id, site.key, 'game', game_id)}"
        )

    def tournament_path(self, site: Site, tournament_id: int) -> str:
        """Return the address of a tournament's page (its bracket or standings)."""
        signature = self.sign(site.guild_id, site.key, "tournament", tournament_id)
        return f"/s/{site.token}/tournament/{tournament_id}.{signature}"

    def player_path(self, site: Site, user_id: int) -> str:
        """Return the address of a player's page; it names the player by a signature only."""
        return f"/s/{site.token}/player/{self.sign(site.guild_id, site.key, 'player', user_id)}"

    @staticmethod
    def leaderboard_path(site: Site, period: str = "all") -> str:
        """Return the address of the server's leaderboard for a period."""
        return f"/s/{site.token}/" + ("" if period == "all" else f"?period={period}")

    # ------------------------------------------------------------------ links for Discord

    async def game_url(self, guild_id: int, game_id: int) -> str | None:
        """Return the full link to a game's page, or None where the server has no pages."""
        return await self._url(guild_id, lambda site: self.game_path(site, game_id))

    async def tournament_url(self, guild_id: int, tournament_id: int) -> str | None:
        """Return the full link to a tournament's page, or None where the server has no pages."""
        return await self._url(guild_id, lambda site: self.tournament_path(site, tournament_id))

    async def leaderboard_url(self, guild_id: int, period: str = "all") -> str | None:
        """Return the full link to the server's leaderboard, or None where it has no pages."""
        return await self._url(guild_id, lambda site: self.leaderboard_path(site, period))

    async def _url(self, guild_id: int, path: Callable[[Site], str]) -> str | None:
        """Return the base address and ``path`` of the server's site, or None where it has none."""
        if self.base_url is None:
            return None
        site = await self.site(guild_id)
        if site is None:
            return None
        return self.base_url + path(site)


def _same(expected: str, given: str) -> bool:
    """Compare in constant time as bytes: ``hmac.compare_digest`` refuses a non-ASCII str."""
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "surrogatepass"))
