"""The database in bad weather: locked, read-only, full, not a database, newer than the bot.

Each gives one clear log line and a clear private answer ("nothing changed"), or a clear refusal
to start with exit status 2. Never a corrupt game, never a half-written round: after every
failure the database is checked from outside (:func:`check_database`), and once the weather
clears the games carry on from exactly where they were.

What is simulated, and how:

- locked: another *process* holds ``BEGIN EXCLUSIVE`` on the file, as a backup tool or a second
  copy of the bot would (reads go on in WAL mode; writes wait ``busy_timeout`` and fail);
- read-only at run time: ``PRAGMA query_only`` on the bot's connection, which makes SQLite refuse
  every write with SQLITE_READONLY, the code a file or filesystem turned read-only gives (the
  tests run as root, which file permissions do not stop);
- read-only at start-up: a read-only tmpfs mount (skipped where mounting is not allowed);
- disk full: ``PRAGMA max_page_count`` pinned to the file's size on the bot's connection, which
  gives SQLITE_FULL exactly where a full disk would: whenever a write needs a new page;
- not a database, damaged, newer schema: the file itself, at start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.sessions import deadlines
from krigbot.storage import DiskFullError, GameStore, Storage
from tests.standin import DiscordStandIn, InteractionResponse, Message, run_bot
from tests.standin.fixtures import SampleWorld
from tests.standin.messages import EPHEMERAL
from tests.support.consistency import check_database
from tests.support.faulty_storage import pragma, read_only
from tests.support.players import (
    DEFERRED_CHANNEL_MESSAGE,
    UPDATE_MESSAGE,
    answer_of,
    buttons,
    challenge,
    challenge_message,
    flip,
    flip_button,
    game_id_of,
    press,
    public_messages,
    start_game,
    text_of,
)
from tests.support.settings import make_settings
from tests.support.texts import pattern

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
QUICK_BUSY_MS = 300
"""A short busy timeout, so a locked write fails at once instead of after the 5 s default."""


@contextlib.asynccontextmanager
async def locked_by_another_process(db: Path) -> AsyncIterator[None]:
    """Hold an exclusive lock on the database from another process for the block."""
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sqlite3, sys\n"
        f"conn = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "conn.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
        "conn.execute('ROLLBACK')\n",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert holder.stdin is not None
    assert holder.stdout is not None
    try:
        assert await asyncio.wait_for(holder.stdout.readline(), 10) == b"locked\n"
        yield
    finally:
        holder.stdin.close()
        await asyncio.wait_for(holder.wait(), 10)


@pytest.fixture
async def fragile_bot(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path
) -> AsyncIterator[KrigBot]:
    """Return the real bot on a database whose locked writes fail fast.

    The errors it logs do not end the test's waits; the test must claim them all.
    """
    storage = await Storage.open(db_path, busy_timeout_ms=QUICK_BUSY_MS)
    try:
        bot = KrigBot(make_settings(db_path), storage, guild_ready_timeout=0.05)
        async with run_bot(bot, standin) as running:
            standin.fail_fast_on_bot_errors = False
            yield running
    finally:
        await storage.close()


def refused(answer: Any, locale: str) -> bool:
    """Tell whether an answer is the private "could not be saved, nothing changed" line."""
    return bool(answer.ephemeral) and answer.content == t(locale, "err.storage")


# --------------------------------------------------------------- locked and read-only


@pytest.mark.parametrize(
    ("fault", "logged"),
    [("locked", "locked by another connection"), ("read-only", "is read-only")],
)
async def test_every_change_is_refused_clearly_and_nothing_changes_until_it_clears(
    standin: DiscordStandIn,
    world: SampleWorld,
    fragile_bot: KrigBot,
    db_path: Path,
    fault: str,
    logged: str,
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    newest = (await flip(standin, world.no_channel, world.alice)).message
    assert newest is not None
    open_challenge = await challenge_message(standin, world.sv_channel, world.bob, world.carol)
    confirm = (
        await answer_of(
            standin, await standin.slash("krig forfeit", user=world.alice, channel=world.no_channel)
        )
    ).message
    assert confirm is not None
    third = standin.add_channel(world.no_guild, "krig-3")
    before = check_database(db_path)
    weather = (
        locked_by_another_process(db_path) if fault == "locked" else read_only(fragile_bot.storage)
    )

    async with weather:
        changes: list[tuple[Awaitable[Any], str]] = [
            (flip(standin, world.no_channel, world.alice), "nb"),
            (press(standin, newest, flip_button(newest), world.bob), "sv"),
            (
                press(
                    standin,
                    open_challenge,
                    f"krig:accept:{game_id_of(open_challenge)}",
                    world.carol,
                ),
                "en",
            ),
            (
                press(
                    standin,
                    open_challenge,
                    f"krig:decline:{game_id_of(open_challenge)}",
                    world.carol,
                ),
                "en",
            ),
            (challenge(standin, third, world.alice, world.carol), "nb"),
            (
                press(
                    standin,
                    confirm,
                    f"krig:forfeit:{table.game_id}:{world.alice.id}:yes",
                    world.alice,
                ),
                "nb",
            ),
            (standin.slash("krig cancel", user=world.moderator, channel=world.no_channel), "nb"),
        ]
        for action, locale in changes:
            answer = await action
            if not hasattr(answer, "ephemeral"):
                answer = await answer_of(standin, answer)
            assert refused(answer, locale), text_of(answer)
        # Reading goes on: the truth, from the game in memory and from the database.
        status = await answer_of(
            standin, await standin.slash("krig status", user=world.alice, channel=world.no_channel)
        )
        assert t("nb", "status.round", round=1) in text_of(status)
        board = await answer_of(
            standin,
            await standin.slash("krig leaderboard", user=world.bob, channel=world.no_channel),
        )
        assert not board.ephemeral
        assert check_database(db_path) == before

    errors = standin.accept_bot_errors()
    assert len(errors) == len(changes)
    for record in errors:
        cause = record.exc_info[1] if record.exc_info else None
        assert logged in record.getMessage() + str(cause), record.getMessage()
    # The weather cleared: everything carries on from where it was.
    assert (await flip(standin, world.no_channel, world.bob)).embeds[0]["title"] == t(
        "nb", "table.title", round=2
    )
    dealt = await press(
        standin, open_challenge, f"krig:accept:{game_id_of(open_challenge)}", world.carol
    )
    assert dealt.type == UPDATE_MESSAGE
    games = check_database(db_path)
    assert games[table.game_id].round == 2
    assert games[game_id_of(open_challenge)].status == "running"
    assert [m for m in public_messages(standin, third)] == []


async def test_a_locked_database_is_still_answered_within_discords_three_seconds(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, db_path: Path, errors_expected: None
) -> None:
    # The production busy timeout (5 s) is longer than Discord's deadline: the bot defers.
    await start_game(standin, world.no_channel, world.alice, world.bob)

    async with locked_by_another_process(db_path):
        rec = await standin.slash("flip", user=world.alice, channel=world.no_channel)
        first = await rec.response()
        assert first.type == DEFERRED_CHANNEL_MESSAGE
        assert first.latency < 3.0
        await rec.followup(timeout=10)

    (sent,) = [r.json for r in standin.requests_matching("POST", f"/webhooks/.*/{rec.token}$")]
    assert sent["flags"] & EPHEMERAL
    assert sent["content"] == t("nb", "err.storage")
    assert first.message is not None
    assert first.message.deleted  # the public "thinking" message is gone
    (record,) = standin.accept_bot_errors()
    assert record.exc_info is None  # one line that says why, no traceback
    assert "locked" in record.getMessage()
    assert (await flip(standin, world.no_channel, world.bob)).embeds[0]["title"] == t(
        "nb", "table.title", round=1
    )


# --------------------------------------------------------------------------- disk full


async def test_a_full_disk_never_leaves_a_half_written_round_or_a_lost_result(
    standin: DiscordStandIn,
    world: SampleWorld,
    fragile_bot: KrigBot,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    storage = fragile_bot.storage
    failed_at: list[str] = []
    real_finish = GameStore.finish_game

    async def finish_game(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        try:
            return await real_finish(self, *args, **kwargs)
        except DiskFullError as exc:
            # Which statement of the finishing transaction the disk ran out on.
            stack = "".join(traceback.format_exception(exc.__cause__))
            failed_at.append("results" if "executemany" in stack else "game")
            raise

    monkeypatch.setattr(GameStore, "finish_game", finish_game)

    async def with_full_disk(
        spare_pages: int, act: Callable[[], Awaitable[Any]], locale: str
    ) -> Any:
        """Act with only ``spare_pages`` pages left; if refused, check nothing and retry."""
        (pages,) = await pragma(storage, "page_count")
        await pragma(storage, f"max_page_count = {pages[0] + spare_pages}")
        before = check_database(db_path)
        answer = await act()
        await pragma(storage, "max_page_count = 1073741823")
        if answer.ephemeral:
            assert refused(answer, locale), text_of(answer)
            assert check_database(db_path) == before
            answer = await act()
        assert not answer.ephemeral, text_of(answer)
        return answer

    channel = world.no_channel
    for n in range(60):
        # Short games (a round limit of 1): each ends with the finishing transaction.
        message = await with_full_disk(
            n % 3,
            lambda: challenge_answer(standin, channel, world.alice, world.bob),
            "nb",
        )
        assert message.message is not None
        challenge, game_id = message.message, game_id_of(message.message)

        def accept(m: Message = challenge, g: int = game_id) -> Awaitable[InteractionResponse]:
            return press(standin, m, f"krig:accept:{g}", world.bob)

        await with_full_disk(n % 3, accept, "sv")
        over = await with_full_disk(n % 3, lambda: flip(standin, channel, world.alice), "nb")
        assert not [c for c in buttons(over) if c.startswith("krig:flip:")]  # the game is over
        if "results" in failed_at:
            break

    # The disk ran out after the game was marked finished, inside the same transaction: the
    # dangerous case, and nothing of it was kept (checked above after the refusal).
    assert "results" in failed_at
    errors = standin.accept_bot_errors()
    assert errors
    assert all("is full" in str(r.exc_info[1] if r.exc_info else r.getMessage()) for r in errors)
    games = check_database(db_path)
    assert all(game.status == "finished" for game in games.values())
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        (listed,) = conn.execute("SELECT COUNT(DISTINCT game_id) FROM results").fetchone()
    finally:
        conn.close()
    assert listed == len(games)


async def test_a_deal_that_could_not_be_saved_is_dealt_by_the_next_press(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The disk fills between an accept's two writes: the accept is saved, the deal is not.
    standin.fail_fast_on_bot_errors = False
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    accept = f"krig:accept:{game_id_of(message)}"

    async def full(self: GameStore, *args: Any, **kwargs: Any) -> None:
        raise DiskFullError("The disk holding the database is full.")

    with monkeypatch.context() as patch:
        patch.setattr(GameStore, "start_game", full)
        first = await press(standin, message, accept, world.bob)
    second = await press(standin, message, accept, world.bob)

    assert refused(first, "sv")
    assert second.type == UPDATE_MESSAGE  # not "you have already accepted", forever
    assert t("nb", "table.title", round=0) in text_of(message)
    assert check_database(Path(bot.storage.path))[game_id_of(message)].status == "running"
    (logged,) = standin.accept_bot_errors()
    assert "is full" in logged.getMessage()


async def test_a_round_is_shown_even_if_its_message_cannot_be_remembered(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The round is committed; only the later write of which message shows it fails.
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    async def full(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        raise DiskFullError("The disk holding the database is full.")

    monkeypatch.setattr(GameStore, "set_table_message", full)
    pressed = await press(standin, table.message, flip_button(table.message), world.bob)
    typed = await flip(standin, world.no_channel, world.alice)

    assert pressed.type == UPDATE_MESSAGE
    assert t("nb", "table.title", round=1) in text_of(table.message)
    assert typed.embeds[0]["title"] == t("nb", "table.title", round=2)  # not "nothing changed"
    assert check_database(Path(bot.storage.path))[table.game_id].round == 2


async def test_a_challenge_is_out_and_expires_even_if_its_message_cannot_be_remembered(
    standin: DiscordStandIn, world: SampleWorld, quick_bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def full(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        raise DiskFullError("The disk holding the database is full.")

    monkeypatch.setattr(GameStore, "set_challenge_message", full)
    watcher = standin.watch(world.no_channel)
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    # A challenge deferred on a busy machine is filled in by an edit too, and the half-second
    # challenge may expire before that: the edit to wait for is the one saying it expired.
    says_expired = pattern("nb", "challenge.expired").search
    expired = await watcher.next(
        "edit",
        predicate=lambda e: e.message is message and says_expired(text_of(e.revision)) is not None,
    )

    assert says_expired(text_of(expired.revision))
    assert check_database(Path(quick_bot.storage.path))[game_id].status == "expired"


async def test_a_challenge_whose_expiry_cannot_be_saved_expires_once_the_database_answers(
    standin: DiscordStandIn, world: SampleWorld, quick_bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first try to end it fails: the deadline is not dropped, it tries again.
    monkeypatch.setattr(deadlines, "RETRY", timedelta(milliseconds=200))
    end_game = GameStore.end_game
    failed: list[int] = []

    async def full_once(
        self: GameStore, game_id: int, status: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if status == "expired" and not failed:
            failed.append(game_id)
            raise DiskFullError("The disk holding the database is full.")
        return await end_game(self, game_id, status, *args, **kwargs)

    monkeypatch.setattr(GameStore, "end_game", full_once)
    watcher = standin.watch(world.no_channel)
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    says_expired = pattern("nb", "challenge.expired").search
    await watcher.next(
        "edit",
        predicate=lambda e: e.message is message and says_expired(text_of(e.revision)) is not None,
    )

    (game_id,) = failed  # the one game: ended at the second try
    assert check_database(Path(quick_bot.storage.path))[game_id].status == "expired"


async def challenge_answer(
    standin: DiscordStandIn, channel: Any, challenger: Any, opponent: Any
) -> Any:
    """Challenge to a one-round game and return the answer."""
    return await answer_of(
        standin, await challenge(standin, channel, challenger, opponent, rounds=1)
    )


# ------------------------------------------------------------------------------ start-up


def start_bot(db: Path, cwd: Path, env: dict[str, str]) -> tuple[int, list[str], str]:
    """Run ``python bot.py`` to its end; return its status, its ``krigbot:`` lines and stderr."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bot.py")],
        env={**env, "DISCORD_TOKEN": "fake-token", "KRIG_DB": str(db)},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("krigbot:")]
    return done.returncode, lines, done.stderr


