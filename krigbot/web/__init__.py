"""The optional web view: a server's leaderboard, its players' pages and replays in the browser.

Off unless ``KRIG_WEB_PORT`` is set, and a server's pages exist only while its moderators
have turned them on (``/krig settings web:on``); see ``access`` for how the links are signed.
"""
