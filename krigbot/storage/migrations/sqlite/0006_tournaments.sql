-- Tournaments: a server's championship, from sign-up to champion. What the queries need to find
-- (the channel, the server, whether it is open, its champion) is in columns; everything else
-- (players, format, bracket, the threads of the round's matches) is the JSON of `state`, which
-- the session layer reads and writes whole. `version` counts the writes: a write says which
-- version it read and is refused if another process wrote meanwhile.

CREATE TABLE tournaments (
    id          INTEGER PRIMARY KEY,
    guild_id    INTEGER NOT NULL,
    channel_id  INTEGER NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('signup', 'running', 'finished', 'cancelled')),
    state       TEXT    NOT NULL,                 -- JSON object
    version     INTEGER NOT NULL DEFAULT 0,
    champion_id INTEGER,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    finished_at TEXT
);

-- One open tournament per channel: inserts race on this index, not on a pre-check.
CREATE UNIQUE INDEX tournaments_one_open_per_channel
    ON tournaments (channel_id) WHERE status IN ('signup', 'running');

-- A server's open tournaments (its cap, /krig tournament status) and the finished ones' stats.
CREATE INDEX tournaments_guild ON tournaments (guild_id, status);

-- Who played in each tournament, written when it starts: /krig stats counts the finished ones.
CREATE TABLE tournament_players (
    tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    guild_id      INTEGER NOT NULL,
    user_id       INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, user_id)
) WITHOUT ROWID;

CREATE INDEX tournament_players_guild_user ON tournament_players (guild_id, user_id);
