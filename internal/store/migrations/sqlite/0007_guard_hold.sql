-- What the mass-delete guard holds: a digest naming the held deletes (a run
-- asking for others starts the confirmation again), the events mapped when
-- the hold began (the held deletes are weighed against it), and whether
-- the deletes follow a change of the configuration (only the operator
-- confirms those).
ALTER TABLE subscriptions ADD COLUMN guard_held TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN guard_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN guard_by_config INTEGER NOT NULL DEFAULT 0;
