-- 0009: what happens to a case outside its thread (the lifecycle): the
-- fix applied, committed or merged into a tree, the culprit reverted, the
-- reported patch superseded by a later version.

-- Lifecycle events say where and by whom: the tree the fix went into (a
-- maintainer's branch, torvalds/linux.git, a stable tree, a [[trees]]
-- name), who applied or reverted it, the first tag that contains the
-- commit, and for an event a [[trees]] commit caused (no message) that
-- commit. (`by` is an SQL keyword, hence `by_addr`.)
ALTER TABLE events ADD COLUMN tree TEXT COLLATE "C";
ALTER TABLE events ADD COLUMN by_addr TEXT COLLATE "C";
ALTER TABLE events ADD COLUMN tag TEXT COLLATE "C";
ALTER TABLE events ADD COLUMN tree_commit TEXT COLLATE "C";
-- A tree commit's events in a case have a natural key of their own.
CREATE UNIQUE INDEX events_tree ON events (case_id, kind, tree_commit)
    WHERE message_id IS NULL AND tree_commit IS NOT NULL;

-- The keys a message offers to lifecycle mail that is not in its thread,
-- whatever its cases: a fix patch its title (`t:`) and the cover letter
-- of its series (`r:`), a pull request the titles of its shortlog
-- (`pt:`), a later version of a patch the patch it revises (`p:`), a
-- robot report the hyperkitty hash of its Message-ID (`h:`). Written once
-- with the message, for plain list traffic too (a pull request or a new
-- version is one small row here and keeps no bytes); `thread::keys` makes
-- them.
CREATE TABLE message_keys (
    key        TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL REFERENCES messages (message_id),
    PRIMARY KEY (key, message_id)
);
CREATE INDEX message_keys_message ON message_keys (message_id);

-- Reverts name the culprit by its subject.
CREATE INDEX cases_commit_subject ON cases (commit_subject);
