package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/store"
)

// hashDir is every file under dir with its mode and content hash: a
// read-only command must leave it exactly as it was.
func hashDir(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := strings.TrimPrefix(p, dir) + " " + fi.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:8])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestAReadOnlyOpenChangesNoByteOfTheStateDirectory(t *testing.T) {
	ctx := context.Background()
	older := func(t *testing.T, path string) {
		// The release before owners: migration 8 not applied.
		db, err := sql.Open("sqlite3", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{`DROP TABLE owners`, `DELETE FROM schema_migrations WHERE version = 8`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, path string)
		owner  string
	}{
		{"current schema", func(*testing.T, string) {}, "alpha"},
		{"older schema", older, ""},
		{"no database yet", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			path := filepath.Join(dir, "calsyncd.db")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				s, err := store.Open(ctx, "sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.ClaimOwner(ctx, "alpha", "host"); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				tc.before(t, path)
			}
			want := hashDir(t, dir)
			tmp := os.TempDir()
			beforeTmp, _ := filepath.Glob(filepath.Join(tmp, "calsyncd-read-*"))
			ro, err := store.OpenReadOnly(ctx, "sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			owner, err := ro.Owner(ctx, "", "")
			if err != nil || owner.Name != tc.owner {
				t.Errorf("owner = %+v, %v; want %q", owner, err, tc.owner)
			}
			if got := hashDir(t, dir); got != want {
				t.Errorf("open changed the state directory:\nbefore\n%s\nafter\n%s", want, got)
			}
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			if got := hashDir(t, dir); got != want {
				t.Errorf("close changed the state directory:\nbefore\n%s\nafter\n%s", want, got)
			}
			if afterTmp, _ := filepath.Glob(filepath.Join(tmp, "calsyncd-read-*")); len(afterTmp) != len(beforeTmp) {
				t.Errorf("the private copy outlived Close: %v", afterTmp)
			}
		})
	}
}

// A daemon's commits still in its WAL are in what a read-only open sees.
func TestAReadOnlyOpenSeesWhatIsStillInTheWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "calsyncd.db")
	s, err := store.Open(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ClaimOwner(ctx, "in-the-wal", "host"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the commit is not in the WAL: %v", err)
	}
	ro, err := store.OpenReadOnly(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if o, err := ro.Owner(ctx, "", ""); err != nil || o.Name != "in-the-wal" {
		t.Errorf("owner = %+v, %v", o, err)
	}
}

func TestAReadOnlyPostgresStoreRefusesWritesAndAnOlderSchema(t *testing.T) {
	ctx := context.Background()
	db := freshPostgres(t)
	s := db.open(t)
	if _, err := s.ClaimOwner(ctx, "alpha", "host"); err != nil {
		t.Fatal(err)
	}
	ro, err := store.OpenReadOnly(ctx, db.driver, db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := ro.Owner(ctx, "", ""); err != nil || o.Name != "alpha" {
		t.Errorf("owner = %+v, %v", o, err)
	}
	if _, err := ro.ClaimOwner(ctx, "beta", "host"); err == nil {
		t.Error("a read-only store took a write")
	}
	ro.Close()
	if o, _ := s.Owner(ctx, "", ""); o.Name != "alpha" {
		t.Errorf("owner after the refused write = %q", o.Name)
	}

	empty := freshPostgres(t)
	if _, err := store.OpenReadOnly(ctx, empty.driver, empty.dsn); !errors.Is(err, store.ErrSchemaBehind) {
		t.Errorf("read-only open of an unmigrated database: %v, want ErrSchemaBehind", err)
	}
}
