-- Identify turns (issue 11): when each max_concurrency bucket last identified, by the database's
-- own clock, so bot processes on any number of machines sharing this database take turns.
-- Taken under an advisory lock per bucket (storage/postgres.py, `take_identify_turn`); not
-- game data: `migrate_to` has nothing to copy into it.

CREATE TABLE identify_turns (
    bucket  INTEGER     PRIMARY KEY,
    last_at TIMESTAMPTZ NOT NULL
);
