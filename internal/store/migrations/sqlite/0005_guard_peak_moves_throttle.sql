-- The mass-delete guard's high-water mark: the most events mapped within the
-- window over the recent period, and when it was last reached, so a feed that
-- shrinks a little every run cannot slip past the guard one step at a time.
ALTER TABLE subscriptions ADD COLUMN guard_peak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN guard_peak_at INTEGER NOT NULL DEFAULT 0;
-- Calendars a subscription moved away from (its calendar: or account:
-- changed) whose events it still has to delete: a JSON list of
-- {"calendar", "account"}, '' for none.
ALTER TABLE subscriptions ADD COLUMN vacating TEXT NOT NULL DEFAULT '';
-- Since when the feed server has answered every fetch with 429 (0: it has
-- not), so a feed that throttles us for days is said to.
ALTER TABLE subscriptions ADD COLUMN feed_throttled_since INTEGER NOT NULL DEFAULT 0;
