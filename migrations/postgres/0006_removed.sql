-- 0004: messages their archive removed (a public-inbox `d` commit: spam,
-- a takedown). A removed message is taken out of the store with what it
-- caused (its row, bytes, facts, memberships and events, the case it
-- opened) and never stored again, whichever source brings it back (an
-- epoch read again after a rewrite still has the message's own commit).
CREATE TABLE removed_messages (
    message_id TEXT COLLATE "C" PRIMARY KEY,
    removed_at BIGINT NOT NULL
);
