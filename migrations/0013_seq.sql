-- 0013: every message gets a number, in the order messages are stored
-- (`seq`: the highest plus one, by Tx::insert_messages), and the two
-- tables that hold rows only for unsettled messages are keyed by it
-- instead of by Message-ID. A message stored now lands at the end of
-- their B-trees, not on a random page of each: an import of a million
-- messages logged three to four random pages per message, most of them
-- these tables' Message-ID indexes. `thread_deps` is looked up by key
-- (what waits on an arrival) and by message (what it waits on), so it
-- keeps one index on its key; the index by message is its primary key.
ALTER TABLE messages ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE messages SET seq = rowid;
CREATE UNIQUE INDEX messages_seq ON messages (seq);

CREATE TABLE raw_messages_seq (
    seq   INTEGER PRIMARY KEY REFERENCES messages (seq),
    bytes BLOB NOT NULL -- PostgreSQL: BYTEA
);
INSERT INTO raw_messages_seq (seq, bytes)
    SELECT m.seq, r.bytes FROM raw_messages r JOIN messages m ON m.message_id = r.message_id;
DROP TABLE raw_messages;
ALTER TABLE raw_messages_seq RENAME TO raw_messages;

CREATE TABLE thread_deps_seq (
    seq     INTEGER NOT NULL REFERENCES messages (seq),
    dep_key TEXT NOT NULL,
    PRIMARY KEY (seq, dep_key)
) WITHOUT ROWID; -- PostgreSQL: an ordinary table
INSERT INTO thread_deps_seq (seq, dep_key)
    SELECT m.seq, d.dep_key FROM thread_deps d JOIN messages m ON m.message_id = d.message_id;
DROP TABLE thread_deps;
ALTER TABLE thread_deps_seq RENAME TO thread_deps;
CREATE INDEX thread_deps_key ON thread_deps (dep_key);
