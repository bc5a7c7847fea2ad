"""The Discord adapter: what every cog needs to speak to Discord, and no command of its own.

Answering an interaction within Discord's deadlines (:mod:`.replies`), keeping each channel's
tables in order and greying the ones that can do nothing any more (:mod:`.tables`), writing
where the bot may in a server, a DM or a group chat (:mod:`.surfaces`), drawing the pictures in
worker processes (:mod:`.pictures`), the buttons' custom ids (:mod:`.buttons`), the checks on
what Discord sends (:mod:`.checks`), the ``/krig`` command group (:mod:`.group`), the rules'
choices the commands offer (:mod:`.choices`), the player or actor of an interaction
(:mod:`.players`), what the cogs are built with (:mod:`.parts`), the answer to a Flip press
another press beat (:mod:`.races`), autoplay's runs (:mod:`.autoplayer`), the gateway
identifies' turns (:mod:`.identify`) and the web view's links (:mod:`.weblinks`). The cogs in
:mod:`krigbot.cogs` are built on these.
"""
