-- The render stage (issue 17). A mapping's fields is a digest of each field
-- Google shows as last written, so a dry-run can say which fields an update
-- changes; a subscription's render_policy is the fingerprint of the policy
-- its validators were stored under (another policy reads the feed in full);
-- filtered, of a run and of a subscription (as of its last read of the
-- feed), is how many events the filters excluded.
ALTER TABLE mappings ADD COLUMN fields TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN render_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN filtered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN filtered INTEGER NOT NULL DEFAULT 0;
