"""A throw-away PostgreSQL 15 cluster for the tests and benchmarks: initdb, start, databases, stop.

The cluster lives in a temporary folder and listens only on a unix socket there. As root it
runs as the ``postgres`` user (initdb refuses root). Its postmaster is told to quit if the
process that started it dies (``PR_SET_PDEATHSIG``), so a killed test run leaves none behind;
its processes also inherit the run's environment, so the leftover check finds them.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import pwd
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

BIN: Final = Path(os.environ.get("KRIG_PG_BIN", "/usr/lib/postgresql/15/bin"))
"""Where Debian's postgresql-15 puts initdb and postgres (the README names the package, and
``.ci/run`` installs it when ``initdb`` is missing there)."""
START_TIMEOUT: Final = 30.0
FAST: Final = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
"""Settings for tests: nothing they check needs a commit to reach the disk."""
DURABLE: Final = ("-c", "fsync=on", "-c", "synchronous_commit=on")
"""Settings for a durability test or a benchmark: a commit returns once it is on the disk."""
_PR_SET_PDEATHSIG: Final = 1
READY: Final = b"database system is ready to accept connections"


class PostgresMissingError(RuntimeError):
    """PostgreSQL 15 is not installed where the tests look for it."""


def _server_user() -> pwd.struct_passwd | None:
    """Return the user the cluster runs as: ``postgres`` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresMissingError(
            "running as root, but there is no 'postgres' user to run PostgreSQL as "
            "(apt-get install postgresql-15 creates it)"
        ) from None


def _die_with_parent() -> None:
    """In the child, before exec: ask for SIGQUIT (immediate shutdown) when our parent dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGQUIT)


@dataclass
class Cluster:
    """A running cluster; ``create_database()`` hands out fresh, empty databases."""

    folder: Path
    process: subprocess.Popen[bytes]
    options: tuple[str, ...] = ()
    """The server's settings (``-c name=value`` pairs), kept for :meth:`resume`."""
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def socket_dir(self) -> str:
        """Return the folder holding the cluster's unix socket."""
        return str(self.folder)

    def dsn(self, database: str = "postgres") -> str:
        """Return the URL of one of the cluster's databases."""
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run one SQL command with psql on a database (a name or a URL); return its output."""
        if "://" not in database:
            database = self.dsn(database)
        done = subprocess.run(
            [
                BIN / "psql",
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
                database,
            ],
            check=False,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def create_database(self, *, template: str = "template0", prefix: str = "krig") -> str:
        """Create a new database, a copy of ``template`` (empty by default); return its URL."""
        name = f"{prefix}_{next(self._names)}"
        self.psql(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.dsn(name)

    def halt(self) -> None:
        """Shut the server down (fast: connections are dropped); :meth:`resume` starts it again."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=START_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.send_signal(signal.SIGQUIT)
                self.process.wait(timeout=START_TIMEOUT)

    def resume(self) -> None:
        """Start the server again on the data :meth:`halt` kept, and wait until it answers."""
        self.process = _launch(self.folder, self.options)

    def stop(self) -> None:
        """Shut the cluster down (fast: connections are dropped) and remove its folder."""
        self.halt()
        shutil.rmtree(self.folder, ignore_errors=True)


PEER: Final = "local all postgres trust\nlocal all all peer\n"
"""``pg_hba.conf`` as Debian's is for the socket: every OS user gets in as the PostgreSQL user
of its own name, and nobody else (``postgres`` is trusted so that a test run by someone who is
not root can still act as the superuser)."""


def start_cluster(
    *, durable: bool = False, settings: tuple[str, ...] = (), hba: str | None = None
) -> Cluster:
    """Initialise a cluster in a new temporary folder, start it and wait until it answers.

    ``hba`` replaces the cluster's ``pg_hba.conf`` (by default every local user is trusted as
    any PostgreSQL user), e.g. with :data:`PEER`.
    """
    for program in ("initdb", "postgres", "psql"):
        if not (BIN / program).exists():
            raise PostgresMissingError(
                f"{BIN / program} is missing: install PostgreSQL 15 "
                "(sudo apt install postgresql-15, as the README says) or set KRIG_PG_BIN"
            )
    user = _server_user()
    folder = Path(tempfile.mkdtemp(prefix="krig-pg-"))
    data = folder / "data"
    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    uid = None if user is None else user.pw_uid
    gid = None if user is None else user.pw_gid
    initdb: list[str | Path] = [
        BIN / "initdb",
        "-D",
        data,
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
    ]
    try:
        subprocess.run(initdb, check=True, capture_output=True, cwd=folder, user=uid, group=gid)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {exc.stderr.decode(errors='replace')}") from exc
    if hba is not None:
        (data / "pg_hba.conf").write_text(hba, encoding="utf-8")
        if user is not None:
            os.chown(data / "pg_hba.conf", user.pw_uid, user.pw_gid)
    options = (*(DURABLE if durable else FAST), *settings)
    try:
        return Cluster(folder, _launch(folder, options), options)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _launch(folder: Path, options: tuple[str, ...]) -> subprocess.Popen[bytes]:
    """Start the server on the cluster's folder and wait until it answers."""
    user = _server_user()
    server: list[str | Path] = [
        BIN / "postgres",
        "-D",
        folder / "data",
        "-k",
        folder,
        "-c",
        "listen_addresses=",
        "-c",
        "max_connections=200",
        "-c",
        "lc_messages=C",
        *options,
    ]
    process = subprocess.Popen(
        server,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=folder,
        preexec_fn=_die_with_parent,
        user=None if user is None else user.pw_uid,
        group=None if user is None else user.pw_gid,
    )
    try:
        _wait_until_ready(process, folder / "server.log")
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process


def _wait_until_ready(process: subprocess.Popen[bytes], log_path: Path) -> None:
    """Read the server's log until it says it is ready, then copy the rest to a file."""
    assert process.stdout is not None
    stream = process.stdout
    seen: list[bytes] = []
    deadline = time.monotonic() + START_TIMEOUT
    while READY not in b"".join(seen[-2:]):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            raise RuntimeError(f"PostgreSQL did not start in {START_TIMEOUT:.0f} s")
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            raise RuntimeError(
                "PostgreSQL did not start:\n" + b"".join(seen).decode(errors="replace")[-2000:]
            )
        seen.append(chunk)
    log = log_path.open("ab")
    log.write(b"".join(seen))

    def copy() -> None:
        # The server must never block on a full pipe: its output goes on to the file.
        with log, stream:
            while chunk := os.read(stream.fileno(), 65536):
                log.write(chunk)
                log.flush()

    threading.Thread(target=copy, name="postgres-log", daemon=True).start()


@contextlib.contextmanager
def cluster_running(*, durable: bool = False, hba: str | None = None) -> Iterator[Cluster]:
    """Run a cluster for the block."""
    cluster = start_cluster(durable=durable, hba=hba)
    try:
        yield cluster
    finally:
        cluster.stop()
