"""Tests of the rules engine (krigbot.engine) against RULES.md."""
