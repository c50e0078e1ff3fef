-- 0011: one-time upgrades of what a store already holds, left by a
-- migration for the writer to do when it opens the store (a name per
-- task; the row goes when the task is done, in the transaction that
-- does it). `hyperkitty-keys`: a robot report stored before reports
-- offered their HyperKitty id (`h:` in message_keys) gets it, so a
-- lists.01.org link finds it without the report being read again;
-- `hyperkitty-rethread`: then what waited on such a key is threaded
-- again.
CREATE TABLE store_tasks (
    name TEXT PRIMARY KEY
);
INSERT INTO store_tasks (name) VALUES ('hyperkitty-keys');
