"""The Dockerfile and compose.yaml: what they declare, and the image built and started for real.

The image test builds the Dockerfile with podman (``--isolation chroot``) from a Debian bookworm
base made with debootstrap, which stands in for ``python:3.11-slim-bookworm`` (no image registry
is reachable here; Debian's packages are). The sandbox refuses ``podman run``, so the image's own
entry point (its ``CMD``, working folder, user and environment, as ``podman image inspect`` tells
them) is started in a chroot of a container made from it, against the Discord stand-in on
127.0.0.1, and its ``HEALTHCHECK`` command must then pass.

It takes minutes (debootstrap about 5, the build 2-3), so it runs only when
``KRIG_CONTAINER_TESTS=1`` is set, as root with podman and debootstrap installed
(``apt-get install podman debootstrap``). The base is kept in ``/var/cache/krigbot-test`` (or
``KRIG_CONTAINER_CACHE``) and in podman's storage as ``localhost/krigbot-base``, outside the
checkout, so a second run only builds.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import aiohttp
import pytest
import yaml

from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.standin.server import SITECUSTOMIZE_DIR

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
COMPOSE = ROOT / "compose.yaml"
CACHE = Path(os.environ.get("KRIG_CONTAINER_CACHE", "/var/cache/krigbot-test"))
BASE = "localhost/krigbot-base"
MIRROR = "http://deb.debian.org/debian"
BUILD_TIMEOUT = 1200


def instructions() -> list[tuple[str, str]]:
    """Return the Dockerfile's instructions (continued lines joined) as (keyword, arguments)."""
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def test_the_dockerfile_takes_its_base_as_an_argument_and_runs_as_its_own_user() -> None:
    steps = instructions()
    assert steps[0] == ("ARG", "BASE=python:3.11-slim-bookworm")
    assert steps[1] == ("FROM", "${BASE}")
    users = [rest for keyword, rest in steps if keyword == "USER"]
    assert users == ["krigbot"]
    assert ("VOLUME", '["/data"]') in steps
    (health,) = [rest for keyword, rest in steps if keyword == "HEALTHCHECK"]
    assert "/healthz" in health
    # The requirements are installed in a layer before the code is copied.
    keywords = [f"{keyword} {rest}" for keyword, rest in steps]
    install = next(n for n, step in enumerate(keywords) if "pip install" in step)
    code = next(n for n, step in enumerate(keywords) if step.startswith("COPY krigbot"))
    assert keywords[install - 1].startswith("COPY requirements.txt")
    assert install < code


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_compose_runs_the_bot_on_its_postgresql_once_that_is_healthy() -> None:
    services = compose()["services"]
    bot, postgres = services["bot"], services["postgres"]
    assert bot["build"] == "."
    assert bot["env_file"] == ".env"  # the token, DISCORD_TOKEN, comes from .env
    env = bot["environment"]
    url = env["KRIG_DATABASE_URL"]
    assert url.startswith("postgresql://krigbot:")
    assert url.endswith("@postgres/krigbot")
    user = postgres["environment"]["POSTGRES_USER"]
    database = postgres["environment"]["POSTGRES_DB"]
    assert (user, database) == ("krigbot", "krigbot")
    # The same password on both sides, from .env.
    password = postgres["environment"]["POSTGRES_PASSWORD"]
    assert password.startswith("${POSTGRES_PASSWORD")
    assert f"krigbot:{password}@" in url
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
    # /healthz must be served where the image's HEALTHCHECK asks for it.
    assert env["KRIG_METRICS_HOST"] == "0.0.0.0"
    assert env["KRIG_METRICS_PORT"] == "9108"
    assert "ENV" in DOCKERFILE
    assert any(volume.endswith(":/data") for volume in bot["volumes"])
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in postgres["volumes"])


# The image, built and started.


