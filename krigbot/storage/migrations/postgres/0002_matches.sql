-- Best-of matches, as SQLite's 0002.

CREATE TABLE matches (
    id          BIGINT  PRIMARY KEY,              -- the id of the match's first game
    guild_id    BIGINT  NOT NULL,
    channel_id  BIGINT  NOT NULL,
    best_of     INTEGER NOT NULL CHECK (best_of IN (3, 5)),
    players     JSONB   NOT NULL,                 -- list of user ids, seat order
    score       JSONB   NOT NULL,                 -- games won per seat
    games       INTEGER NOT NULL CHECK (games >= 1), -- games finished and counted so far
    game_id     BIGINT  NOT NULL,                 -- the newest game of the match
    updated_at  TEXT COLLATE "C" NOT NULL,
    finished_at TEXT COLLATE "C"                  -- set when someone won the match
);

CREATE TABLE match_results (
    match_id    BIGINT  NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    guild_id    BIGINT  NOT NULL,
    user_id     BIGINT  NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('win', 'loss')),
    games_won   INTEGER NOT NULL CHECK (games_won >= 0),
    finished_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (match_id, user_id)
);

CREATE INDEX match_results_guild_user ON match_results (guild_id, user_id, finished_at, outcome);

-- Start-up looks for finished match games whose match was not advanced; only match games are
-- in this index (the expression is the one the query uses, so the planner can match it).
CREATE INDEX games_match ON games ((CAST(extra #>> '{match,id}' AS BIGINT)))
    WHERE CAST(extra #>> '{match,id}' AS BIGINT) IS NOT NULL;
