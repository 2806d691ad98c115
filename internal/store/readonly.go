package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrSchemaBehind is a read-only open of a database whose schema is older
// than this calsyncd's: it cannot be read as it is, and migrating it is a
// write.
var ErrSchemaBehind = errors.New("store: the database's schema is older than this calsyncd's")

// OpenReadOnly opens the database for a command that only reads it
// (`status`, `sync --dry-run`): nothing it does changes a byte of the
// state directory, also when it is killed, so a command run as root
// beside the service leaves no file the service cannot write.
//
// A SQLite database is read from a private copy: the file and its WAL,
// taken consistently, in a new temporary directory outside the state
// directory (migrated there when its schema is older), removed by Close.
// Opening the file itself would create its -wal and -shm and write the
// shared-memory index even to read. A missing database reads as an empty
// one. PostgreSQL sessions are read-only; a schema that is behind fails
// with ErrSchemaBehind (the daemon migrates it at its next start).
func OpenReadOnly(ctx context.Context, driver, dsn string) (*Store, error) {
	switch driver {
	case "sqlite", "":
		return openSQLiteCopy(ctx, dsn)
	case "postgres":
		return openPostgresReadOnly(ctx, dsn)
	}
	return nil, fmt.Errorf("store: unknown driver %q", driver)
}

// copyAttempts bounds how often a copy is retried because the daemon
// wrote while it was taken.
const copyAttempts = 8

func openSQLiteCopy(ctx context.Context, path string) (*Store, error) {
	dir, err := os.MkdirTemp("", "calsyncd-read-")
	if err != nil {
		return nil, fmt.Errorf("store: a private copy of the database: %w", err)
	}
	dst := filepath.Join(dir, "calsyncd.db")
	if err := copyDatabase(ctx, path, dst); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s, err := Open(ctx, "sqlite", dst)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.tempDir = dir
	return s, nil
}

// copyDatabase copies the database at src and its WAL to dst, as one
// state: the copy is taken again when the daemon wrote meanwhile (the
// file's size or time changed, or its WAL restarted), so a checkpoint
// half-copied never passes for a database. A torn last frame of the WAL
// is no harm: SQLite ignores frames whose checksums do not hold. A
// database that does not exist is copied as nothing (an empty store).
func copyDatabase(ctx context.Context, src, dst string) error {
	for attempt := 1; ; attempt++ {
		before, err := stamp(src)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: read the database: %w", err)
		}
		if err := copyFile(src, dst); err != nil {
			return err
		}
		os.Remove(dst + "-wal")
		if err := copyFile(src+"-wal", dst+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		after, err := stamp(src)
		if err == nil && after == before {
			return nil
		}
		if attempt == copyAttempts {
			return fmt.Errorf("store: the database changed during each of %d copies; try again", copyAttempts)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
}

// dbStamp is what changes when the database or its WAL is written over:
// the file's size and time, and the WAL header's salts (new at each
// restart of the log).
type dbStamp struct {
	size    int64
	mod     time.Time
	walHead [32]byte
}

func stamp(path string) (dbStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return dbStamp{}, err
	}
	st := dbStamp{size: fi.Size(), mod: fi.ModTime()}
	if f, err := os.Open(path + "-wal"); err == nil {
		_, _ = io.ReadFull(f, st.walHead[:])
		f.Close()
	}
	return st, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: a private copy of the database: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("store: a private copy of the database: %w", err)
	}
	return out.Close()
}

// openPostgresReadOnly opens sessions that refuse every write, and checks
// the schema is the one this calsyncd reads.
func openPostgresReadOnly(ctx context.Context, dsn string) (*Store, error) {
	db, secret, err := openPostgres(dsn, "default_transaction_read_only", "on")
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, read: db, driver: "postgres", Now: time.Now, readOnly: true}
	if err := s.firstPing(ctx); err != nil {
		db.Close()
		return nil, redact(fmt.Errorf("store: open postgres database: %w", err), secret)
	}
	var have int
	var exists bool
	err = s.read.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists)
	if err == nil && exists {
		have, err = s.SchemaVersion(ctx)
	}
	if err != nil {
		db.Close()
		return nil, redact(fmt.Errorf("store: read the schema version: %w", err), secret)
	}
	if want := latestVersion(); have < want {
		db.Close()
		return nil, fmt.Errorf("%w (version %d, this calsyncd reads %d): start the daemon once to migrate it, then try again", ErrSchemaBehind, have, want)
	}
	s.journal = newJournal(s, DefaultCommitWindow, DefaultCommitBatch)
	return s, nil
}

// latestVersion is the newest migration this build carries.
func latestVersion() int {
	entries, _ := fs.ReadDir(migrations, "migrations/postgres")
	n := 0
	for _, e := range entries {
		if bytes.HasSuffix([]byte(e.Name()), []byte(".sql")) {
			n++
		}
	}
	return n
}
