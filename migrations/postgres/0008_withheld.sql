-- 0008: why the bot did not act on a fresh command mail it would
-- otherwise have answered: a reply budget was used up (`rate-limited:
-- ...`) or the sender was answering the bot's own mail in a loop
-- (`loop: ...`). Decided once, when the mail is first answered, and read
-- back whenever it is threaded again, so its commands stay recorded as
-- not done whatever order the thread's mail arrives in. NULL for every
-- other message.
ALTER TABLE messages ADD COLUMN withheld TEXT COLLATE "C";
