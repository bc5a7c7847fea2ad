"""The Discord client: loads the cogs, restores running games, answers every error."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from datetime import timedelta
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands
from discord.utils import MISSING

from krigbot.adapter.activity import ActivityDesk
from krigbot.adapter.buttons import Buttons
from krigbot.adapter.checks import malformed_command, pressed_id, unhandled_press
from krigbot.adapter.emojis import read_until_whole, sync_card_emojis
from krigbot.adapter.group import KrigGroup, is_subcommand
from krigbot.adapter.identify import IdentifyPacer
from krigbot.adapter.leases import Change, ShardLeases, listed
from krigbot.adapter.parts import Parts
from krigbot.adapter.pictures import Pictures
from krigbot.adapter.replies import NO_MENTIONS, answer_error, recall_lang, refuse
from krigbot.adapter.surfaces import hidden_here, own_token
from krigbot.adapter.tables import Tables
from krigbot.cogs.autoplay import AutoplayCog
from krigbot.cogs.boards import BoardsCog
from krigbot.cogs.challenge import ChallengeCog
from krigbot.cogs.history import HistoryCog
from krigbot.cogs.leave import LeaveCog
from krigbot.cogs.matches import MatchCog
from krigbot.cogs.play import PlayCog
from krigbot.cogs.steal import StealCog
from krigbot.cogs.table import TableCog
from krigbot.cogs.timelimit import TimeLimitCog
from krigbot.cogs.tournament import TournamentCog
from krigbot.config import GLOBAL_REST_LIMIT, MEMORY, Settings, Shards
from krigbot.i18n import lang_for, t
from krigbot.i18n.translator import Translator
from krigbot.load import Load
from krigbot.monitoring import Metrics
from krigbot.monitoring.metrics import GatewayState, count_rest
from krigbot.render.emoji import CardFaces
from krigbot.render.worker import warm_up_workers
from krigbot.sessions import GameService, Seeds, random_seed
from krigbot.sessions.live import LiveHub, across_processes
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
SHARD_RECONNECT = "Attempting a reconnect for shard ID %s in %.2fs"
"""The same line from a shard of an ``AutoShardedBot`` (its arguments: the shard, the pause)."""
SHARD_CLOSE_SECONDS = 2.0
"""The longest the close of a shard (given up, or all of them at a stop) may wait for Discord's side
of the handshake."""


ANSWER_SECONDS_AT_CLOSE = 3.0
"""The longest a close waits for the interactions already received to be answered (their shards
closed first, so no more come): a SIGTERM in the middle of a flip answers that flip. Well inside
a lease's last renewal (10 s), so the answers' writes still hold their shards."""
ANSWERING_TASKS = ("CommandTree-invoker", "discord-ui-dynamic-item-", "discord.py: on_interaction")
"""The names discord.py gives the tasks that handle an interaction: a slash command, a button of
ours (a dynamic item), and the ``on_interaction`` event."""


def answering() -> set[asyncio.Task[Any]]:
    """Return the tasks handling an interaction now (looked at once, at a close)."""
    return {
        task
        for task in asyncio.all_tasks()
        if task.get_name().startswith(ANSWERING_TASKS) and not task.done()
    }


class DiscordLogFilter(logging.Filter):
    """Drop discord.py's voice warnings and shorten its reconnect attempts to one line each.

    A filter on discord.py's own client logger, matching those messages exactly: every other
    record, warnings included, passes as it was.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg in VOICE_WARNINGS:
            return False
        if record.msg in (RECONNECT, SHARD_RECONNECT) and record.exc_info:
            error = record.exc_info[1]
            cause = (str(error) or type(error).__name__) if error else "?"
            args = tuple(record.args or ()) if isinstance(record.args, tuple) else ()
            if record.msg == SHARD_RECONNECT:
                shard, *pause = args or (0, 0.0)
                record.msg = "shard %s lost the connection to Discord (%s); trying again in %.1f s"
                record.args = (shard, cause, *(pause or [0.0]))
            else:
                record.msg = "lost the connection to Discord (%s); trying again in %.1f s"
                record.args = (cause, *(args or (0.0,)))
            record.exc_info = None
            record.exc_text = None
            # A retry after a dropped connection is expected weather, not an error of ours.
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_FILTER = DiscordLogFilter()


