// Package store persists calsyncd's state in one database: subscription
// state, event mappings, rejections, the history of sync runs, per-account
// throttle memory and work leases. SQLite (one file in state_dir) is the
// default; PostgreSQL lets several replicas share one database. The same
// queries serve both, and schema changes are versioned migrations embedded
// in the binary, one directory per driver.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" database/sql driver
)

//go:embed migrations
var migrations embed.FS

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("store: not found")

// Store is the state database.
//
// On SQLite every write goes through one connection (db), so the process
// never contends with itself for the file's write lock: "database is
// locked" cannot come from our own load, and the busy timeout is only for
// another process (a `calsyncd sync` beside the daemon). Reads use a
// small pool of their own (read), which WAL lets run beside the writer.
// On PostgreSQL both are the same pool. Mapping changes are group-committed
// (see journal).
type Store struct {
	db     *sql.DB // writes (SQLite: one connection)
	read   *sql.DB // reads (SQLite: read-only connections; PostgreSQL: db)
	driver string
	// Now is read once per write; tests replace it. Lease expiries written
	// by one replica are compared with another's Now, so replicas' clocks
	// must agree (NTP) to well within a lease's lifetime.
	Now func() time.Time

	journal *journal
	// commits counts the write transactions committed, each a disk flush
	// under synchronous=FULL (WAL appends under NORMAL, flushed at
	// checkpoints).
	commits atomic.Int64

	// tempDir is the private copy a read-only SQLite store reads (removed
	// by Close); readOnly marks PostgreSQL sessions that refuse writes.
	tempDir  string
	readOnly bool
}

// SQLite connection limits: one writer, a few readers. Every connection in
// a cgo call holds an OS thread, so these also bound the threads SQLite
// can hold however many subscriptions run.
const (
	sqliteReaders = 4
	// sqliteBusyTimeout is how long a write waits for another process's
	// write lock before it fails.
	sqliteBusyTimeout = 10 * time.Second
)

// Open opens (creating if needed) the database and applies pending
// migrations. driver is "sqlite" (dsn: a file path) or "postgres" (dsn: a
// postgres:// URL or a key=value connection string). Errors never quote a
// postgres DSN: it may hold a password.
func Open(ctx context.Context, driver, dsn string) (*Store, error) {
	var (
		db     *sql.DB
		secret string // text no error may show
		err    error
	)
	switch driver {
	case "sqlite", "":
		driver = "sqlite"
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			return nil, fmt.Errorf("store: create state directory: %w", err)
		}
		db, err = sql.Open("sqlite3", sqliteDSN(dsn, false))
		if err == nil {
			db.SetMaxOpenConns(1)
			db.SetMaxIdleConns(1)
			db.SetConnMaxIdleTime(0)
		}
	case "postgres":
		db, secret, err = openPostgres(dsn)
		if err != nil {
			return nil, err // already says what is wrong, without the DSN
		}
	default:
		return nil, fmt.Errorf("store: unknown driver %q", driver)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	s := &Store{db: db, read: db, driver: driver, Now: time.Now}
	if err := s.firstPing(ctx); err != nil {
		db.Close()
		return nil, redact(fmt.Errorf("store: open %s database: %w", driver, err), secret)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, redact(err, secret)
	}
	if driver == "sqlite" {
		// Opened after the writer has made the file WAL and migrated it.
		if s.read, err = sql.Open("sqlite3", sqliteDSN(dsn, true)); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open: %w", err)
		}
		s.read.SetMaxOpenConns(sqliteReaders)
		s.read.SetMaxIdleConns(sqliteReaders)
	}
	s.journal = newJournal(s, DefaultCommitWindow, DefaultCommitBatch)
	return s, nil
}

// sqliteDSN is the connection string of the writer or of a reader. WAL
// lets readers read while the writer writes; synchronous=NORMAL makes a
// commit an append to the WAL, flushed to disk at checkpoints: a power
// cut may lose the last commits (never the database), a crashed process
// loses none; lost mappings are recovered from Google (deterministic ids,
// 409 adoption). Write transactions take the write lock when they begin,
// so none fails half-way for want of it.
func sqliteDSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", strconv.Itoa(int(sqliteBusyTimeout.Milliseconds())))
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "NORMAL")
	if readOnly {
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + uriPath(path) + "?" + q.Encode()
}

