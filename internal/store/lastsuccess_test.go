package store_test

import (
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

func TestLastSuccess(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		for _, id := range []string{"team", "other"} {
			if _, err := s.EnsureSubscription(ctx, id, "cal", "default"); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.LastSuccess(ctx, "team"); err != nil || !got.IsZero() {
			t.Fatalf("no runs: %v, %v", got, err)
		}
		start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		record := func(id string, hour int, outcome calsyncd.Outcome) {
			t.Helper()
			run, err := s.StartRun(ctx, id, start.Add(time.Duration(hour)*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if outcome == calsyncd.OutcomeRunning {
				return
			}
			if err := s.FinishRun(ctx, calsyncd.Run{ID: run, FinishedAt: start.Add(time.Duration(hour)*time.Hour + time.Minute), Outcome: outcome}); err != nil {
				t.Fatal(err)
			}
		}
		record("team", 0, calsyncd.OutcomeOK)
		record("team", 1, calsyncd.OutcomePartial)
		record("team", 2, calsyncd.OutcomeFailed)
		record("team", 3, calsyncd.OutcomeDeferred)
		record("team", 4, calsyncd.OutcomeRunning)
		record("other", 5, calsyncd.OutcomeNotModified)
		got, err := s.LastSuccess(ctx, "team")
		if want := start.Add(time.Hour + time.Minute); err != nil || !got.Equal(want) {
			t.Errorf("team: %v, %v; want the partial run's end %v", got, err, want)
		}
		got, err = s.LastSuccess(ctx, "other")
		if want := start.Add(5*time.Hour + time.Minute); err != nil || !got.Equal(want) {
			t.Errorf("other: %v, %v; want %v", got, err, want)
		}
	})
}