async def finish_or_warn(work: Coroutine[Any, Any, None], name: str) -> None:
    """Run start-up work; the database out of reach ends it with one warning (a process that
    starts or takes shards over while PostgreSQL is away), not an error nobody retrieves."""
    try:
        await work
    except StorageError as exc:
        log.warning("could not finish %s: %s", name, exc)


def quiet_discord_logs() -> None:
    """Put the filter on discord.py's client and shard loggers (a second add is a no-op)."""
    logging.getLogger("discord.client").addFilter(_FILTER)
    logging.getLogger("discord.shard").addFilter(_FILTER)


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
            assert isinstance(command, app_commands.Command | app_commands.Group)
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
        await recall_lang(interaction)
        return True

    async def on_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        await answer_error(interaction, error)


class KrigBot(commands.AutoShardedBot):
    """Krigbot: slash commands only, no privileged intents, the shards of its settings."""

    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        *,
        seeds: Seeds = random_seed,
        metrics: Metrics | None = None,
        web: WebAccess | None = None,
        live: LiveHub | None = None,
        activity_desk: ActivityDesk | None = None,
        **options: Any,
    ) -> None:
        """``metrics``, ``web``, ``live`` and ``activity_desk``: those of an earlier bot of this
        process, whose start failed (the monitoring endpoint and the web view serve them); new
        ones without."""
        quiet_discord_logs()  # before discord.py's own __init__, which warns about voice
        shard_ids = None if settings.shards.ids is None else list(settings.shards.ids)
        self.metrics = Metrics() if metrics is None else metrics
        """What the bot counts; served by the monitoring endpoint when it is on."""
        self.load = Load()
        """How busy its event loop is: what makes a command defer before its work starts."""
        self.metrics.watch_event_loop(self.load.lag)
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents(guilds=True),
            allowed_mentions=NO_MENTIONS,
            tree_cls=KrigTree,
            help_command=None,
            shard_count=settings.shards.count,
            # None (every shard) is discord.py's own default, which its type hint leaves out.
            shard_ids=shard_ids,  # type: ignore[arg-type]
            **options,
        )
        self.settings = settings
        self.identifies = IdentifyPacer(
            None if str(settings.db_path) == MEMORY else settings.db_path.parent,
            settings.identify_seconds,
            storage,
        )
        """Whose turn it is to identify, shared with the bot's other processes on the database
        (PostgreSQL) or on this machine (SQLite)."""
        self._max_concurrency: int | None = None
        self.storage = storage
        storage.database.on_write = self._observe_write
        self._gateway: dict[int, GatewayState] = {}
        """Each shard's connection, once it has had one."""
        self.service = GameService(
            storage,
            idle_after=timedelta(hours=settings.idle_hours),
            challenge_ttl=timedelta(seconds=settings.challenge_seconds),
            choice_ttl=timedelta(seconds=settings.choice_seconds),
            seeds=seeds,
            metrics=self.metrics,
            shards=settings.shards,
            live=live,
        )
        self.live = self.service.registry.live
        """The live pages' viewers, told of each round this bot commits."""
        self.matches = MatchKeeper(self.service.registry)
        self.tables = Tables()
        """Every channel's turn and live message, for every cog that shows a game."""
        self.buttons = Buttons()
        """The handlers of the bot's buttons, which each cog registers for its own."""
        self.pictures = Pictures(storage, processes=settings.render_processes, metrics=self.metrics)
        self.metrics.watch_running_games(self.service.registry.running_count)
        self.web = web or WebAccess(
            storage,
            secret=settings.web_secret,
            base_url=settings.web_url if settings.web_port is not None else None,
        )
        if settings.render_processes:
            warm_up_workers(settings.render_processes)
        self.faces = CardFaces()
        """The card emojis the tables show: none until they are synced, or with them off."""
        self.activity_desk = ActivityDesk() if activity_desk is None else activity_desk
        """The Activity's questions and moves, which this bot answers from now on."""
        self.activity_desk.serve(self, self.service.registry.owns)
        self.faces_synced = asyncio.Event()
        """Set when the card emojis have been synced (or read), or their sync has failed."""
        self.faces_whole = asyncio.Event()
        """Set when the tables have an emoji for every card."""
        self._rereading: asyncio.Task[None] | None = None
        """A process that does not upload the emojis: reading them until none is missing."""
        self.saved_games_checked = asyncio.Event()
        """Set when the start's look for saved games that cannot be read is over."""
        self._background: set[asyncio.Task[None]] = set()
        self._live_stop: Callable[[], Awaitable[None]] | None = None
        """Stops the live pages' notes between processes (PostgreSQL), once they are on."""
        self._desk_stop: Callable[[], Awaitable[None]] | None = None
        """Stops the Activity's calls between processes (PostgreSQL), once they are on."""
        self.leases: ShardLeases | None = None
        """With ``KRIG_SHARDS=auto``: the leases this process holds its shards by."""
        if settings.shards.auto and settings.shards.count is not None:
            self.leases = ShardLeases(storage, settings.shards.count, self._change_shards)
        self._launching: dict[int, asyncio.Task[None]] = {}
        """Shards taken over and still connecting, each in a task a loss of it cancels."""
        self._autoplay: AutoplayCog | None = None
        self._play: PlayCog | None = None
        self._matches: MatchCog | None = None
        self._tournaments: TournamentCog | None = None

    async def setup_hook(self) -> None:
        # Logged in by now: discord.py has made its HTTP session (and asked who the bot is);
        # every request from here on is counted.
        count_rest(self.http._HTTPClient__session, self.metrics)  # type: ignore[attr-defined]
        # The bot's own user is known, and a player may challenge it.
        self.service.registry.krigbot_id = self.user.id if self.user is not None else None
        if self.user is not None and self._live_stop is None:
            try:
                # The live pages' viewers on every process hear the rounds of every process.
                self._live_stop = await across_processes(self.live, self.storage, self.user.id)
            except StorageError as exc:
                log.warning("live pages follow only this process's rounds: %s", exc)
        several = self.settings.shards.ids is not None  # a listed or claimed part of them
        if self.user is not None and self._desk_stop is None and several:
            try:
                # The Activity, served by any process, answers for the servers of every one.
                self._desk_stop = await self.activity_desk.across_processes(
                    self.storage.notes, self.user.id
                )
            except StorageError as exc:
                log.warning("the Activity answers only for this process's servers: %s", exc)
        if self.leases is not None:
            # Claimed before anything is restored: the games restored are those of these.
            held = await self.leases.first()
            self.service.registry.hold_shards(self.settings.shards.holding(tuple(held)), held)
        self.load.start()
        await self.tree.set_translator(Translator())
        await self.pictures.start()
        service = self.service
        parts = Parts(
            bot=self,
            registry=service.registry,
            time_limits=service.time_limits,
            challenges=service.challenges,
            play=service.play,
            choices=service.choices,
            hands_free=service.hands_free,
            recovery=service.recovery,
            deadlines=service.deadlines,
            tournaments=service.tournaments,
            storage=self.storage,
            pictures=self.pictures,
            tables=self.tables,
            web=self.web,
            buttons=self.buttons,
            faces=self.faces,
            activity=self.activity_desk,
        )
        steal = StealCog(parts)
        autoplay = AutoplayCog(
            parts, interval=self.settings.autoplay_seconds, rest_turn=self.rest_turn
        )
        matches = MatchCog(parts)
        tournaments = TournamentCog(parts, rest_turn=self.rest_turn)
        play = PlayCog(parts, battles=steal)
        self._autoplay, self._play, self._matches = autoplay, play, matches
        self._tournaments = tournaments
        # Added in this order: the commands' listing follows it.
        for cog in (
            ChallengeCog(parts),
            play,
            LeaveCog(parts),
            BoardsCog(parts),
            steal,
            autoplay,
            TableCog(parts, activity=self.settings.activity),
            HistoryCog(parts),
            matches,
            TimeLimitCog(parts),
            tournaments,
        ):
            await self.add_cog(cog)
        self.add_dynamic_items(*self.buttons.kinds())
        challenges, broken = await self.service.recovery.restore()
        recovered = await self.matches.recover()
        if recovered:
            self._spawn(matches.announce(recovered), "announce-matches")
        await autoplay.restore()
        self._spawn(tournaments.restore(), "tournament-restore")
        for row in broken:
            if not own_token(row.extra):
                continue  # nothing but an interaction reaches its chat: the next press tells
            lang = lang_for(row.extra.get("lang"))
            self._spawn(self._tell_unreadable(row.channel_id, lang), f"tell-unreadable-{row.id}")
        self._spawn(self._check_saved_games(), "check-saved-games")
        if self.settings.card_emojis:
            self._spawn(self._sync_card_emojis(), "card-emojis")
        if not self.service.registry.shards.runs_first:
            # One process of the bot syncs (the one with shard 0), not every start of every one.
            log.info("commands not synced: the process running shard 0 syncs them")
        elif self.settings.dev_guild is not None:
            guild = discord.Object(self.settings.dev_guild)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()
        # Worth a line where there was something to restore; the first start has nothing.
        log.log(
            logging.INFO if challenges or broken else logging.DEBUG,
            "restored %d open challenges; %d unreadable games ended",
            len(challenges),
            len(broken),
        )

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run start-up work in the background, holding it until it ends (the loop would not)."""
        task = asyncio.create_task(finish_or_warn(work, name), name=f"krig-{name}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _check_saved_games(self) -> None:
        # The games restore() did not read: checked once connected, when start-up work is done.
        await self.wait_until_ready()
        try:
            broken = await self.service.recovery.find_unreadable()
        except StorageError as exc:
            log.warning("could not check the saved games: %s", exc)
            return
        finally:
            self.saved_games_checked.set()
        for row in broken:
            if own_token(row.extra):
                await self._tell_unreadable(row.channel_id, lang_for(row.extra.get("lang")))

    async def _sync_card_emojis(self) -> None:
        # After ready, in the background: up to 55 uploads, one at a time, delay no answer.
        await self.wait_until_ready()
        upload = self.service.registry.shards.runs_first
        try:
            done = await sync_card_emojis(self, self.faces, upload=upload)
        except discord.HTTPException as exc:
            log.warning("could not read the application's emojis; cards show as text: %s", exc)
        except Exception:
            # Closing cuts the uploads short (its HTTP session goes): nothing to tell then.
            if not self.is_closed():
                log.exception("could not sync the card emojis; cards show as text")
        else:
            log.info(
                "card emojis: %d uploaded, %d kept, %d removed%s",
                done.uploaded,
                done.kept,
                done.removed,
                f", {done.missing} missing (shown as text)" if done.missing else "",
            )
            if done.missing and not upload and not self.is_closed():
                # The process with shard 0 may still be uploading them: read them again.
                self._rereading = asyncio.create_task(self._reread_card_emojis(done.missing))
            elif not done.missing:
                self.faces_whole.set()
        finally:
            self.faces_synced.set()

    async def _reread_card_emojis(self, missing: int) -> None:
        try:
            await read_until_whole(self, self.faces, missing)
        except Exception:
            if not self.is_closed():
                log.exception("could not read the card emojis again; the missing show as text")
            return
        log.info("card emojis: every card has its emoji")
        self.faces_whole.set()

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
        state = self._connection
        for waiting in (state._ready_task, *state._ready_tasks.values()):
            if waiting is not None:
                waiting.cancel()
        if self._rereading is not None:
            self._rereading.cancel()
        if self.leases is not None:
            await self.leases.stop()  # no shard starts while the others close
        for task in self._launching.values():
            task.cancel()
        await self._answer_what_came()
        # No deadline's handler may reach into a closed client.
        await self.service.deadlines.close()
        self.load.stop()
        if self._live_stop is not None:
            stop, self._live_stop = self._live_stop, None
            await stop()
        if self._desk_stop is not None:
            stop, self._desk_stop = self._desk_stop, None
            await stop()
        await super().close()
        if self.leases is not None:
            # Every shard is closed: the other processes may take them at once.
            await self.leases.leave()

    async def _answer_what_came(self) -> None:
        """Close the shards' connections, then wait for the interactions they brought to be
        answered: discord.py's own close ends the HTTP session right after the shards."""
        running: dict[int, Any] = vars(self)["_AutoShardedClient__shards"]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SHARD_CLOSE_SECONDS):
                await asyncio.gather(
                    *(shard.close() for shard in running.values()), return_exceptions=True
                )
        handling = answering() - {asyncio.current_task()}
        if handling:
            await asyncio.wait(handling, timeout=ANSWER_SECONDS_AT_CLOSE)

    async def launch_shards(self) -> None:
        """Connect the shards of the settings, or with ``KRIG_SHARDS=auto`` those claimed."""
        if self.leases is None:
            await super().launch_shards()
            return
        if self.is_closed():
            return
        self._connection.shard_count = self.shard_count
        self._connection.shard_ids = []
        held = sorted(self.leases.held)
        # Renewed from now on, while the shards connect in the background: each waits for its
        # identify turn (5 s apart on Discord), and a few of them take longer than a lease.
        self.leases.start()
        self._connect_in_background(held)

    async def _start_shard(self, shard: int) -> None:
        """Connect one more shard to Discord, as discord.py's own start connects each."""
        ids = sorted({*self._connection.shard_ids, shard})
        self._connection.shard_ids = ids
        self.shard_ids = ids
        initial = not self._gateway
        await self.launch_shard(
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY, shard, initial=initial
        )

    async def _stop_shard(self, shard: int) -> None:
        """Close one shard's connection and forget its servers: another process serves it."""
        launching = self._launching.pop(shard, None)
        if launching is not None:
            launching.cancel()
            await asyncio.gather(launching, return_exceptions=True)
        # discord.py keeps its shards in a private dict (AutoShardedClient.__shards) and has no
        # call that closes one for good: ShardInfo.disconnect() would leave it listed.
        running: dict[int, Any] = vars(self)["_AutoShardedClient__shards"]
        connection = running.pop(shard, None)
        if connection is not None:
            # Its reading task is cancelled at once; only the close handshake may wait, and the
            # renewals wait for it: a Discord out of reach must not hold them up.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SHARD_CLOSE_SECONDS):
                    await connection.close()
        ids = [each for each in self._connection.shard_ids if each != shard]
        self._connection.shard_ids = ids
        self.shard_ids = ids
        state = self._connection
        for guild in [g for g in state._guilds.values() if g.shard_id == shard]:
            state._remove_guild(guild)
        self._gateway.pop(shard, None)
        log.info("shard %d: stopped", shard, extra={"shard_id": shard})

    async def _change_shards(self, change: Change) -> None:
        """Stop the shards lost or given up, serve the games of those taken, connect them."""
        for shard in sorted(change.lost):
            await self._stop_shard(shard)
        shards = self.settings.shards
        self.service.registry.hold_shards(shards.holding(tuple(change.held)), change.held)
        if change.gained:
            # In the background: restoring and identifying take seconds, and the renewals
            # must go on meanwhile.
            gained = shards.holding(tuple(change.gained))
            self._spawn(self._take_over(gained), f"take-over-{listed(change.gained)}")

    async def _take_over(self, shards: Shards) -> None:
        """Restore the games of shards taken over (deadlines, autoplay, match games and ends
        left unshown), then connect them."""
        try:
            challenges, broken = await self.service.recovery.restore(shards)
            resumed = 0 if self._autoplay is None else await self._autoplay.restore(shards)
            recovered = await self.matches.recover(shards)
        except StorageError as exc:
            log.warning("could not restore the games of shards %s: %s", shards, exc)
        else:
            if recovered and self._matches is not None:
                self._spawn(self._matches.announce(recovered), f"announce-matches-{shards}")
            if self._play is not None:
                self._spawn(self._play.show_endings(shards), f"tell-endings-{shards}")
            if self._tournaments is not None:
                self._spawn(self._tournaments.restore(shards), f"tournament-restore-{shards}")
            log.info(
                "took over shards %s: %d open challenges, %d autoplays; %d unreadable games ended",
                listed(shards.ids or ()),
                len(challenges),
                resumed,
                len(broken),
            )
        held = self.service.registry.shards.ids or ()
        self._connect_in_background([shard for shard in shards.ids or () if shard in held])

    def _connect_in_background(self, shards: Iterable[int]) -> None:
        """Connect shards, each in a task of its own (a stop or a shard lost cancels it)."""
        for shard in shards:
            task = asyncio.create_task(self._start_shard(shard), name=f"krig-shard-{shard}")
            self._launching[shard] = task
            task.add_done_callback(self._launched)

    def _launched(self, task: asyncio.Task[None]) -> None:
        for shard, launching in list(self._launching.items()):
            if launching is task:
                del self._launching[shard]

    def rest_turn(self) -> float:
        """Take a turn for autoplay's next edit under this process's share of Discord's global
        limit (``KRIG_REST_SHARE``): 0.0, or the seconds to wait for one."""
        share = self.settings.rest_share
        if self.leases is not None:
            # The live processes of the claims share the limit, however many come and go.
            share = 1 / max(1, self.leases.members)
        return self.metrics.rest.take_turn(GLOBAL_REST_LIMIT * share)

    def _observe_write(self, seconds: float, together: int) -> None:
        self.metrics.commit_seconds.observe(seconds)
        self.metrics.batch_size.observe(together)

    def gateway_problem(self) -> str | None:
        """Return None when every shard is connected to Discord, or one line saying why not."""
        if self.leases is not None and not self.leases.held and not self.is_closed():
            return None  # more processes than shards: this one waits, healthy, for a share
        if self._gateway and not self.is_closed():
            expected = self._connection.shard_ids or self._gateway
            away = {
                shard: self._gateway.get(shard, "disconnected")
                for shard in expected
                if self._gateway.get(shard) != "connected"
            }
            if not away:
                return None
            if len(self._gateway) == 1:
                return f"the connection to Discord is {next(iter(away.values()))}"
            return "; ".join(f"shard {shard} is {state}" for shard, state in sorted(away.items()))
        if not self._gateway:
            return "not connected to Discord yet"
        return "the connection to Discord is disconnected"

    def _gateway_is(self, shard: int, state: GatewayState) -> None:
        if state != self._gateway.get(shard):
            # A shard's first connection is what "Krigbot is online" says, unless the process
            # runs shards of its own among others' (KRIG_SHARDS): then which are up is news, as
            # is every change after it (resuming, connected again).
            first = shard not in self._gateway and self.settings.shards.ids is None
            level = logging.DEBUG if first and state == "connected" else logging.INFO
            log.log(level, "shard %d: %s", shard, state, extra={"shard_id": shard})
        self._gateway[shard] = state
        self.metrics.gateway_state(shard, state)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # Instead of discord.py's 5 s before every identify but the first of this process:
        # Discord's rule, one identify per max_concurrency bucket per pause, across processes.
        if self._max_concurrency is None:
            limits = await self.fetch_session_start_limits()
            self._max_concurrency = max(1, limits.max_concurrency)
        await self.identifies.wait_turn((shard_id or 0) % self._max_concurrency)

    async def on_ready(self) -> None:
        servers = len(self.guilds)
        log.info(
            "Krigbot is online as %s in %d %s",
            self.user,
            servers,
            "server" if servers == 1 else "servers",
        )

    async def on_shard_connect(self, shard_id: int) -> None:
        self._gateway_is(shard_id, "connected")

    async def on_shard_resumed(self, shard_id: int) -> None:
        self._gateway_is(shard_id, "connected")

    async def on_shard_disconnect(self, shard_id: int) -> None:
        # discord.py reconnects by itself (resuming the session where it can) unless closing.
        self._gateway_is(shard_id, "disconnected" if self.is_closed() else "resuming")

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        log.exception("error in %s", event_method)
