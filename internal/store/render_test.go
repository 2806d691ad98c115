package store_test

import (
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// TestRenderColumns: what the render stage keeps — a mapping's field
// digest, the render policy the validators were stored under, a run's
// filtered count — survives the round trip.
func TestRenderColumns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, found, err := s.LookupSubscription(ctx, "team"); found || err != nil {
			t.Fatalf("lookup before it exists: %v %v", found, err)
		}
		st, err := s.EnsureSubscription(ctx, "team", "team@example.com", "default")
		if err != nil {
			t.Fatal(err)
		}
		if st.RenderPolicy != "" {
			t.Fatalf("a new subscription has render policy %q", st.RenderPolicy)
		}
		st.RenderPolicy, st.Filtered = "r1:abc", 12
		if err := s.SaveSubscription(ctx, st); err != nil {
			t.Fatal(err)
		}
		if got, found, err := s.LookupSubscription(ctx, "team"); err != nil || !found || got.RenderPolicy != "r1:abc" || got.Filtered != 12 {
			t.Fatalf("render policy = %q, %v", got.RenderPolicy, err)
		}
		m := calsyncd.Mapping{Key: calsyncd.Key{UID: "a"}, EventID: "e1", Hash: "h", Fields: "0123456789ab"}
		if err := s.PutMapping(ctx, "team", m); err != nil {
			t.Fatal(err)
		}
		if ms, err := s.Mappings(ctx, "team"); err != nil || len(ms) != 1 || ms[0].Fields != m.Fields {
			t.Fatalf("mappings = %+v, %v", ms, err)
		}
		id, err := s.StartRun(ctx, "team", testNow)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, calsyncd.Run{ID: id, FinishedAt: testNow.Add(time.Second), Outcome: calsyncd.OutcomeOK, Filtered: 7}); err != nil {
			t.Fatal(err)
		}
		if runs, err := s.Runs(ctx, "team", 1); err != nil || len(runs) != 1 || runs[0].Filtered != 7 {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
	})
}
