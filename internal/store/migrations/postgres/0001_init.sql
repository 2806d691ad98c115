-- The same schema as migrations/sqlite/0001_init.sql, column for column.
-- Times are unix milliseconds (0 = never) in BIGINT, so the same queries
-- serve SQLite and PostgreSQL. Key columns are COLLATE "C" so ORDER BY sorts
-- by bytes as SQLite's BINARY collation does, whatever the database's locale.

CREATE TABLE subscriptions (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    calendar           TEXT    NOT NULL,
    account            TEXT    NOT NULL DEFAULT 'default',
    state              TEXT    NOT NULL DEFAULT 'ACTIVE',
    consecutive_errors INTEGER NOT NULL DEFAULT 0,
    last_error_class   TEXT    NOT NULL DEFAULT '',
    last_error         TEXT    NOT NULL DEFAULT '',
    etag               TEXT    NOT NULL DEFAULT '',
    last_modified      TEXT    NOT NULL DEFAULT '',
    body_hash          TEXT    NOT NULL DEFAULT '',
    fetch_not_before   BIGINT  NOT NULL DEFAULT 0,
    guard_runs         INTEGER NOT NULL DEFAULT 0,
    held_deletes       INTEGER NOT NULL DEFAULT 0,
    last_reconcile_at  BIGINT  NOT NULL DEFAULT 0,
    next_run_at        BIGINT  NOT NULL DEFAULT 0,
    notes              TEXT    NOT NULL DEFAULT '',
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT  NOT NULL
);

CREATE TABLE mappings (
    subscription_id TEXT COLLATE "C" NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    uid             TEXT COLLATE "C" NOT NULL,
    recurrence_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
    event_id        TEXT    NOT NULL,
    generation      INTEGER NOT NULL DEFAULT 0,
    hash            TEXT    NOT NULL,
    etag            TEXT    NOT NULL DEFAULT '',
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL,
    PRIMARY KEY (subscription_id, uid, recurrence_id)
);

CREATE TABLE rejections (
    subscription_id TEXT COLLATE "C" NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    uid             TEXT COLLATE "C" NOT NULL,
    recurrence_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
    hash            TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    at              BIGINT  NOT NULL,
    PRIMARY KEY (subscription_id, uid, recurrence_id)
);

-- SQLite's INTEGER PRIMARY KEY AUTOINCREMENT: ids only grow, never reused.
CREATE TABLE runs (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id TEXT COLLATE "C" NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    started_at      BIGINT  NOT NULL,
    finished_at     BIGINT  NOT NULL DEFAULT 0,
    outcome         TEXT    NOT NULL DEFAULT 'running',
    created         INTEGER NOT NULL DEFAULT 0,
    updated         INTEGER NOT NULL DEFAULT 0,
    deleted         INTEGER NOT NULL DEFAULT 0,
    unchanged       INTEGER NOT NULL DEFAULT 0,
    deferred        INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    rejected        INTEGER NOT NULL DEFAULT 0,
    held_deletes    INTEGER NOT NULL DEFAULT 0,
    error_class     TEXT    NOT NULL DEFAULT '',
    error           TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_subscription ON runs (subscription_id, id);

-- What Google last told us about an account: its throttle window and the
-- spacing the pacer learned, so a restart does not hammer a throttled account.
CREATE TABLE accounts (
    name           TEXT COLLATE "C" PRIMARY KEY,
    throttle_until BIGINT  NOT NULL DEFAULT 0,
    throttle_class TEXT    NOT NULL DEFAULT '',
    throttle_level INTEGER NOT NULL DEFAULT 0,
    spacing_ms     BIGINT  NOT NULL DEFAULT 0,
    updated_at     BIGINT  NOT NULL
);

-- Work leases for several replicas sharing one database (one owner per
-- Google account at a time).
CREATE TABLE leases (
    account    TEXT COLLATE "C" PRIMARY KEY,
    owner      TEXT    NOT NULL,
    expires_at BIGINT  NOT NULL
);
