-- 0014: a message's events are found through its memberships, not by an
-- index of their own. An event with a message is always in a case the
-- message is a member of (threading attaches before it puts events, and
-- detaching deletes them), so `case_messages_message` names its cases and
-- `events_by_message` (case, message, ...) its rows. `events_message` was
-- one more index keyed by Message-ID alone: an import of a million
-- messages put a row of it on a random page for every event.
DROP INDEX events_message;
