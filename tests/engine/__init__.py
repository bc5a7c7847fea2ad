"""Tests of the rules engine (krigbot.engine) against docs/rules.md."""
