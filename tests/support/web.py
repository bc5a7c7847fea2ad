"""The web view of a running bot, as the web tests reach it."""

from __future__ import annotations

from dataclasses import dataclass

from krigbot.bot import KrigBot
from krigbot.web.server import WebView

SECRET = "a-test-secret-of-enough-length"


@dataclass
class Web:
    """The running bot, the address its pages are served on, and its web view."""

    bot: KrigBot
    base: str
    view: WebView