// uriPath escapes what a file path may hold that a SQLite URI reads
// otherwise: "?" starts its query, "#" its fragment (SQLite drops it, so
// /srv/cal#1/calsyncd.db opened /srv/cal), "%" an escape.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// firstPing checks the database answers. A new SQLite file switches to WAL
// on its first connection, and a connection that loses that race to another
// process gets SQLITE_BUSY at once (SQLite skips the busy handler where
// waiting could deadlock); the loser succeeds a moment later, once the file
// is in WAL mode, so it is retried briefly.
func (s *Store) firstPing(ctx context.Context) error {
	const attempts, pause = 50, 20 * time.Millisecond
	for i := 1; ; i++ {
		err := s.db.PingContext(ctx)
		var sqliteErr sqlite3.Error
		if err == nil || i == attempts || !errors.As(err, &sqliteErr) || sqliteErr.Code != sqlite3.ErrBusy {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// Close commits what is queued and closes the database.
func (s *Store) Close() error {
	var err error
	if s.journal != nil {
		err = s.journal.close()
	}
	if s.read != s.db {
		err = errors.Join(err, s.read.Close())
	}
	err = errors.Join(err, s.db.Close())
	if s.tempDir != "" {
		err = errors.Join(err, os.RemoveAll(s.tempDir))
	}
	return err
}

// Commits is how many write transactions the store has committed: under
// synchronous=FULL each is one flush to disk; under NORMAL (our default)
// each is an append to the WAL, flushed at checkpoints.
func (s *Store) Commits() int64 { return s.commits.Load() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Driver names the database driver in use.
func (s *Store) Driver() string { return s.driver }

func (s *Store) migrate(ctx context.Context) error {
	err := s.inMigrationTx(ctx, func(tx *sql.Tx) error {
		if s.driver == "postgres" {
			// PostgreSQL checks the CREATE privilege even for CREATE TABLE
			// IF NOT EXISTS; a role limited to reading and writing rows must
			// still start once an owner has migrated the schema.
			var exists bool
			if err := tx.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil || exists {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create migrations table: %w", err)
	}
	dir := "migrations/" + s.driver
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return fmt.Errorf("store: no migrations for %s: %w", s.driver, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for i, name := range names {
		version, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with a number", name)
		}
		// Versions run 1, 2, 3… without gaps or twins: two branches that
		// each added "their" next migration must not merge into one that
		// silently skips the second.
		if version != i+1 {
			return fmt.Errorf("store: migration %s: want version %d (migrations are numbered 1, 2, 3… once each)", name, i+1)
		}
		if err := s.applyMigration(ctx, dir+"/"+name, version); err != nil {
			return err
		}
	}
	return nil
}

// inMigrationTx runs fn in a transaction that holds the migration lock, so
// replicas starting together apply each migration exactly once. On SQLite
// every write transaction already begins IMMEDIATE (one writer per file).
// On PostgreSQL a transaction-scoped advisory lock, keyed by the schema,
// serialises migrators; it is released by commit, rollback or a dropped
// connection, so a replica that dies mid-migration blocks no one.
func (s *Store) inMigrationTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.driver == "postgres" {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('calsyncd.migrate'), hashtext(COALESCE(current_schema(), '')))`); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	return s.commit(tx)
}

func (s *Store) applyMigration(ctx context.Context, path string, version int) error {
	body, err := migrations.ReadFile(path)
	if err != nil {
		return fmt.Errorf("store: read migration: %w", err)
	}
	err = s.inMigrationTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), version).Scan(&n); err != nil {
			return fmt.Errorf("check: %w", err)
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("apply %s: %w", path, err)
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), version, ms(s.Now())); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: migration %d: %w", version, err)
	}
	return nil
}

// rebind turns "?" placeholders into "$1".. for drivers that need them.
func (s *Store) rebind(q string) string {
	if s.driver == "sqlite" {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// exec runs one write statement on the writer, a transaction of its own.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := s.db.ExecContext(ctx, s.rebind(q), args...)
	if err == nil {
		s.commits.Add(1)
	}
	return res, err
}

// writeRow runs one write statement that returns a row (RETURNING) on the
// writer.
func (s *Store) writeRow(ctx context.Context, q string, args ...any) rowScanner {
	return countedRow{row: s.db.QueryRowContext(ctx, s.rebind(q), args...), commits: &s.commits}
}

type rowScanner interface{ Scan(dest ...any) error }

// countedRow counts the statement's commit once its row is read: the
// statement has run by then, whether it returned a row or not.
type countedRow struct {
	row     *sql.Row
	commits *atomic.Int64
}

func (r countedRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		r.commits.Add(1)
	}
	return err
}

// begin starts a write transaction on the writer; commit ends it.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) { return s.db.BeginTx(ctx, nil) }

func (s *Store) commit(tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		return err
	}
	s.commits.Add(1)
	return nil
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.read.QueryContext(ctx, s.rebind(q), args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.read.QueryRowContext(ctx, s.rebind(q), args...)
}

// ms converts a time to the stored form: unix milliseconds, 0 for zero.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts a stored time back.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// SchemaVersion is the highest migration applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.queryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
