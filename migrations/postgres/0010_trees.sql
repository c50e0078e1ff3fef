-- 0010: a [[trees]] commit's events are its own in each tree: the same
-- commit merged into two trees (linux-next, then mainline) is an event
-- in each, and reading a tree again records nothing twice.
DROP INDEX events_tree;
CREATE UNIQUE INDEX events_tree ON events (case_id, kind, tree, tree_commit)
    WHERE message_id IS NULL AND tree_commit IS NOT NULL;
