-- 0014: a message's events are found through its memberships, not by an
-- index of their own. An event with a message is always in a case the
-- message is a member of (threading attaches before it puts events, and
-- detaching deletes them), so `case_messages_message` names its cases and
-- `events_by_message` (case, message, ...) its rows. `events_message` was
-- one more index keyed by Message-ID alone: an import of a million
-- messages put a row of it on a random page for every event.
--
-- A store threaded by an older lkpbot may hold events outside a
-- membership, which nothing would find now. They are taken away, their
-- cases replayed by the next writer and their messages threaded again at
-- its first import's end (`i:end`, `keys::DEP_IMPORT_END`), which puts
-- back what threading makes of them now.
INSERT INTO thread_deps (seq, dep_key)
    SELECT DISTINCT m.seq, 'i:end' FROM events e JOIN messages m ON m.message_id = e.message_id
    WHERE m.settled = 0 AND NOT EXISTS
        (SELECT 1 FROM case_messages cm WHERE cm.case_id = e.case_id AND cm.message_id = e.message_id)
    ON CONFLICT DO NOTHING;
UPDATE cases SET replay_due = 1 WHERE id IN
    (SELECT e.case_id FROM events e WHERE e.message_id IS NOT NULL AND NOT EXISTS
        (SELECT 1 FROM case_messages cm WHERE cm.case_id = e.case_id AND cm.message_id = e.message_id));
DELETE FROM events WHERE message_id IS NOT NULL AND NOT EXISTS
    (SELECT 1 FROM case_messages cm WHERE cm.case_id = events.case_id AND cm.message_id = events.message_id);
DROP INDEX events_message;
