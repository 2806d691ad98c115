-- When the feed must be read in full again although it has not changed
-- (Unix milliseconds, 0: never): the window moves with time, and the last
-- render left out occurrences beyond its end (events past it, a second
-- RRULE's RDATEs written so far, a series written as single events) that
-- only a new render writes.
ALTER TABLE subscriptions ADD COLUMN reread_at BIGINT NOT NULL DEFAULT 0;
