"""Tests of the session layer (krigbot.sessions): running games without Discord."""
