-- 0012: a case whose replay an archive import put off to its end
-- (`replay_due`): its state, verdict, fix and last activity are behind
-- its events until the import ends, or, cut short, until the next
-- writer finishes it. Each case is replayed once per import, not at
-- each batch that adds to its events.
ALTER TABLE cases ADD COLUMN replay_due BIGINT NOT NULL DEFAULT 0;
CREATE INDEX cases_replay_due ON cases (id) WHERE replay_due = 1;
