-- 0001 (PostgreSQL): the schema of ../0001_init.sql in PostgreSQL's
-- DDL; the comments there explain each table. Each file here has the
-- version of its SQLite twin and differs only in types: BIGINT for
-- INTEGER (sqlx reads i64 from BIGINT alone), DOUBLE PRECISION for REAL,
-- BYTEA for BLOB, identity columns for INTEGER PRIMARY KEY (but cases.id),
-- and TEXT COLLATE "C" so that ORDER BY sorts as SQLite's byte-wise
-- BINARY collation does, whatever the database's locale.

-- Every message seen, once: a message fetched twice, or received from two
-- lists, is one row. Unrelated list traffic stays here as one small row
-- (so a reply to it is known to be no case's), without its bytes.
CREATE TABLE messages (
    message_id TEXT COLLATE "C" PRIMARY KEY,
    kind       TEXT COLLATE "C" NOT NULL,
    subject    TEXT COLLATE "C" NOT NULL,
    from_addr  TEXT COLLATE "C",
    date       BIGINT,
    -- when it was fetched or read: dates its events when it has no Date
    fetched_at BIGINT NOT NULL,
    -- how many problems reading or classifying it raised
    problems   BIGINT NOT NULL DEFAULT 0,
    -- 1: in no case and never will be (unrelated list traffic whose
    -- ancestors are all settled too). Settled is for ever, so anyone may
    -- cache it; threading never looks at a settled message again.
    settled    BIGINT NOT NULL DEFAULT 0
);

-- The bytes as received (at most the source's cap), for every message
-- that is not settled: case messages (a later lkpbot may classify them
-- again) and messages whose threading may still change (they are threaded
-- again from these bytes).
CREATE TABLE raw_messages (
    message_id TEXT COLLATE "C" PRIMARY KEY REFERENCES messages (message_id),
    bytes      BYTEA NOT NULL
);

-- What the threading of a message depends on, so it is threaded again
-- when that changes, whatever order messages arrive in: `m:<id>` another
-- message (an ancestor not yet settled or not yet here, a message a
-- `Closes:` link names), `s:<key>` the cases with a subject key, `c:<sha7>`
-- the cases of a commit. A settled message has none.
CREATE TABLE thread_deps (
    dep_key    TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL REFERENCES messages (message_id),
    PRIMARY KEY (dep_key, message_id)
);
CREATE INDEX thread_deps_message ON thread_deps (message_id);

-- One tracked regression (or improvement, build failure): opened by a
-- robot report. state, updated_at, verdict and the fix columns are the
-- replay of the case's events, kept here for listing.
CREATE TABLE cases (
    -- numbered as SQLite numbers its rowids (the highest plus one, by
    -- Tx::open_case), so the same mail gives the same case ids on both
    id                BIGINT PRIMARY KEY,
    kind              TEXT COLLATE "C" NOT NULL,
    state             TEXT COLLATE "C" NOT NULL,
    title             TEXT COLLATE "C" NOT NULL,
    report_message_id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES messages (message_id),
    -- who the report was sent to (the commit's author, its committer),
    -- space separated, lower-cased
    report_to         TEXT COLLATE "C" NOT NULL DEFAULT '',
    opened_at         BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    -- full SHA when the report gives one, else its abbreviation
    commit_sha        TEXT COLLATE "C",
    -- the first seven hex digits: every abbreviation of the commit shares them
    commit_prefix     TEXT COLLATE "C",
    commit_subject    TEXT COLLATE "C",
    tree              TEXT COLLATE "C",
    branch            TEXT COLLATE "C",
    testcase          TEXT COLLATE "C",
    metric            TEXT COLLATE "C",
    change_pct        DOUBLE PRECISION,
    direction         TEXT COLLATE "C",
    signature         TEXT COLLATE "C",
    -- the normalised robot subject (subject rung) and patch subject
    -- without version (same-patch relations)
    subject_key       TEXT COLLATE "C",
    patch_key         TEXT COLLATE "C",
    verdict           TEXT COLLATE "C",
    fix_commit        TEXT COLLATE "C",
    fix_message_id    TEXT COLLATE "C",
    custom_title      TEXT COLLATE "C"
);
CREATE INDEX cases_commit_prefix ON cases (commit_prefix);
CREATE INDEX cases_subject_key ON cases (subject_key);
CREATE INDEX cases_patch_key ON cases (patch_key);
CREATE INDEX cases_state ON cases (state);

-- Which messages belong to which case, and the rung that put them there.
-- A message can be in several cases (a fix closing two reports).
CREATE TABLE case_messages (
    case_id    BIGINT NOT NULL REFERENCES cases (id),
    message_id TEXT COLLATE "C" NOT NULL REFERENCES messages (message_id),
    strategy   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (case_id, message_id)
);
CREATE INDEX case_messages_message ON case_messages (message_id);

-- Everything that happened to a case, with its message (none for a stale
-- mark) and time. The case's state is the replay of these in time order.
-- Each event has a natural key, so threading a message again changes
-- only what differs and a later outbox can derive a stable Message-ID
-- from it: (case, message, kind, seq) where seq counts the message's
-- events of that kind in the case, and (case, at) for stale marks.
CREATE TABLE events (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    case_id    BIGINT NOT NULL REFERENCES cases (id),
    at         BIGINT NOT NULL,
    kind       TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" REFERENCES messages (message_id),
    seq        BIGINT NOT NULL DEFAULT 0,
    verdict    TEXT COLLATE "C",
    fix_commit TEXT COLLATE "C",
    note       TEXT COLLATE "C"
);
CREATE UNIQUE INDEX events_by_message ON events (case_id, message_id, kind, seq) WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX events_stale ON events (case_id, at) WHERE kind = 'stale';
CREATE INDEX events_case ON events (case_id, at);
CREATE INDEX events_message ON events (message_id);

-- Every robot report's extracted facts, the whole comparison table
-- included (JSON). Facts of the message alone: its cases are in
-- case_messages.
CREATE TABLE reports (
    message_id TEXT COLLATE "C" PRIMARY KEY REFERENCES messages (message_id),
    kind       TEXT COLLATE "C" NOT NULL,
    facts      TEXT COLLATE "C" NOT NULL
);

-- Retest results, one row per fix column.
CREATE TABLE retests (
    message_id TEXT COLLATE "C" NOT NULL REFERENCES messages (message_id),
    idx        BIGINT NOT NULL,
    fix_commit TEXT COLLATE "C" NOT NULL,
    metric     TEXT COLLATE "C" NOT NULL,
    verdict    TEXT COLLATE "C",
    facts      TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (message_id, idx)
);

-- Branch build summaries: recorded, not cases.
CREATE TABLE build_summaries (
    message_id TEXT COLLATE "C" PRIMARY KEY REFERENCES messages (message_id),
    date       BIGINT,
    status     TEXT COLLATE "C",
    tree       TEXT COLLATE "C",
    branch     TEXT COLLATE "C",
    head       TEXT COLLATE "C",
    facts      TEXT COLLATE "C" NOT NULL
);

-- Where each source has got to (an IMAP mailbox's UIDVALIDITY and last
-- UID, an mbox's offset), written in the transaction that stores the
-- messages up to there: a crash loses nothing and repeats nothing.
CREATE TABLE checkpoints (
    source     TEXT COLLATE "C" PRIMARY KEY,
    token      TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The write version (store::db::write_version): every write transaction
-- counts it up under the write lock, so a writer knows whether another
-- one committed since its last (SQLite has PRAGMA data_version).
CREATE TABLE lkpbot_writes (
    n BIGINT NOT NULL
);
INSERT INTO lkpbot_writes (n) VALUES (0);
