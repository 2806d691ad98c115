package store

import (
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// ErrInvalidDSN is returned when a postgres DSN cannot be parsed. The DSN
// itself is never part of the error: it may hold a password.
var ErrInvalidDSN = errors.New("store: postgres dsn is not a valid connection string " +
	"(want postgres://user@host:5432/db?sslmode=... or key=value pairs such as \"host=... dbname=...\"; " +
	"it is not shown because it may hold a password)")

// Connection pool limits per replica: a sync writes one row at a time, so a
// few connections are plenty, and N replicas must fit in the server's
// max_connections.
const (
	postgresMaxOpenConns    = 8
	postgresMaxIdleConns    = 4
	postgresConnMaxIdleTime = 5 * time.Minute
	// Without connect_timeout pgx would wait on an unreachable server for as
	// long as the caller's context allows.
	postgresDefaultConnectTimeout = 10 * time.Second
)

// openPostgres opens a pool through pgx's database/sql adapter, so one Store
// serves both drivers. It returns the password (if any) so Open can make
// sure no error repeats it.
// params are run-time settings every session gets (name, value pairs).
func openPostgres(dsn string, params ...string) (db *sql.DB, secret string, err error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx quotes the whole DSN in parse errors and masks passwords only
		// on a best-effort basis, and a wrapped url.Error quotes it again:
		// report that it is invalid, not what it says.
		return nil, "", ErrInvalidDSN
	}
	for i := 0; i+1 < len(params); i += 2 {
		cfg.RuntimeParams[params[i]] = params[i+1]
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = postgresDefaultConnectTimeout
	}
	db = stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(postgresMaxOpenConns)
	db.SetMaxIdleConns(postgresMaxIdleConns)
	db.SetConnMaxIdleTime(postgresConnMaxIdleTime)
	return db, cfg.Password, nil
}

// redact hides secret in err's text while keeping err inspectable with
// errors.Is and errors.As. pgx's connect errors name the user, database and
// address but not the password; this is the guard should that ever change.
func redact(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{err: err, text: strings.ReplaceAll(err.Error(), secret, "xxxxx")}
}

type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