def run(*command: str | Path, timeout: float = 600, stdin: IO[bytes] | None = None) -> str:
    """Run a command; return its output, failing the test with its errors if it fails."""
    done = subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=stdin,
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def base_image() -> str:
    """Return the name of a Debian bookworm image with Python 3.11 and venv, made if missing."""
    rootfs = CACHE / "bookworm-python"
    if not (rootfs / "usr" / "bin" / "python3").exists():
        partial = CACHE / "bookworm-python.partial"
        shutil.rmtree(partial, ignore_errors=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        run(
            "debootstrap",
            "--variant=minbase",
            "--include=python3,python3-venv,ca-certificates",
            "bookworm",
            partial,
            MIRROR,
            timeout=BUILD_TIMEOUT,
        )
        partial.rename(rootfs)
    # This machine's trust store, which its way out to the package registry needs (an official
    # base has the public authorities'), and pip told to use it (Debian's pip uses its own).
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/")
    (rootfs / "etc" / "pip.conf").write_text(
        "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n", encoding="utf-8"
    )
    present = subprocess.run(["podman", "image", "exists", BASE], check=False)
    if present.returncode != 0:
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        # With the PATH the official images set, which the Dockerfile's own PATH extends.
        change = "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        run("podman", "import", "--change", change, "-", BASE, stdin=tar.stdout)
        assert tar.wait(timeout=60) == 0
    return BASE


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def image() -> Iterator[dict[str, Any]]:
    """Build the Dockerfile from the stand-in base; yield the image's configuration."""
    if os.environ.get("KRIG_CONTAINER_TESTS") != "1":
        pytest.skip("the image is built only with KRIG_CONTAINER_TESTS=1 (it takes minutes)")
    missing = [tool for tool in ("podman", "debootstrap") if shutil.which(tool) is None]
    assert not missing, f"KRIG_CONTAINER_TESTS=1, but {missing} missing: apt-get install them"
    assert os.geteuid() == 0, "the image test builds and mounts images as root"
    name = f"localhost/krigbot-test-{uuid.uuid4().hex[:8]}"
    run(
        "podman",
        "build",
        "--isolation",
        "chroot",
        "--format",
        "docker",
        "--build-arg",
        f"BASE={base_image()}",
        "-t",
        name,
        ROOT,
        timeout=BUILD_TIMEOUT,
    )
    try:
        (config,) = json.loads(run("podman", "image", "inspect", name))
        yield {"name": name, **config}
    finally:
        subprocess.run(["podman", "rmi", "-f", name], capture_output=True, check=False)


@pytest.fixture
def container(image: dict[str, Any]) -> Iterator[Path]:
    """Create a container of the image (not run) and yield its mounted, writable root.

    It gets what any container runtime gives a container: ``/proc`` and a ``/dev/shm`` (the
    picture workers' queues need it).
    """
    name = f"krigbot-test-{uuid.uuid4().hex[:8]}"
    run("podman", "create", "--name", name, image["name"])
    mounted: list[Path] = []
    try:
        root = Path(run("podman", "mount", name).strip())
        (root / "dev" / "shm").mkdir(exist_ok=True)
        run("mount", "-t", "tmpfs", "-o", "mode=1777,size=64m", "shm", root / "dev" / "shm")
        mounted.append(root / "dev" / "shm")
        run("mount", "-t", "proc", "proc", root / "proc")
        mounted.append(root / "proc")
        yield root
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", str(point)], capture_output=True, check=False)
        subprocess.run(["podman", "umount", name], capture_output=True, check=False)
        subprocess.run(["podman", "rm", "-f", name], capture_output=True, check=False)


def image_user(root: Path, name: str) -> tuple[int, int]:
    """Return the uid and gid of a user in the image's own /etc/passwd."""
    for line in (root / "etc" / "passwd").read_text(encoding="utf-8").splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2]), int(fields[3])
    raise AssertionError(f"the image has no user {name!r}")


@pytest.mark.slow
@pytest.mark.timeout(BUILD_TIMEOUT + 300)
async def test_the_image_starts_the_bot_and_its_healthcheck_passes(
    image: dict[str, Any],
    container: Path,
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    tmp_path: Path,
) -> None:
    config = image["Config"]
    uid, gid = image_user(container, config["User"])
    assert uid != 0
    # The stand-in's sitecustomize, inside the image, points discord.py at 127.0.0.1.
    (container / "tmp" / "standin").mkdir(parents=True)
    shutil.copy(SITECUSTOMIZE_DIR / "sitecustomize.py", container / "tmp" / "standin")
    port = free_port()
    env = dict(item.split("=", 1) for item in config["Env"])
    env.update(
        DISCORD_TOKEN="fake-token",
        KRIG_METRICS_PORT=str(port),
        PYTHONPATH="/tmp/standin",
        KRIG_TEST_DISCORD_URL=standin.url,
        KRIG_TEST_RUN=os.environ.get("KRIG_TEST_RUN", ""),
    )
    command = [*(config.get("Entrypoint") or []), *config["Cmd"]]
    chroot_tool = shutil.which("chroot")
    assert chroot_tool is not None
    chroot = [chroot_tool, f"--userspec={uid}:{gid}", str(container)]
    inside = ["/usr/bin/env", "-C", config["WorkingDir"]]
    log = tmp_path / "bot.log"
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            *chroot, *inside, *command, env=env, stdout=out, stderr=out
        )
    watcher = asyncio.create_task(process.wait())
    standin.watch_task(watcher)
    try:
        await standin.wait_for_ready(timeout=120)
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/healthz") as answer,
        ):
            assert (answer.status, (await answer.text()).strip()) == (200, "ok")
        check = image["Healthcheck"]["Test"]
        assert check[0] == "CMD"
        done = await asyncio.create_subprocess_exec(*chroot, *inside, *check[1:], env=env)
        assert await asyncio.wait_for(done.wait(), timeout=30) == 0
        # The database is on the volume, the bot's own.
        assert (container / "data" / "krig.db").stat().st_uid == uid
    finally:
        if process.returncode is None:
            process.terminate()
        status = await asyncio.wait_for(watcher, timeout=60)
        said = log.read_text(encoding="utf-8", errors="replace")
        print(said[-3000:])  # shown when the test fails: what the bot said
    assert status == 0, said[-3000:]
    assert "Traceback" not in said, said[-3000:]
