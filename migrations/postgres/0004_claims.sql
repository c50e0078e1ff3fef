-- 0004: sending each mail once when several processes share the store.
-- A sender claims a mail before it sends it: `claimed_by` names the
-- process, `claimed_until` is when the claim lapses (longer than one send
-- may take). Another sender takes only rows with no live claim, so two
-- senders never send one row, and a sender killed mid-send leaves its row
-- to whoever comes after the claim lapses. Claims are taken by a
-- conditional UPDATE of one row (portable: PostgreSQL re-checks the
-- condition on the row a concurrent claimer changed).
ALTER TABLE outbox ADD COLUMN claimed_by TEXT COLLATE "C";
ALTER TABLE outbox ADD COLUMN claimed_until BIGINT;
-- Why the last try failed: `server` (no server took the mail: it goes as
-- soon as a server answers again, whatever its backoff says) or `mail`
-- (this mail was refused; it waits out its own backoff).
ALTER TABLE outbox ADD COLUMN failure TEXT COLLATE "C";

-- The `run` processes using the store, so each can say when it is not
-- alone. A row is written when a run starts, touched while it runs and
-- deleted when it ends; a killed run's row is recognised by its age.
CREATE TABLE runs (
    owner      TEXT COLLATE "C" PRIMARY KEY, -- `<host>:<pid>:<start>`, as outbox.claimed_by
    host       TEXT COLLATE "C" NOT NULL,
    pid        BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL
);
