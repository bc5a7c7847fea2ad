-- Best-of matches (rules §11: 002's "best av 3 eller 5"). A match is a run of games between the
-- same players; each game carries its place in the match in games.extra ('$.match': id, best_of,
-- game number, score before it). These tables record what the games alone cannot answer fast:
-- how far a match has been advanced, and who won it (for the leaderboard and stats).

CREATE TABLE matches (
    id          INTEGER PRIMARY KEY,              -- the id of the match's first game
    guild_id    INTEGER NOT NULL,
    channel_id  INTEGER NOT NULL,
    best_of     INTEGER NOT NULL CHECK (best_of IN (3, 5)),
    players     TEXT    NOT NULL,                 -- JSON list of user ids, seat order
    score       TEXT    NOT NULL,                 -- JSON list: games won per seat
    games       INTEGER NOT NULL CHECK (games >= 1), -- games finished and counted so far
    game_id     INTEGER NOT NULL,                 -- the newest game of the match
    updated_at  TEXT    NOT NULL,
    finished_at TEXT                              -- set when someone won the match
);

CREATE TABLE match_results (
    match_id    INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    guild_id    INTEGER NOT NULL,
    user_id     INTEGER NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('win', 'loss')),
    games_won   INTEGER NOT NULL CHECK (games_won >= 0),
    finished_at TEXT    NOT NULL,
    PRIMARY KEY (match_id, user_id)
) WITHOUT ROWID;

-- Match wins on the leaderboard and in a player's stats, optionally since a date.
CREATE INDEX match_results_guild_user ON match_results (guild_id, user_id, finished_at, outcome);

-- Start-up looks for finished match games whose match was not advanced (the bot stopped between
-- the two writes); only match games are in this index.
CREATE INDEX games_match ON games (json_extract(extra, '$.match.id'))
    WHERE json_extract(extra, '$.match.id') IS NOT NULL;
