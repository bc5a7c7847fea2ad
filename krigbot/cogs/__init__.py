"""The cogs: Krigbot's slash commands and buttons, each cog one concern, thin over the sessions.

Each cog gets the parts it needs in its constructor from ``KrigBot.setup_hook``; no cog looks up
another. What they share to speak to Discord is :mod:`krigbot.adapter`.
"""
