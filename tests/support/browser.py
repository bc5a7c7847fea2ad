"""A real headless browser (Debian's chromium, driven by Playwright) that watches what pages do."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, Request, async_playwright

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = Path("/tmp/web-shots")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


@dataclass
class Watched:
    """A page, and everything it asked for and complained about."""

    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def foreign(self, origin: str) -> list[str]:
        """Return the requests that left the page's own origin."""
        return [url for url in self.requests if not url.startswith(origin + "/")]


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """Start headless chromium (the test is skipped where none is installed)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(
    browser: Browser, viewport: dict[str, int], *, locale: str = "nb-NO", **options: Any
) -> Watched:
    """Open a fresh page that records its requests, console errors and uncaught exceptions."""
    context = await browser.new_context(viewport=viewport, locale=locale, **options)  # type: ignore[arg-type]
    page = await context.new_page()
    watched = Watched(page)
    page.on("request", lambda request: _record(watched, request))
    page.on("console", lambda message: _console(watched, message))
    page.on("pageerror", lambda error: watched.errors.append(f"uncaught: {error}"))
    page.on("dialog", lambda dialog: watched.errors.append(f"dialog: {dialog.message}"))
    return watched


def _record(watched: Watched, request: Request) -> None:
    watched.requests.append(request.url)


def _console(watched: Watched, message: ConsoleMessage) -> None:
    if message.type in ("error", "warning"):
        watched.errors.append(f"{message.type}: {message.text}")


async def screenshot(page: Page, folder: Path, name: str, *, keep: Path = SHOTS) -> Path:
    """Save the whole page as a PNG in the test's folder and in ``keep`` (/tmp/web-shots/)."""
    path = folder / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    await asyncio.to_thread(_keep, path, keep)
    return path


def _keep(path: Path, keep: Path) -> None:
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, keep / path.name)
