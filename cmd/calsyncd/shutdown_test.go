package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // the test holds the daemon's database locked
)

// lockDatabase takes the state database's write lock and holds it until
// the test ends, as a backup tool or an sqlite3 shell left in a
// transaction would: every write of the daemon then waits (busy_timeout)
// and none of them heeds cancellation.
func lockDatabase(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "state", "calsyncd.db")+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	})
}

// stuckDaemon starts `calsyncd run` on a feed of many events, waits until
// it writes, and locks its database, so its run cannot finish.
func stuckDaemon(t *testing.T, shutdownTimeout string) (*world, *syncBuffer, func() <-chan error) {
	t.Helper()
	w := newWorld(t, generatedFeed(300), 4*time.Millisecond, "schedule: '@every 1s'\nsync:\n  shutdown_timeout: "+shutdownTimeout+"\n")
	out := &syncBuffer{}
	cmd := calsyncdCmd(t, out, "run", "--config", w.config)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		done <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for w.fake.Stats().ByOp["insert"] < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never started writing\n%s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	lockDatabase(t, w.dir)
	signal := func() <-chan error {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		return done
	}
	return w, out, signal
}

// exitWithin waits for the process to end within d.
func exitWithin(t *testing.T, done <-chan error, d time.Duration, out *syncBuffer) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("the daemon was still running %s later\n%s", d, out.String())
		return nil
	}
}

// TestShutdownDeadlineIsHard: when sync.shutdown_timeout passes and a run
// does not stop (its database writes wait on a lock), the daemon exits
// anyway, a moment after the deadline (it waited for the
// run forever).
func TestShutdownDeadlineIsHard(t *testing.T) {
	_, out, sigterm := stuckDaemon(t, "1s")
	start := time.Now()
	err := exitWithin(t, sigterm(), 8*time.Second, out)
	t.Logf("exited %s after SIGTERM (shutdown_timeout 1s): %v", time.Since(start).Round(100*time.Millisecond), err)
	if err == nil {
		t.Errorf("exit status 0 although runs were abandoned")
	}
	if !strings.Contains(out.String(), "shutdown_timeout") {
		t.Errorf("the log does not say the deadline passed:\n%s", out.String())
	}
}

// TestSecondSignalAborts: a second SIGTERM during a long shutdown exits at
// once (a second signal did nothing).
func TestSecondSignalAborts(t *testing.T) {
	_, out, sigterm := stuckDaemon(t, "1h")
	done := sigterm()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "shutting down") {
		if time.Now().After(deadline) {
			t.Fatalf("no shutdown began\n%s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	start := time.Now()
	sigterm()
	err := exitWithin(t, done, 5*time.Second, out)
	t.Logf("exited %s after the second SIGTERM: %v", time.Since(start).Round(100*time.Millisecond), err)
	if !strings.Contains(out.String(), "second signal") {
		t.Errorf("the log does not say the second signal aborted:\n%s", out.String())
	}
}
