-- 0003: who gets the weekly digest besides `[digest] to`, and which of
-- its cases (a filter in the words `#lkp subscribe` takes). Written by
-- `#lkp subscribe` and `#lkp unsubscribe`; `[[digest.subscribers]]` in the
-- config come on top and are not stored.
CREATE TABLE subscriptions (
    address    TEXT COLLATE "C" PRIMARY KEY,
    filter     TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);
