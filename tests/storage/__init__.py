"""Tests of the storage layer (krigbot.storage) on SQLite and PostgreSQL."""
