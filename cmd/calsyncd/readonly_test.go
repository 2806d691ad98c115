package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// stateHash is every file under dir with its mode, time and content: what
// a read-only command must leave exactly as it was.
func stateHash(t *testing.T, dir string) string {
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
		line := strings.TrimPrefix(p, dir) + " " + fi.Mode().String() + " " + fi.ModTime().String()
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

// TestReadOnlyCommandsChangeNoByteOfTheStateDirectory: `sync --dry-run`
// and `status` leave every file of the state directory as it was — on
// the current schema, on an older one (which they must not migrate), and
// when the dry-run is killed half-way.
func TestReadOnlyCommandsChangeNoByteOfTheStateDirectory(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	api := httptest.NewServer(fake)
	defer api.Close()
	feedBody, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	var hang atomic.Bool
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	defer close(release)
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write(feedBody)
	}))
	defer feeds.Close()

	for _, schema := range []string{"current", "older"} {
		t.Run(schema, func(t *testing.T) {
			hang.Store(false)
			dir := t.TempDir()
			cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
subscriptions:
  - id: team
    url: `+feeds.URL+`/team.ics
    calendar: team@example.com
`)
			if _, stderr, code := run(t, "sync", "--config", cfg); code != 0 {
				t.Fatalf("sync: %d\n%s", code, stderr)
			}
			state := filepath.Join(dir, "state")
			if schema == "older" {
				db, err := sql.Open("sqlite3", filepath.Join(state, "calsyncd.db"))
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range []string{`DROP TABLE owners`, `DELETE FROM schema_migrations WHERE version = 8`} {
					if _, err := db.Exec(q); err != nil {
						t.Fatal(err)
					}
				}
				db.Close()
			}
			// The feed changes, so the preview has something to say.
			writeFile(t, dir, "config.yaml", strings.Replace(readFile(t, cfg), "calendar: team@example.com", "calendar: team@example.com\n    color: banana", 1))
			want := stateHash(t, state)
			for _, args := range [][]string{
				{"sync", "--config", cfg, "--dry-run"},
				{"sync", "--config", cfg, "--dry-run", "--json"},
				{"status", "--config", cfg},
				{"status", "--config", cfg, "--json"},
			} {
				out, stderr, code := run(t, args...)
				if code != 0 {
					t.Errorf("%v: code %d\n%s\n%s", args, code, out, stderr)
				}
				if args[0] == "sync" && !strings.Contains(out, "update") {
					t.Errorf("%v previews nothing:\n%s", args, out)
				}
				if got := stateHash(t, state); got != want {
					t.Fatalf("%v changed the state directory:\nbefore\n%s\nafter\n%s", args, want, got)
				}
			}

			// Killed while it waits for the feed, with the database open.
			hang.Store(true)
			var log syncBuffer
			cmd := calsyncdCmd(t, &log, "sync", "--config", cfg, "--dry-run")
			cmd.Env = append(cmd.Env, "TMPDIR="+t.TempDir())
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the dry-run never fetched\n%s", log.String())
			}
			cmd.Process.Kill()
			cmd.Wait()
			if got := stateHash(t, state); got != want {
				t.Fatalf("a killed dry-run changed the state directory:\nbefore\n%s\nafter\n%s", want, got)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatusNeedsNoFeedSecret: status fetches nothing, so it runs as the
// service's user without the service's environment file — but not
// without what it reads, the database's address.
func TestStatusNeedsNoFeedSecret(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
status:
  token: ${CALSYNCD_TEST_UNSET_STATUS_TOKEN}
subscriptions:
  - id: holidays
    url: https://feeds.invalid/h.ics?token=${CALSYNCD_TEST_UNSET_FEED_TOKEN}
    calendar: primary
    headers:
      X-Api-Key: ${CALSYNCD_TEST_UNSET_KEY}
alerts:
  - url: ${CALSYNCD_TEST_UNSET_HOOK}
`)
	out, stderr, code := run(t, "status", "--config", cfg)
	if code != 0 || !strings.Contains(out, "holidays") {
		t.Fatalf("status without the feed secrets: code %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "calsyncd.db")); !os.IsNotExist(err) {
		t.Errorf("status created the database (%v)", err)
	}
	pg := writeFile(t, dir, "pg.yaml", `state_dir: state
store:
  driver: postgres
  dsn: ${CALSYNCD_TEST_UNSET_DSN}
subscriptions:
  - id: holidays
    url: https://feeds.invalid/h.ics?token=${CALSYNCD_TEST_UNSET_FEED_TOKEN}
    calendar: primary
`)
	_, stderr, code = run(t, "status", "--config", pg)
	if code == 0 || !strings.Contains(stderr, "pg.yaml:4: store.dsn") || !strings.Contains(stderr, "CALSYNCD_TEST_UNSET_DSN") ||
		strings.Contains(stderr, "FEED_TOKEN") {
		t.Errorf("status without the database's DSN: code %d\n%s", code, stderr)
	}
}
