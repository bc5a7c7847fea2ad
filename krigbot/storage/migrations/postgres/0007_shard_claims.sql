-- Shards claimed with leases (KRIG_SHARDS=auto): each row is one shard, the process that holds
-- it, the epoch of that holding and when its lease runs out, by the database's clock. A process
-- renews its leases every few seconds; one that stops renewing (killed, paused, cut off from
-- the database) loses them when they run out, and another takes the shard with a new epoch.
-- Static KRIG_SHARDS lists leave this table empty. Not game data: `migrate_to` copies nothing.
CREATE TABLE shard_claims (
    shard      INTEGER     PRIMARY KEY,
    owner      TEXT        NOT NULL,
    epoch      BIGINT      NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- Each holding of a shard gets a number no holding before it had, so an epoch names one
-- process's tenure of one shard and nothing else; every write of a game looks its lease up by it.
CREATE SEQUENCE shard_claim_epochs;
CREATE UNIQUE INDEX shard_claims_epoch ON shard_claims (epoch);

-- The live processes of KRIG_SHARDS=auto, each renewed with its leases: how many share the
-- shards (and Discord's global REST limit) counts those whose time has not run out.
CREATE TABLE shard_members (
    owner      TEXT        PRIMARY KEY,
    expires_at TIMESTAMPTZ NOT NULL
);

-- The fence of every write of a game: true for a write that names no lease (static shards)
-- or whose lease is still the shard's and has not run out. A process that lost its shard
-- while it was paused or cut off writes nothing when it comes back.
CREATE FUNCTION krig_lease_holds(held BIGINT) RETURNS BOOLEAN
LANGUAGE sql VOLATILE AS $$
    SELECT held IS NULL OR EXISTS (
        SELECT 1 FROM shard_claims WHERE epoch = held AND expires_at > clock_timestamp()
    )
$$;
