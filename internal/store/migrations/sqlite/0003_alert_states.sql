-- The conditions the webhook alerts announced and that still last (a
-- subscription in ERROR, its deletes held, an account refused or locked out),
-- so a restarted daemon neither announces them again nor forgets when it last
-- reminded someone. Subject is a subscription id or an account name.
CREATE TABLE alert_states (
    condition   TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    since       INTEGER NOT NULL,
    notified_at INTEGER NOT NULL,
    PRIMARY KEY (condition, subject)
);
