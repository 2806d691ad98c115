package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/store"
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
		record := func(id string, hour int, outcome string) {
			t.Helper()
			run, err := s.StartRun(ctx, id, start.Add(time.Duration(hour)*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if outcome == store.OutcomeRunning {
				return
			}
			if err := s.FinishRun(ctx, store.Run{ID: run, FinishedAt: start.Add(time.Duration(hour)*time.Hour + time.Minute), Outcome: outcome}); err != nil {
				t.Fatal(err)
			}
		}
		record("team", 0, store.OutcomeOK)
		record("team", 1, store.OutcomePartial)
		record("team", 2, store.OutcomeFailed)
		record("team", 3, store.OutcomeDeferred)
		record("team", 4, store.OutcomeRunning)
		record("other", 5, store.OutcomeNotModified)
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
