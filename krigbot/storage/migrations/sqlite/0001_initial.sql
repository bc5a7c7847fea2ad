-- Initial schema. Times are fixed-width ISO-8601 UTC text ('2024-05-01T12:00:00.000000Z'),
-- so text comparison is time comparison. JSON columns hold compact JSON text.

CREATE TABLE games (
    id                   INTEGER PRIMARY KEY,
    guild_id             INTEGER NOT NULL,
    channel_id           INTEGER NOT NULL,
    challenger_id        INTEGER NOT NULL,
    status               TEXT    NOT NULL DEFAULT 'challenge' CHECK (status IN (
                             'challenge', 'running', 'finished', 'cancelled',
                             'abandoned', 'declined', 'expired')),
    variant              TEXT    NOT NULL,
    rules                TEXT    NOT NULL DEFAULT '{}',   -- JSON object
    seed                 INTEGER NOT NULL,
    players              TEXT    NOT NULL,                -- JSON list of user ids, seat order
    names                TEXT    NOT NULL,                -- JSON list of display names
    accepted             TEXT    NOT NULL DEFAULT '[]',   -- JSON list of user ids
    state                TEXT,                            -- engine state JSON, NULL until dealt
    round                INTEGER NOT NULL DEFAULT 0 CHECK (round >= 0),
    table_message_id     INTEGER,
    challenge_message_id INTEGER,
    result               TEXT,                            -- JSON outcome, NULL until ended
    created_at           TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL,
    last_activity_at     TEXT    NOT NULL,
    finished_at          TEXT,                            -- set by every terminal status
    extra                TEXT    NOT NULL DEFAULT '{}'    -- JSON object for future settings
);

-- The guarantee behind "one game per channel": inserts race on this index, not on a
-- pre-check.
CREATE UNIQUE INDEX games_one_active_per_channel
    ON games (channel_id) WHERE status IN ('challenge', 'running');

-- running_games() at start-up and stale_games() for the inactivity sweep.
CREATE INDEX games_status_activity ON games (status, last_activity_at);

-- recent_games(): a guild's history, newest first.
CREATE INDEX games_guild_finished ON games (guild_id, finished_at);

CREATE TABLE results (
    game_id     INTEGER NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    guild_id    INTEGER NOT NULL,     -- copied from games so stats never need a join
    user_id     INTEGER NOT NULL,
    seat        INTEGER NOT NULL CHECK (seat >= 0),
    team        INTEGER,              -- NULL in free-for-all games
    outcome     TEXT    NOT NULL CHECK (outcome IN ('win', 'loss', 'draw')),
    rounds      INTEGER NOT NULL CHECK (rounds >= 0),
    wars_won    INTEGER NOT NULL DEFAULT 0 CHECK (wars_won >= 0),
    biggest_pot INTEGER NOT NULL DEFAULT 0 CHECK (biggest_pot >= 0),
    finished_at TEXT    NOT NULL,
    PRIMARY KEY (game_id, user_id),
    UNIQUE (game_id, seat)
) WITHOUT ROWID;

-- Both cover the leaderboard query (no table lookups): the first serves the all-time
-- board (already grouped by user) and player_stats, the second a board since a date.
CREATE INDEX results_guild_user ON results (guild_id, user_id, finished_at, outcome);
CREATE INDEX results_guild_finished ON results (guild_id, finished_at, user_id, outcome);

CREATE TABLE guild_settings (
    guild_id INTEGER NOT NULL,
    key      TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    PRIMARY KEY (guild_id, key)
) WITHOUT ROWID;
