package main

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// freshSchema creates a schema of its own on the test PostgreSQL server and
// returns a DSN using it, or skips when no server is configured.
func freshSchema(t *testing.T) (string, *sql.DB) {
	t.Helper()
	dsn := os.Getenv("CALSYNCD_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("set CALSYNCD_TEST_POSTGRES_DSN (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the replica tests; .ci/run does")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "calsyncd_replicas_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("CALSYNCD_TEST_POSTGRES_DSN must be a postgres:// URL for this test: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), admin
}

// accountOf maps a calendar id "a<k>-s<j>@example.com" to its account.
func accountOf(cal string) string {
	if i := strings.IndexByte(cal, '-'); i > 0 {
		return cal[:i]
	}
	return ""
}

// TestReplicasShareOneDatabase runs three replicas on one PostgreSQL
// database, 20 subscriptions over 4 accounts, kills the replica doing the
// work mid-run, and checks the others take its accounts over once its
// leases expire: every calendar converges, nothing is duplicated, and no
// account ever has more writes in flight than one pacer allows.
func TestReplicasShareOneDatabase(t *testing.T) {
	dsn, admin := freshSchema(t)
	const (
		accounts = 4
		perAcct  = 5
		events   = 30
	)
	fake := gcalfake.New(gcalfake.Options{Seed: 5})
	var (
		mu          sync.Mutex
		inflight    = map[string]int{}
		maxInflight = map[string]int{}
	)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fake.ServeHTTP(w, r)
			return
		}
		parts := strings.Split(r.URL.Path, "/")
		acct := ""
		if len(parts) > 4 {
			cal, _ := url.PathUnescape(parts[4])
			acct = accountOf(cal)
		}
		mu.Lock()
		inflight[acct]++
		maxInflight[acct] = max(maxInflight[acct], inflight[acct])
		mu.Unlock()
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, r)
		time.Sleep(3 * time.Millisecond) // Google takes a moment; a killed replica leaves writes unanswered
		mu.Lock()
		inflight[acct]--
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer api.Close()
	feedBody := generatedFeed(events)
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(feedBody)) }))
	defer feeds.Close()

	var subs strings.Builder
	var calendars []string
	for k := 0; k < accounts; k++ {
		for j := 0; j < perAcct; j++ {
			cal := fmt.Sprintf("a%d-s%d@example.com", k, j)
			calendars = append(calendars, cal)
			fake.AddCalendar(cal, "UTC")
			acct := fmt.Sprintf("a%d", k)
			if k == 0 {
				acct = "default"
			}
			fmt.Fprintf(&subs, "  - id: a%d-s%d\n    url: %s/feed-%d-%d.ics\n    calendar: %s\n    account: %s\n", k, j, feeds.URL, k, j, cal, acct)
		}
	}
	dir := t.TempDir()
	replicas := make([]*exec.Cmd, 3)
	logs := make([]*syncBuffer, 3)
	for i := range replicas {
		cfg := writeFile(t, dir, fmt.Sprintf("replica%d.yaml", i), `state_dir: state`+fmt.Sprint(i)+`
listen: `+freeAddr(t)+`
schedule: "@every 2s"
log:
  format: json
store:
  driver: postgres
  dsn: `+dsn+`
  lease_ttl: 2s
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
accounts:
  - name: a1
  - name: a2
  - name: a3
writer:
  spacing: 4ms
  concurrency: 2
subscriptions:
`+subs.String())
		logs[i] = &syncBuffer{}
		replicas[i] = calsyncdCmd(t, &bytes.Buffer{}, "run", "--config", cfg)
		replicas[i].Stdout, replicas[i].Stderr = logs[i], logs[i]
		replicas[i].Env = append(replicas[i].Env, fmt.Sprintf("CALSYNCD_REPLICA_ID=replica%d", i))
		if err := replicas[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	stopped := make([]bool, 3)
	defer func() {
		for i, c := range replicas {
			if !stopped[i] {
				c.Process.Kill()
				c.Wait()
			}
		}
		if t.Failed() {
			for i, l := range logs {
				t.Logf("replica %d log:\n%s", i, l.String())
			}
		}
	}()

	// Wait until writes are under way, then kill the replica doing them.
	deadline := time.Now().Add(30 * time.Second)
	for fake.Stats().ByOp["insert"] < 60 {
		if time.Now().After(deadline) {
			t.Fatal("no replica started writing")
		}
		time.Sleep(2 * time.Millisecond)
	}
	var victimOwner string
	if err := admin.QueryRow(`SELECT owner FROM ` + schemaOf(dsn) + `.leases ORDER BY account LIMIT 1`).Scan(&victimOwner); err != nil {
		t.Fatalf("read leases: %v", err)
	}
	victim := -1
	for i := range replicas {
		if strings.HasPrefix(victimOwner, fmt.Sprintf("replica%d/", i)) {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("lease owner %q is none of the replicas", victimOwner)
	}
	replicas[victim].Process.Signal(syscall.SIGKILL)
	replicas[victim].Wait()
	stopped[victim] = true
	killedAt := time.Now()
	insertsAtKill := fake.Stats().ByOp["insert"]

	// The survivors take over after the leases expire and converge.
	converged := func() bool {
		for _, cal := range calendars {
			if len(fake.Events(cal)) != events {
				return false
			}
		}
		return true
	}
	for !converged() {
		if time.Since(killedAt) > 60*time.Second {
			t.Fatalf("calendars did not converge within a minute of the kill")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if insertsAtKill >= accounts*perAcct*events {
		t.Fatalf("every event was written before the kill (%d inserts): the test proved nothing", insertsAtKill)
	}
	for _, cal := range calendars {
		seen := map[string]bool{}
		for _, ev := range fake.Events(cal) {
			uid := ev.ExtendedProperties.Private[gcalwriter.PropUID]
			if seen[uid] {
				t.Errorf("%s: duplicate of %s", cal, uid)
			}
			seen[uid] = true
		}
	}
	mu.Lock()
	for acct, n := range maxInflight {
		if n > 2 {
			t.Errorf("account %s had %d writes in flight at once, more than writer.concurrency 2", acct, n)
		}
	}
	mu.Unlock()
	rows, err := admin.Query(`SELECT account, owner FROM ` + schemaOf(dsn) + `.leases`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var acct, owner string
		rows.Scan(&acct, &owner)
		if owner == victimOwner {
			t.Errorf("account %s still leased to the killed replica", acct)
		}
	}
	rows.Close()
	// The survivors stop cleanly and give their leases back.
	for i, c := range replicas {
		if stopped[i] {
			continue
		}
		c.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("replica %d exit: %v", i, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("replica %d did not stop", i)
		}
		stopped[i] = true
	}
	var left int
	admin.QueryRow(`SELECT COUNT(*) FROM ` + schemaOf(dsn) + `.leases`).Scan(&left)
	if left != 0 {
		t.Errorf("%d leases left after every replica stopped", left)
	}
	t.Logf("killed %s after %d inserts; converged %v after the kill", victimOwner, insertsAtKill, time.Since(killedAt).Round(time.Millisecond))
}

func schemaOf(dsn string) string {
	u, _ := url.Parse(dsn)
	return u.Query().Get("search_path")
}
