package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/calsyncd/calsyncd/internal/store"
)

// TestKilledBetweenGooglesAnswerAndTheCommit: mappings are group-committed
// (every 50 ms), so a process killed right after Google answered some
// writes has queued their mappings without committing them. The test kills
// `calsyncd sync` when Google receives its 40th insert: by then the
// answers to the 38th and earlier have been handled (two requests in
// flight), and the database must lack some of them, or the kill proved
// nothing. The next sync finds those events (our marks, our
// deterministic ids), adopts them without writing them again, and the
// calendar ends with each event once.
func TestKilledBetweenGooglesAnswerAndTheCommit(t *testing.T) {
	const n, killAt = 60, 40
	proved := false
	for attempt := 0; attempt < 5 && !proved; attempt++ {
		w := newWorld(t, generatedFeed(n), 0, "")
		var (
			inserts atomic.Int64
			pid     atomic.Int64
			killed  = make(chan struct{})
			once    sync.Once
		)
		api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && inserts.Add(1) == killAt {
				once.Do(func() {
					close(killed)
					syscall.Kill(int(pid.Load()), syscall.SIGKILL)
				})
			}
			select {
			case <-killed:
				http.Error(rw, "gone", http.StatusServiceUnavailable)
			default:
				w.fake.ServeHTTP(rw, r)
			}
		}))
		cfg, err := os.ReadFile(w.config)
		if err != nil {
			t.Fatal(err)
		}
		// Our endpoint, and writes 5 ms apart: a commit window holds ten.
		writeFile(t, w.dir, "config.yaml", strings.NewReplacer(w.api.URL, api.URL, "spacing: 1ms", "spacing: 5ms").Replace(string(cfg)))
		var out bytes.Buffer
		cmd := calsyncdCmd(t, &out, "sync", "--config", w.config)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid.Store(int64(cmd.Process.Pid))
		cmd.Wait()
		select {
		case <-killed:
		default:
			t.Fatalf("the sync ended before its %dth insert:\n%s", killAt, out.String())
		}
		mapped := countMappings(t, w.dir)
		accepted := w.fake.Stats().AcceptedWrites
		t.Logf("attempt %d: Google accepted %d writes, the database recorded %d", attempt+1, accepted, mapped)
		proved = mapped < killAt-2
		writeFile(t, w.dir, "config.yaml", string(cfg)) // Google answers again
		out.Reset()
		if err := calsyncdCmd(t, &out, "sync", "--config", w.config).Run(); err != nil {
			t.Fatalf("sync after the kill: %v\n%s", err, out.String())
		}
		w.checkMirror(t, n)
		if m := countMappings(t, w.dir); m != n {
			t.Errorf("mappings = %d after the second sync, want %d", m, n)
		}
		// Found again (the next run reconciles: the killed one never
		// recorded its reconcile), not written again.
		if st := w.fake.Stats(); st.AcceptedWrites != n {
			t.Errorf("Google accepted %d writes over both syncs for %d events (%d answered 409): some were written twice",
				st.AcceptedWrites, n, st.Errors[409])
		}
		api.Close()
	}
	if !proved {
		t.Fatal("no kill landed between an answer and its commit; the test proved nothing")
	}
}

func countMappings(t *testing.T, dir string) int {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(dir, "state", "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := st.CountMappings(context.Background(), "team")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
