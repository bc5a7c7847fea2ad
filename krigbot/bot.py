"""The Discord client: loads the Krig cog, restores running games, answers every error."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from datetime import timedelta
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands
from discord.utils import MISSING

from krigbot.cogs.autoplay import AutoplayCog
from krigbot.cogs.buttons import Buttons
from krigbot.cogs.checks import malformed_command, pressed_id, unhandled_press
from krigbot.cogs.group import KrigGroup, is_subcommand
from krigbot.cogs.history import HistoryCog
from krigbot.cogs.krig import KrigCog
from krigbot.cogs.matches import MatchCog
from krigbot.cogs.pictures import Pictures
from krigbot.cogs.replies import NO_MENTIONS, answer_error, refuse
from krigbot.cogs.steal import StealCog
from krigbot.cogs.surfaces import hidden_here, own_token
from krigbot.cogs.tables import Tables
from krigbot.cogs.timelimit import TimeLimitCog
from krigbot.config import Settings
from krigbot.i18n import lang_for, t
from krigbot.i18n.translator import Translator
from krigbot.monitoring import Metrics
from krigbot.monitoring.metrics import GatewayState, discord_trace
from krigbot.render.worker import warm_up_workers
from krigbot.sessions import GameService, Seeds, random_seed
from krigbot.sessions.matches import MatchKeeper
from krigbot.storage import Storage, StorageError
from krigbot.web.access import WebAccess

log = logging.getLogger(__name__)

VOICE_WARNINGS = frozenset(
    {
        "PyNaCl is not installed, voice will NOT be supported",
        "davey is not installed, voice will NOT be supported",
    }
)
"""What discord.py warns about at every start when its voice extras are missing: Krigbot has no
voice, and to a newcomer these read like errors in the set-up."""
RECONNECT = "Attempting a reconnect in %.2fs"
"""discord.py's log line, with a traceback, for each attempt to reach a lost gateway again."""


