"""docs/self-hosting.md's PostgreSQL recipe, its own lines run against a real cluster.

The shell blocks are taken from the page and run by bash as written, with four things of the
machine put in their places: the cluster's socket folder for ``/var/run/postgresql`` (the
cluster, from tests/support/postgres.py, authenticates like Debian's, by peer over the socket),
a folder of the test for ``/var/lib/krigbot``, a root-only settings file of the test for
``/etc/krigbot/krigbot.env``, and this checkout and its Python for ``/opt/krigbot``.

The service's OS user, ``krigbot`` in the recipe, is the user running the tests: peer
authentication lets an OS user in as the PostgreSQL user of its own name, so the recipe's name
is replaced by ours, and no system user has to be created. (The tests' Python lives where
another user may not be able to run it, so the bot's connection is made as the user running the
tests.) ``sudo`` is a stand-in that switches to ``postgres`` when run as root, like the real one;
``systemctl`` one that notes what it was asked.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dotenv import dotenv_values

from krigbot.storage import Storage
from tests.support.postgres import BIN, PEER, Cluster, cluster_running
from tests.support.stored_games import new_game, pr, record_game

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "self-hosting.md").read_text(encoding="utf-8")
SERVICE_USER = "krigbot"
"""The service's OS user in the recipe (deploy/krigbot.service's ``User=``)."""
ME = pwd.getpwuid(os.geteuid()).pw_name

SUDO = """#!{python}
import os, pwd, shutil, sys

args = sys.argv[1:]
env = dict(os.environ)
user = None
if args[:1] == ["-u"]:
    user, args = args[1], args[2:]
while args and "=" in args[0] and not args[0].startswith("/"):
    key, _, value = args.pop(0).partition("=")
    env[key] = value
# Found before switching: the other user may not read this Python's own files.
program = shutil.which(args[0], path=env["PATH"]) or args[0]
if user is not None and user != "{me}":
    if os.geteuid() == 0:
        entry = pwd.getpwnam(user)
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
        env.update(HOME=entry.pw_dir, USER=user, LOGNAME=user)
    else:
        # Not root: the cluster runs as us, and trusts its superuser on the socket.
        env["PGUSER"] = user
os.execve(program, args, env)
"""


def recipe(lead: str) -> str:
    """Return the shell block that follows ``lead`` in the page's PostgreSQL section."""
    section = PAGE.split("\n## PostgreSQL\n", 1)[1]
    match = re.search(re.escape(lead) + r".*?```sh\n(.+?)\n```", section, re.S)
    assert match is not None, f"no shell block after {lead!r} in docs/self-hosting.md"
    return match[1]


class Machine:
    """This machine dressed as the recipe's: folders, the settings file, stand-in commands."""

    def __init__(self, cluster: Cluster, folder: Path) -> None:
        self.cluster = cluster
        self.state = folder / "state"
        self.state.mkdir()
        self.settings = folder / "settings" / "service.env"
        self.settings.parent.mkdir()
        self.settings.write_text("DISCORD_TOKEN=not-a-real-token\n", encoding="utf-8")
        self.settings.chmod(0o600)
        self.bin = folder / "bin"
        self.bin.mkdir()
        self.systemctl_calls = folder / "systemctl.calls"
        (self.bin / "sudo").write_text(SUDO.format(python=sys.executable, me=ME), "utf-8")
        (self.bin / "systemctl").write_text(
            f'#!/bin/sh\necho "$*" >> {self.systemctl_calls}\n', "utf-8"
        )
        for tool in ("sudo", "systemctl"):
            (self.bin / tool).chmod(0o755)

    @property
    def url(self) -> str:
        """Return the URL the recipe gives the bot, on this machine."""
        return f"postgresql:///{ME}?host={self.cluster.socket_dir}"

    def localised(self, block: str) -> str:
        """Return a block of the recipe with this machine's folders and user in it."""
        places = {
            "/etc/krigbot/krigbot.env": str(self.settings),
            "/var/run/postgresql": self.cluster.socket_dir,
            "/var/lib/krigbot": str(self.state),
            "/opt/krigbot/.venv/bin/python": sys.executable,
            "/opt/krigbot": str(ROOT),
        }
        marks = {f"\0{n}\0": value for n, value in enumerate(places.values())}
        for mark, place in zip(marks, places, strict=True):
            block = block.replace(place, mark)
        # The user's and database's name, not the package's (python -m krigbot.storage…).
        block = re.sub(rf"\b{SERVICE_USER}\b(?!\.)", ME, block)
        for mark, value in marks.items():
            block = block.replace(mark, value)
        assert "krigbot/" not in block.replace(str(ROOT), ""), block
        return block

    def run(self, block: str) -> str:
        """Run a block of the recipe as the person following it would; return what it printed."""
        env = {
            "PATH": os.pathsep.join([str(self.bin), str(BIN), os.environ["PATH"]]),
            "HOME": os.environ.get("HOME", "/"),
            # Where Debian's psql, createuser and createdb find the socket by themselves.
            "PGHOST": self.cluster.socket_dir,
        }
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", self.localised(block)],
            env=env,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def bots_url(self) -> str:
        """Return the database URL the settings file now gives the service."""
        url = dotenv_values(self.settings).get("KRIG_DATABASE_URL")
        assert url is not None, self.settings.read_text(encoding="utf-8")
        return url

    def systemctl(self) -> list[str]:
        """Return what was asked of systemctl."""
        if not self.systemctl_calls.exists():
            return []
        return self.systemctl_calls.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Machine]:
    """Return a machine with a PostgreSQL that lets users in by peer authentication only."""
    with cluster_running(hba=PEER) as cluster:
        yield Machine(cluster, tmp_path)


async def test_the_recipe_makes_a_database_the_service_user_can_use(machine: Machine) -> None:
    machine.run(recipe("**A database for the service.**"))
    url = machine.bots_url()
    assert url == machine.url
    # As the bot does at start-up: it creates its tables, then plays.
    async with await Storage.open(url) as storage:
        game = await new_game(storage, channel_id=7)
        assert (await storage.games.active_game(7)) == game
        row = await storage.database.fetchone("SELECT current_user, current_database()")
        assert row is not None
        assert (row[0], row[1]) == (ME, ME)


async def test_the_recipe_moves_the_services_sqlite_database_into_it(machine: Machine) -> None:
    sqlite = machine.state / "krig.db"
    async with await Storage.open(sqlite) as storage:
        waiting = await new_game(storage, channel_id=1)
        await record_game(storage, [pr(10, "win", pot=9), pr(20, "loss")], channel_id=2)
    machine.run(recipe("**A database for the service.**"))
    said = machine.run(recipe("**Moving an existing SQLite database.**"))
    assert "all 2 games are the same there" in said
    assert machine.systemctl() == [f"stop {ME}", f"start {ME}"]
    async with await Storage.open(machine.bots_url()) as storage:
        assert (await storage.games.active_game(1)) == waiting
        finished = await storage.games.get_game(waiting.id + 1)
        assert finished is not None
        assert (finished.channel_id, finished.status) == (2, "finished")
