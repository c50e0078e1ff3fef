-- 0005: how a message's sender was authenticated (DKIM, or ARC for a list
-- that rewrites From), for the fresh mail the bot acts on: verified once
-- when it arrives (keys rotate, so a later look could not repeat it) and
-- read back whenever the message is threaded again. NULL for every other
-- message: history and discussion are never verified.
ALTER TABLE messages ADD COLUMN auth TEXT COLLATE "C";        -- `dkim:<domain>`, `arc:<sealer>` or `none`
ALTER TABLE messages ADD COLUMN auth_author TEXT COLLATE "C"; -- the address it vouches for
ALTER TABLE messages ADD COLUMN auth_reason TEXT COLLATE "C"; -- what was found, in words
