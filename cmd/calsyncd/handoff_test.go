package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/store"
)

// liveWorld is an emulator, a feed server whose body the test sets, and a
// configuration for one subscription; the daemon runs in this process
// (runCommand.Run, as `calsyncd run` does), so `calsyncd sync` can hand
// subscriptions to it.
type liveWorld struct {
	fake   *gcalfake.Server
	dir    string
	config string

	mu   sync.Mutex
	body string
}

const liveCalendar = "team@example.com"

func newLiveWorld(t *testing.T, extra string) *liveWorld {
	t.Helper()
	w := &liveWorld{fake: gcalfake.New(gcalfake.Options{Seed: 5}), dir: t.TempDir()}
	w.fake.AddCalendar(liveCalendar, "UTC")
	api := httptest.NewServer(w.fake)
	t.Cleanup(api.Close)
	feeds := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		defer w.mu.Unlock()
		rw.Write([]byte(w.body))
	}))
	t.Cleanup(feeds.Close)
	w.config = writeFile(t, w.dir, "config.yaml", `state_dir: state
listen: `+freeAddr(t)+`
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
writer:
  spacing: 1ms
  retry_base: 1ms
  retry_cap: 4ms
subscriptions:
  - id: team
    url: `+feeds.URL+`/team.ics
    calendar: `+liveCalendar+`
`+extra)
	return w
}

func (w *liveWorld) setFeed(body string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.body = body
}