class DiscordLogFilter(logging.Filter):
    """Drop discord.py's voice warnings and shorten its reconnect attempts to one line each.

    A filter on discord.py's own client logger, matching those messages exactly: every other
    record, warnings included, passes as it was.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg in VOICE_WARNINGS:
            return False
        if record.msg == RECONNECT and record.exc_info:
            error = record.exc_info[1]
            cause = (str(error) or type(error).__name__) if error else "?"
            record.msg = "lost the connection to Discord (%s); trying again in %.1f s"
            record.args = (cause, *(record.args or (0.0,)))
            record.exc_info = None
            record.exc_text = None
            # A retry after a dropped connection is expected weather, not an error of ours.
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_FILTER = DiscordLogFilter()


def quiet_discord_logs() -> None:
    """Put the filter on discord.py's client logger (once; records there are the client's)."""
    logging.getLogger("discord.client").addFilter(_FILTER)  # a second add is a no-op


class KrigTree(app_commands.CommandTree[Any]):
    """The command tree: refuses what no one would see and turns every error into one short line.

    It holds the one /krig group: a cog's command declared with ``subcommand`` goes into it.
    """

    def __init__(self, client: discord.Client, **options: Any) -> None:
        super().__init__(client, **options)
        self.krig = KrigGroup()
        super().add_command(self.krig)

    def add_command(
        self,
        command: app_commands.Command[Any, ..., Any]
        | app_commands.ContextMenu
        | app_commands.Group,
        /,
        *,
        guild: discord.abc.Snowflake | None = MISSING,
        guilds: Sequence[discord.abc.Snowflake] = MISSING,
        override: bool = False,
    ) -> None:
        """Add a command to the tree, or to /krig if it is one of its subcommands."""
        if is_subcommand(command):
            assert isinstance(command, app_commands.Command)
            self.krig.add_command(command, override=override)
            return
        super().add_command(command, guild=guild, guilds=guilds, override=override)

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        if hidden_here(interaction):
            await refuse(interaction, "here.hidden")
            return False
        if interaction.type is discord.InteractionType.application_command:
            problem = malformed_command(self, interaction)
            if problem is not None:
                log.warning("refused a command not as declared: %s", problem)
                await refuse(interaction, "err.bad_input")
                return False
        return True

    async def on_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        await answer_error(interaction, error)


class KrigBot(commands.Bot):
    """Krigbot: slash commands only, no privileged intents."""

    def __init__(
        self, settings: Settings, storage: Storage, *, seeds: Seeds = random_seed, **options: Any
    ) -> None:
        quiet_discord_logs()  # before discord.py's own __init__, which warns about voice
        self.metrics = Metrics()
        """What the bot counts; served by the monitoring endpoint when it is on."""
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents(guilds=True),
            allowed_mentions=NO_MENTIONS,
            tree_cls=KrigTree,
            help_command=None,
            http_trace=discord_trace(self.metrics),
            **options,
        )
        self.settings = settings
        self.storage = storage
        storage.on_write = self._observe_write
        self._gateway: GatewayState | None = None
        self.service = GameService(
            storage,
            idle_after=timedelta(hours=settings.idle_hours),
            challenge_ttl=timedelta(seconds=settings.challenge_seconds),
            choice_ttl=timedelta(seconds=settings.choice_seconds),
            seeds=seeds,
            metrics=self.metrics,
        )
        self.matches = MatchKeeper(self.service)
        self.tables = Tables()
        """Every channel's turn and live message, for every cog that shows a game."""
        self.buttons = Buttons()
        """The handlers of the bot's buttons, which each cog registers for its own."""
        self.pictures = Pictures(storage, processes=settings.render_processes, metrics=self.metrics)
        self.metrics.watch_running_games(self.service.running_count)
        self.web = WebAccess(
            storage,
            secret=settings.web_secret,
            base_url=settings.web_url if settings.web_port is not None else None,
        )
        if settings.render_processes:
            warm_up_workers(settings.render_processes)
        self._background: set[asyncio.Task[None]] = set()

    async def setup_hook(self) -> None:
        # Logged in by now: the bot's own user is known, and a player may challenge it.
        self.service.krigbot_id = self.user.id if self.user is not None else None
        await self.tree.set_translator(Translator())
        await self.pictures.start()
        service, storage, tables, web, buttons = (
            self.service,
            self.storage,
            self.tables,
            self.web,
            self.buttons,
        )
        steal = StealCog(self, service=service, tables=tables, web=web, buttons=buttons)
        cog = KrigCog(
            self,
            service=service,
            storage=storage,
            pictures=self.pictures,
            tables=tables,
            web=web,
            buttons=buttons,
            battles=steal,
        )
        await self.add_cog(cog)
        await self.add_cog(steal)
        autoplay = AutoplayCog(
            self,
            service=service,
            tables=tables,
            web=web,
            pictures=self.pictures,
            buttons=buttons,
            interval=self.settings.autoplay_seconds,
        )
        await self.add_cog(autoplay)
        await self.add_cog(HistoryCog(storage=storage, web=web, buttons=buttons))
        matches = MatchCog(
            self,
            service=service,
            tables=tables,
            buttons=buttons,
        )
        await self.add_cog(matches)
        time_limits = TimeLimitCog(self, service=service, tables=tables, web=web)
        await self.add_cog(time_limits)
        self.add_dynamic_items(*buttons.kinds())
        challenges, broken = await self.service.restore()
        recovered = await self.matches.recover()
        if recovered:
            self._spawn(matches.announce(recovered), "announce-matches")
        autoplay.restore()
        for row in broken:
            if not own_token(row.extra):
                continue  # nothing but an interaction reaches its chat: the next press tells
            lang = lang_for(row.extra.get("lang"))
            self._spawn(self._tell_unreadable(row.channel_id, lang), f"tell-unreadable-{row.id}")
        self._spawn(self._check_saved_games(), "check-saved-games")
        if self.settings.dev_guild is not None:
            guild = discord.Object(self.settings.dev_guild)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()
        log.info(
            "restored %d open challenges; %d unreadable games ended", len(challenges), len(broken)
        )

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run start-up work in the background, holding it until it ends (the loop would not)."""
        task = asyncio.create_task(work, name=f"krig-{name}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _check_saved_games(self) -> None:
        # The games restore() did not read: checked once connected, when start-up work is done.
        await self.wait_until_ready()
        try:
            broken = await self.service.find_unreadable()
        except StorageError as exc:
            log.warning("could not check the saved games: %s", exc)
            return
        for row in broken:
            if own_token(row.extra):
                await self._tell_unreadable(row.channel_id, lang_for(row.extra.get("lang")))

    async def _tell_unreadable(self, channel_id: int, lang: Any) -> None:
        channel = self.get_partial_messageable(channel_id)
        try:
            await channel.send(t(lang, "err.unreadable"), allowed_mentions=NO_MENTIONS)
        except discord.HTTPException as exc:
            log.warning("could not tell channel %s about an unreadable game: %s", channel_id, exc)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        if interaction.type is discord.InteractionType.component and unhandled_press(
            interaction, self.buttons.kinds()
        ):
            custom_id = str(pressed_id(interaction))
            log.warning("refused a button that is not on its message: %r", custom_id[:100])
            await refuse(interaction, "err.stale_button")

    async def close(self) -> None:
        # discord.py does not stop the task that, after READY, waits guild_ready_timeout (2 s)
        # for the servers: a bot closed (or its connection lost) meanwhile has it dispatch
        # on_ready into the closed client, and print a traceback on the way out.
        waiting = self._connection._ready_task
        if waiting is not None:
            waiting.cancel()
        # No deadline's handler may reach into a closed client.
        await self.service.deadlines.close()
        await super().close()

    def _observe_write(self, seconds: float, together: int) -> None:
        self.metrics.commit_seconds.observe(seconds)
        self.metrics.batch_size.observe(together)

    def gateway_problem(self) -> str | None:
        """Return None when connected to Discord, or one line saying why the bot is not."""
        if self._gateway == "connected" and not self.is_closed():
            return None
        if self._gateway is None:
            return "not connected to Discord yet"
        return f"the connection to Discord is {self._gateway}"

    def _gateway_is(self, state: GatewayState) -> None:
        shard = self.shard_id or 0
        if state != self._gateway:
            log.info("shard %d: %s", shard, state, extra={"shard_id": shard})
        self._gateway = state
        self.metrics.gateway_state(shard, state)

    async def on_ready(self) -> None:
        log.info("connected as %s to %d servers", self.user, len(self.guilds))
        self._gateway_is("connected")

    async def on_resumed(self) -> None:
        self._gateway_is("connected")

    async def on_disconnect(self) -> None:
        # discord.py reconnects by itself (resuming the session where it can) unless closing.
        self._gateway_is("disconnected" if self.is_closed() else "resuming")

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        log.exception("error in %s", event_method)
