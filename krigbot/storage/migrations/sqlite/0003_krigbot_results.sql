-- Games against Krigbot itself (issue 12): each human player's result, kept apart from `results`
-- so that such a game never reaches a leaderboard, a head-to-head or a pot record ("no
-- farming"); /krig stats shows these as a record of their own. Krigbot's own seat has no row.

CREATE TABLE krigbot_results (
    game_id     INTEGER NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    guild_id    INTEGER NOT NULL,     -- copied from games, as in results
    user_id     INTEGER NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('win', 'loss', 'draw')),
    finished_at TEXT    NOT NULL,
    PRIMARY KEY (game_id, user_id)
) WITHOUT ROWID;

CREATE INDEX krigbot_results_guild_user ON krigbot_results (guild_id, user_id, finished_at, outcome);
