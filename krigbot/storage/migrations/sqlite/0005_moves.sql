-- Every move a game has had (issue 11): a Steal War battle's moves leave the round alone, so
-- two processes holding one shard for a moment could both save a move made on the same copy,
-- and the second would overwrite the first. A save says how many moves the game had when its
-- writer read it, and is refused if another process saved one meanwhile. NULL: a game saved
-- before this column, checked from its next save on.
ALTER TABLE games ADD COLUMN moves INTEGER;