def minimal_env() -> dict[str, str]:
    """Return an environment with only what Python needs (no way to reach any Discord)."""
    return {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}


async def prepared_database(db: Path) -> None:
    """Create a database with one running game in it."""
    storage = await Storage.open(db)
    await storage.close()


async def test_a_database_from_a_newer_krigbot_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "krig.db"
    await prepared_database(db)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA user_version = 99")

    status, lines, stderr = await asyncio.to_thread(start_bot, db, tmp_path, minimal_env())

    assert status == 2
    assert len(lines) == 1
    assert "schema version 99" in lines[0]
    assert "upgrade Krigbot" in lines[0]
    assert "Traceback" not in stderr
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (99,)  # left as it was


async def test_a_damaged_database_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "krig.db"
    await prepared_database(db)
    size = db.stat().st_size
    with db.open("r+b") as file:
        file.seek(4096)  # keep the header, damage every page after it
        file.write(b"\xa5" * (size - 4096))

    status, lines, stderr = await asyncio.to_thread(start_bot, db, tmp_path, minimal_env())

    assert status == 2
    assert len(lines) == 1
    assert "corrupt" in lines[0]
    assert "backup" in lines[0]
    assert "Traceback" not in stderr


async def test_a_new_database_locked_by_another_process_refuses_to_start(
    tmp_path: Path,
) -> None:
    db = tmp_path / "krig.db"
    db.touch()  # an empty file: the bot must create its tables, which needs the write lock

    async with locked_by_another_process(db):
        status, lines, stderr = await asyncio.to_thread(start_bot, db, tmp_path, minimal_env())

    assert status == 2
    assert len(lines) == 1
    assert "locked by another connection" in lines[0]
    assert "Traceback" not in stderr


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Any:
    """Return a folder on a filesystem mounted read-only, holding a Krigbot database."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a read-only filesystem needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount here: {mounted.stderr.decode().strip()}")
    try:
        asyncio.run(prepared_database(folder / "krig.db"))
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_database_on_a_read_only_filesystem_refuses_to_start(
    read_only_folder: Path, tmp_path: Path
) -> None:
    status, lines, stderr = start_bot(read_only_folder / "krig.db", tmp_path, minimal_env())

    assert status == 2
    assert len(lines) == 1
    assert "writable" in lines[0]
    assert "Traceback" not in stderr
