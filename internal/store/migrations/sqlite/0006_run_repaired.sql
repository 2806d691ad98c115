-- The owned events a reconcile found edited by hand in Google (a field
-- calsyncd writes: title, time, place, description, ...) and wrote back to
-- the feed's version, per run.
ALTER TABLE runs ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0;
