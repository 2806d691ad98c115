-- The names this installation has written its events under (calsyncd.Owner):
-- the current one goes into the marks and ids of every event written from
-- now on; the others were current before and stay recognised as ours.
CREATE TABLE owners (
    name       TEXT PRIMARY KEY,
    current    INTEGER NOT NULL DEFAULT 0,
    since      BIGINT NOT NULL
);
CREATE UNIQUE INDEX owners_one_current ON owners (current) WHERE current = 1;
