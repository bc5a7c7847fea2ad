"""Helpers the tests share: ways to drive the bot, build rows and read what players see."""
