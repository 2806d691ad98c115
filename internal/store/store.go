// Package store persists calsyncd's state in one database: subscription
// state, event mappings, rejections, the history of sync runs, per-account
// throttle memory and work leases. SQLite (one file in state_dir) is the
// default; schema changes are versioned migrations embedded in the binary.
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
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver
)

//go:embed migrations
var migrations embed.FS

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("store: not found")

// Store is the state database.
type Store struct {
	db     *sql.DB
	driver string
	// Now is read once per write; tests replace it.
	Now func() time.Time
}

// Open opens (creating if needed) the database and applies pending
// migrations. driver is "sqlite" (dsn: a file path) or another registered
// dialect.
func Open(ctx context.Context, driver, dsn string) (*Store, error) {
	var (
		db  *sql.DB
		err error
	)
	switch driver {
	case "sqlite", "":
		driver = "sqlite"
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			return nil, fmt.Errorf("store: create state directory: %w", err)
		}
		q := url.Values{}
		q.Set("_journal_mode", "WAL")
		q.Set("_busy_timeout", "10000")
		q.Set("_foreign_keys", "on")
		q.Set("_txlock", "immediate")
		q.Set("_synchronous", "FULL")
		db, err = sql.Open("sqlite3", "file:"+dsn+"?"+q.Encode())
	default:
		opener, ok := dialects[driver]
		if !ok {
			return nil, fmt.Errorf("store: unknown driver %q", driver)
		}
		db, err = opener(dsn)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	s := &Store{db: db, driver: driver, Now: time.Now}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s database: %w", driver, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// dialects lets other drivers (PostgreSQL) register an opener.
var dialects = map[string]func(dsn string) (*sql.DB, error){}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Driver names the database driver in use.
func (s *Store) Driver() string { return s.driver }

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
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
	for _, name := range names {
		version, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with a number", name)
		}
		if err := s.applyMigration(ctx, dir+"/"+name, version); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, path string, version int) error {
	body, err := migrations.ReadFile(path)
	if err != nil {
		return fmt.Errorf("store: read migration: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin migration %d: %w", version, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), version).Scan(&n); err != nil {
		return fmt.Errorf("store: check migration %d: %w", version, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return fmt.Errorf("store: apply migration %s: %w", path, err)
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), version, ms(s.Now())); err != nil {
		return fmt.Errorf("store: record migration %d: %w", version, err)
	}
	return tx.Commit()
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

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, s.rebind(q), args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.rebind(q), args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.rebind(q), args...)
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
