-- The render stage (issue 17). A mapping's fields is a digest of each field
-- Google shows as last written, so a dry-run can say which fields an update
-- changes; a subscription's render_policy is the fingerprint of the policy
-- its validators were stored under (another policy reads the feed in full);
-- a run's filtered is how many events the filters excluded.
ALTER TABLE mappings ADD COLUMN fields TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN render_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN filtered INTEGER NOT NULL DEFAULT 0;
