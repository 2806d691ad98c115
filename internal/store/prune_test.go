package store_test

import (
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// addRuns records runs of a subscription that started at the given days
// before testNow, with the given outcomes (oldest first).
func addRuns(t *testing.T, s interface {
	StartRun(context.Context, string, time.Time) (int64, error)
	FinishRun(context.Context, calsyncd.Run) error
}, id string, daysAgo []int, outcomes []calsyncd.Outcome) {
	t.Helper()
	for i, d := range daysAgo {
		at := testNow.Add(-time.Duration(d) * 24 * time.Hour)
		run, err := s.StartRun(context.Background(), id, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(context.Background(), calsyncd.Run{ID: run, SubscriptionID: id, FinishedAt: at.Add(time.Minute), Outcome: outcomes[i]}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPruneRunsKeepsTheRetentionAndWhatStatusNeeds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		for _, id := range []string{"daily", "failing", "young"} {
			if _, err := s.EnsureSubscription(ctx, id, "cal", "default"); err != nil {
				t.Fatal(err)
			}
		}
		// Thirty daily runs; a subscription failing for 100 days whose last
		// success is older still; three young runs.
		var days []int
		var ok []calsyncd.Outcome
		for d := 29; d >= 0; d-- {
			days, ok = append(days, d), append(ok, calsyncd.OutcomeOK)
		}
		addRuns(t, s, "daily", days, ok)
		addRuns(t, s, "failing", []int{130, 120, 100, 50}, []calsyncd.Outcome{calsyncd.OutcomeOK, calsyncd.OutcomeOK, calsyncd.OutcomeFailed, calsyncd.OutcomeFailed})
		addRuns(t, s, "young", []int{2, 1, 0}, []calsyncd.Outcome{calsyncd.OutcomeOK, calsyncd.OutcomeOK, calsyncd.OutcomeOK})
		lastOK, err := s.LastSuccess(ctx, "failing")
		if err != nil {
			t.Fatal(err)
		}

		n, err := s.PruneRuns(ctx, 20*24*time.Hour, 10)
		if err != nil {
			t.Fatal(err)
		}
		count := func(id string) int {
			runs, err := s.Runs(ctx, id, 1000)
			if err != nil {
				t.Fatal(err)
			}
			return len(runs)
		}
		// daily: its 10 newest; failing: its newest and its last success;
		// young: all.
		if d, f, y := count("daily"), count("failing"), count("young"); d != 10 || f != 2 || y != 3 || n != 20+2 {
			t.Errorf("kept daily %d (want 10), failing %d (want 2), young %d (want 3); deleted %d (want 22)", d, f, y, n)
		}
		if got, _ := s.LastSuccess(ctx, "failing"); !got.Equal(lastOK) {
			t.Errorf("last success %v after pruning, was %v", got, lastOK)
		}
		// A second prune deletes nothing, and asks for no delete but the one
		// of "failing", whose kept runs are older than the retention: the
		// others have nothing to delete.
		before := s.Commits()
		if n, err := s.PruneRuns(ctx, 20*24*time.Hour, 10); err != nil || n != 0 {
			t.Errorf("a second prune deleted %d (%v)", n, err)
		}
		if asked := s.Commits() - before; asked != 1 {
			t.Errorf("a second prune asked %d deletes, want 1", asked)
		}
		if n, err := s.PruneRuns(ctx, 0, 0); err != nil || n != 0 {
			t.Errorf("no retention deleted %d (%v)", n, err)
		}
	})
}
