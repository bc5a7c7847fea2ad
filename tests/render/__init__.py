"""Tests of the pictures (krigbot.render)."""