// openStore opens the world's state database beside whoever else has it open.
func (w *liveWorld) openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(w.dir, "state", "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startDaemon runs `calsyncd run` in this process until the test ends and
// waits for its status endpoint to answer.
func (w *liveWorld) startDaemon(t *testing.T) *syncBuffer {
	t.Helper()
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	m := &Main{Stdin: strings.NewReader(""), Stdout: logs, Stderr: logs}
	go func() { done <- m.Run(ctx, []string{"run", "--config", w.config}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon: %v\n%s", err, logs.String())
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the daemon did not stop\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "calsyncd running") {
		select {
		case err := <-done:
			t.Fatalf("daemon exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never came up\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return logs
}

// lastRun is the subscription's newest run, once it has finished.
func lastRun(t *testing.T, st *store.Store) calsyncd.Run {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		runs, err := st.Runs(context.Background(), "team", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && !runs[0].FinishedAt.IsZero() {
			return runs[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished run: %+v", runs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSyncHandOffCarriesTheFlags: `calsyncd sync` with a flag, while a
// daemon holds the account, hands the subscription to the daemon, and the
// daemon's run does what the flag says (it used to run a
// plain sync and drop the flag).
func TestSyncHandOffCarriesTheFlags(t *testing.T) {
	t.Run("allow-deletes", func(t *testing.T) {
		w := newLiveWorld(t, "")
		w.setFeed(generatedFeed(30))
		if _, errs, code := run(t, "sync", "--config", w.config); code != 0 {
			t.Fatalf("first sync: %d\n%s", code, errs)
		}
		w.setFeed(generatedFeed(5))
		if out, errs, code := run(t, "sync", "--config", w.config); code != 0 || !strings.Contains(out, "25\n") {
			t.Fatalf("shrunk feed: %d, want 25 deletes held\n%s%s", code, out, errs)
		}
		w.startDaemon(t)
		out, errs, code := run(t, "sync", "--config", w.config, "--allow-deletes", "team")
		if code != 0 || !strings.Contains(errs, "handed the sync to it") {
			t.Fatalf("sync --allow-deletes: %d\n%s%s", code, out, errs)
		}
		// sync waited for the daemon's run and shows it.
		if fields := strings.Fields(strings.Split(out, "\n")[1]); len(fields) < 6 || fields[0] != "team" || fields[5] != "25" {
			t.Errorf("sync's table does not show the daemon's run deleting 25:\n%s", out)
		}
		r := lastRun(t, w.openStore(t))
		if r.Deleted != 25 || r.HeldDeletes != 0 {
			t.Errorf("the daemon's run deleted %d and held %d, want the 25 held deletes released", r.Deleted, r.HeldDeletes)
		}
		if got := len(w.fake.Events(liveCalendar)); got != 5 {
			t.Errorf("calendar holds %d events, want 5", got)
		}
	})
	t.Run("reconcile", func(t *testing.T) {
		w := newLiveWorld(t, "")
		w.setFeed(generatedFeed(10))
		if _, errs, code := run(t, "sync", "--config", w.config); code != 0 {
			t.Fatalf("first sync: %d\n%s", code, errs)
		}
		gone := w.fake.Events(liveCalendar)[3].Id
		w.fake.Delete(liveCalendar, gone) // by hand, in Google
		w.startDaemon(t)
		out, errs, code := run(t, "sync", "--config", w.config, "--reconcile", "team")
		if code != 0 || !strings.Contains(errs, "handed the sync to it") {
			t.Fatalf("sync --reconcile: %d\n%s%s", code, out, errs)
		}
		if r := lastRun(t, w.openStore(t)); r.Updated != 1 {
			t.Errorf("the daemon's run updated %d events, want the one deleted by hand restored (run %+v)", r.Updated, r)
		}
		if got := len(w.fake.Events(liveCalendar)); got != 10 {
			t.Errorf("calendar holds %d live events, want 10", got)
		}
	})
}

// TestSyncSaysWhichReplicaHoldsTheAccount: when the daemon `calsyncd sync`
// hands a subscription to does not hold the account's lease either, it
// answers 409 naming the holder, and sync says so (it
// answered 500 "the sync could not start").
func TestSyncSaysWhichReplicaHoldsTheAccount(t *testing.T) {
	w := newLiveWorld(t, "")
	w.setFeed(generatedFeed(3))
	st := w.openStore(t)
	const other = "replica-b/4242/feedface"
	if _, ok, err := st.ClaimLease(context.Background(), "default", other, time.Hour); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	w.startDaemon(t)
	out, errs, code := run(t, "sync", "--config", w.config, "team")
	if code != 1 || !strings.Contains(errs, other) || !strings.Contains(errs, "409") {
		t.Fatalf("sync: exit %d, want 1 and a message naming %s\n%s%s", code, other, out, errs)
	}
	if runs, _ := st.Runs(context.Background(), "team", 1); len(runs) != 0 {
		t.Errorf("a run was recorded: %+v", runs)
	}
}

// TestUnwritableStateDirectoryIsNotOK: with a lock directory the daemon
// cannot write, a sync handed to it is a recorded failure (sync exits 1)
// and /healthz answers 503 (the daemon logged "permission
// denied", recorded no run, and /healthz said ok).
func TestUnwritableStateDirectoryIsNotOK(t *testing.T) {
	w := newLiveWorld(t, "")
	w.setFeed(generatedFeed(3))
	if _, errs, code := run(t, "sync", "--config", w.config); code != 0 {
		t.Fatalf("first sync: %d\n%s", code, errs)
	}
	// A file where the lock directory should be: unwritable even for root.
	locks := filepath.Join(w.dir, "state", "locks")
	if err := os.RemoveAll(locks); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(locks, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w.startDaemon(t)
	out, errs, code := run(t, "sync", "--config", w.config, "team")
	if code != 1 || !strings.Contains(out, "failed") {
		t.Errorf("sync: exit %d, want 1 and the daemon's failed run\n%s%s", code, out, errs)
	}
	if r := lastRun(t, w.openStore(t)); r.Outcome != calsyncd.OutcomeFailed || !strings.Contains(r.Error, "lock directory") {
		t.Errorf("last run %+v, want a failed run naming the lock directory", r)
	}
	listen := configValue(t, w.config, "listen")
	resp, err := http.Get("http://" + listen + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "state directory") {
		t.Errorf("/healthz: %d %q, want 503 naming the state directory", resp.StatusCode, body)
	}
}

// TestReconcileWithGoogleUnreachableFails: `sync --reconcile` that cannot
// list Google's events is a failure, exit 1 (it logged
// "reconcile skipped", outcome ok, exit 0).
func TestReconcileWithGoogleUnreachableFails(t *testing.T) {
	w := newLiveWorld(t, "")
	w.setFeed(generatedFeed(3))
	if _, errs, code := run(t, "sync", "--config", w.config); code != 0 {
		t.Fatalf("first sync: %d\n%s", code, errs)
	}
	b, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := configValue(t, w.config, "  endpoint")
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	os.WriteFile(w.config, []byte(strings.Replace(string(b), endpoint, dead.URL+gcalfake.BasePath, 1)), 0o600)
	out, errs, code := run(t, "sync", "--config", w.config, "--reconcile", "team")
	if code != 1 || !strings.Contains(out, "failed") {
		t.Errorf("sync --reconcile with Google unreachable: exit %d, want 1 and a failed run\n%s%s", code, out, errs)
	}
}

// configValue reads a "key: value" line of a configuration file.
func configValue(t *testing.T, path, key string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return v
		}
	}
	t.Fatalf("no %q in %s", key, path)
	return ""
}
