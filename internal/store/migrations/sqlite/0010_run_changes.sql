-- What each run wrote to Google, for the status page: the first
-- calsyncd.MaxRunChanges creates, updates and deletes of the run (its counts
-- in runs are whole), with the title and start written. They go with
-- their run when the retention prunes it.
CREATE TABLE run_changes (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    subscription_id TEXT NOT NULL,
    kind            TEXT    NOT NULL,
    uid             TEXT NOT NULL,
    recurrence_id   TEXT NOT NULL DEFAULT '',
    title           TEXT    NOT NULL DEFAULT '',
    starts_at       BIGINT  NOT NULL DEFAULT 0,
    all_day         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, seq)
);
-- A delete's title is the one its event was last written with.
CREATE INDEX run_changes_by_event ON run_changes (subscription_id, uid, recurrence_id, run_id);
