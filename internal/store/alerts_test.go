package store_test

import (
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

func TestAlertStates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, found, err := s.AlertState(ctx, "error", "team"); found || err != nil {
			t.Fatalf("unknown condition: found %v, %v", found, err)
		}
		since := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
		want := calsyncd.AlertState{Condition: "error", Subject: "team", Since: since, NotifiedAt: since}
		if err := s.SaveAlertState(ctx, want); err != nil {
			t.Fatal(err)
		}
		// The same subject under another condition is another row.
		if err := s.SaveAlertState(ctx, calsyncd.AlertState{Condition: "deletes_held", Subject: "team", Since: since, NotifiedAt: since}); err != nil {
			t.Fatal(err)
		}
		want.NotifiedAt = since.Add(25 * time.Hour)
		if err := s.SaveAlertState(ctx, want); err != nil {
			t.Fatal(err)
		}
		// Another Store on the same database (a restarted daemon, a replica)
		// sees it.
		got, found, err := db.open(t).AlertState(ctx, "error", "team")
		if err != nil || !found || got != want {
			t.Fatalf("alert state = %+v, %v, %v; want %+v", got, found, err, want)
		}
		if err := s.DeleteAlertState(ctx, "error", "team"); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := s.AlertState(ctx, "error", "team"); found {
			t.Error("a deleted alert state is still there")
		}
		if _, found, _ := s.AlertState(ctx, "deletes_held", "team"); !found {
			t.Error("deleting one condition took another along")
		}
	})
}
