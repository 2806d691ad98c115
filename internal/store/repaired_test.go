package store_test

import (
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// TestRunRepairedColumn: a run's count of events written back after a
// person edited them in Google (migration 0006) survives the round trip,
// on both backends.
func TestRunRepairedColumn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "team@example.com", "default"); err != nil {
			t.Fatal(err)
		}
		id, err := s.StartRun(ctx, "team", testNow)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, calsyncd.Run{ID: id, FinishedAt: testNow.Add(time.Second), Outcome: calsyncd.OutcomeOK, Updated: 3, Repaired: 2}); err != nil {
			t.Fatal(err)
		}
		if runs, err := s.Runs(ctx, "team", 1); err != nil || len(runs) != 1 || runs[0].Repaired != 2 || runs[0].Updated != 3 {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
	})
}
