-- Games against Krigbot itself, as SQLite's 0003: each human player's result, kept apart from
-- `results` so that such a game never reaches a leaderboard, a head-to-head or a pot record.

CREATE TABLE krigbot_results (
    game_id     BIGINT  NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    guild_id    BIGINT  NOT NULL,     -- copied from games, as in results
    user_id     BIGINT  NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('win', 'loss', 'draw')),
    finished_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (game_id, user_id)
);

CREATE INDEX krigbot_results_guild_user ON krigbot_results (guild_id, user_id, finished_at, outcome);
