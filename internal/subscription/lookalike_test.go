package subscription_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestUnwritableLockDirectoryIsARecordedFailure: a lock directory the
// process cannot write fails the run, recorded like any failure (issue
// 15: it was logged, no run was recorded and the status stayed ok).
func TestUnwritableLockDirectoryIsARecordedFailure(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(weeklyFeed(3))
	// A file where the directory should be: unwritable even for root.
	locks := filepath.Join(t.TempDir(), "locks")
	if err := os.WriteFile(locks, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.runner.Locker = subscription.FileLocker{Dir: locks}
	var started int64
	rep, err := h.runner.Sync(t.Context(), h.cfg.Subscriptions[0], subscription.Options{Started: func(id int64) { started = id }})
	if err != nil {
		t.Fatalf("Sync: %v, want a recorded failed run", err)
	}
	if rep.Run.Outcome != calsyncd.OutcomeFailed || !strings.Contains(rep.Run.Error, "lock") || started == 0 || started != rep.Run.ID {
		t.Fatalf("run %+v (started %d), want a failed run naming the lock", rep.Run, started)
	}
	runs, _ := h.store.Runs(t.Context(), "team", 5)
	st, _ := h.store.Subscription(t.Context(), "team")
	if len(runs) != 1 || runs[0].Outcome != calsyncd.OutcomeFailed || st.ConsecutiveErrors != 1 || st.LastError == "" {
		t.Errorf("recorded runs %+v, state %+v", runs, st)
	}
	if n := totalWrites(h.writes()); n != 0 {
		t.Errorf("%d writes without the lock", n)
	}
}

// TestReconcileThatCannotListIsARecordedFailure: `sync --reconcile` with
// Google unreachable fails the run (it logged "reconcile
// skipped" and ended ok); the next run reconciles again.
func TestReconcileThatCannotListIsARecordedFailure(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(weeklyFeed(3))
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK {
		t.Fatalf("first sync: %s", rep.Run.Outcome)
	}
	before, _ := h.store.Subscription(t.Context(), "team")
	h.api.Close() // Google unreachable
	rep := h.syncWith(subscription.Options{Reconcile: true})
	if rep.Run.Outcome != calsyncd.OutcomeFailed || rep.Run.ErrorClass != calsyncd.ClassTransient || !strings.Contains(rep.Run.Error, "reconcile") {
		t.Fatalf("run %s %s %q, want failed, transient, naming the reconcile", rep.Run.Outcome, rep.Run.ErrorClass, rep.Run.Error)
	}
	st, _ := h.store.Subscription(t.Context(), "team")
	if !st.LastReconcileAt.Equal(before.LastReconcileAt) || st.ConsecutiveErrors != 1 {
		t.Errorf("state %+v: the skipped reconcile counted as done, or the failure did not count", st)
	}
}
