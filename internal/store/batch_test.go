package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/store"
)

// batchFixture: subscriptions whose ids sort differently by bytes than by
// letters ("Z" before "a"), with runs, mappings and rejections.
func batchFixture(t *testing.T, s *store.Store) []string {
	t.Helper()
	ctx := context.Background()
	ids := []string{"b-team", "Z-upper", "a-holidays", "c-empty", "a-10", "a-9"}
	for _, id := range ids {
		if _, err := s.EnsureSubscription(ctx, id, "cal-"+id, "default"); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	hour := 0
	record := func(id string, outcome calsyncd.Outcome) {
		t.Helper()
		hour++
		at := start.Add(time.Duration(hour) * time.Hour)
		run, err := s.StartRun(ctx, id, at)
		if err != nil {
			t.Fatal(err)
		}
		if outcome == calsyncd.OutcomeRunning {
			return
		}
		if err := s.FinishRun(ctx, calsyncd.Run{ID: run, FinishedAt: at.Add(time.Minute), Outcome: outcome, Created: hour}); err != nil {
			t.Fatal(err)
		}
	}
	// b-team: ok, failed, ok (newest ok: not failing). a-holidays: ok then
	// failed (failing). Z-upper: in ERROR. a-10: running only.
	record("b-team", calsyncd.OutcomeOK)
	record("a-holidays", calsyncd.OutcomeOK)
	record("b-team", calsyncd.OutcomeFailed)
	record("a-holidays", calsyncd.OutcomeFailed)
	record("b-team", calsyncd.OutcomeOK)
	record("a-10", calsyncd.OutcomeRunning)
	z, _ := s.Subscription(ctx, "Z-upper")
	z.State, z.HeldDeletes = calsyncd.StateError, 3
	if err := s.SaveSubscription(ctx, z); err != nil {
		t.Fatal(err)
	}
	// The runner counts a-holidays' failed run (b-team's was reset by its
	// clean one).
	h, _ := s.Subscription(ctx, "a-holidays")
	h.ConsecutiveErrors = 1
	if err := s.SaveSubscription(ctx, h); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Subscription(ctx, "b-team")
	b.HeldDeletes = 1
	if err := s.SaveSubscription(ctx, b); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.PutMapping(ctx, "b-team", calsyncd.Mapping{Key: calsyncd.Key{UID: fmt.Sprint(i)}, EventID: fmt.Sprint("e", i), Hash: "h"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutMapping(ctx, "a-9", calsyncd.Mapping{Key: calsyncd.Key{UID: "x"}, EventID: "ex", Hash: "h"}); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"r2", "r1"} {
		if err := s.PutRejection(ctx, "a-holidays", calsyncd.Rejection{Key: calsyncd.Key{UID: uid}, Hash: "h", Reason: "bad " + uid}); err != nil {
			t.Fatal(err)
		}
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	return sorted
}

func stateIDs(states []calsyncd.SubscriptionState) []string {
	out := []string{}
	for _, st := range states {
		out = append(out, st.ID)
	}
	return out
}

// Keyset pages, forward and backward, visit every subscription once, in
// byte order, on both drivers.
func TestSubscriptionPages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		want := batchFixture(t, s)
		got, err := s.SubscriptionIDs(ctx)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("SubscriptionIDs = %v, %v; want %v", got, err, want)
		}
		for _, limit := range []int{1, 2, 4, 100} {
			var forward []string
			after := ""
			for {
				page, err := s.SubscriptionsAfter(ctx, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				if len(page) > limit {
					t.Fatalf("limit %d: page of %d", limit, len(page))
				}
				forward = append(forward, stateIDs(page)...)
				after = page[len(page)-1].ID
			}
			if !slices.Equal(forward, want) {
				t.Errorf("limit %d forward: %v, want %v", limit, forward, want)
			}
			var backward []string
			before := "\U0010FFFF"
			for {
				page, err := s.SubscriptionsBefore(ctx, before, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				ids := stateIDs(page)
				if !slices.IsSorted(ids) {
					t.Fatalf("limit %d: a backward page out of order: %v", limit, ids)
				}
				backward = append(ids, backward...)
				before = page[0].ID
			}
			if !slices.Equal(backward, want) {
				t.Errorf("limit %d backward: %v, want %v", limit, backward, want)
			}
		}
		page, err := s.SubscriptionsAfter(ctx, "a-holidays", 1)
		if err != nil || len(page) != 1 || page[0].ID != "b-team" || page[0].Calendar != "cal-b-team" || page[0].HeldDeletes != 1 {
			t.Errorf("after a-holidays: %+v, %v; want b-team's whole state", page, err)
		}
	})
}

func TestSubscriptionCounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		batchFixture(t, s)
		got, err := s.SubscriptionCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := calsyncd.SubscriptionCounts{Total: 6, States: map[calsyncd.State]int{calsyncd.StateActive: 5, calsyncd.StateError: 1},
			Failing: 2, HoldingDeletes: 2}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("counts = %+v, want %+v", got, want)
		}
	})
}

func TestBatchReads(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		ids := batchFixture(t, s)
		// Unknown ids are answered with nothing; more than a chunk of ids
		// (1,000) is split into several queries.
		ask := slices.Clone(ids)
		for i := range 2500 {
			ask = append(ask, fmt.Sprintf("unknown-%04d", i))
		}
		ask = append(ask, "a-9")
		slices.Reverse(ask)

		counts, err := s.MappingCounts(ctx, ask)
		if want := map[string]int{"b-team": 3, "a-9": 1}; err != nil || !reflect.DeepEqual(counts, want) {
			t.Errorf("MappingCounts = %v, %v; want %v", counts, err, want)
		}
		for _, id := range ids {
			n, _ := s.CountMappings(ctx, id)
			if counts[id] != n {
				t.Errorf("%s: MappingCounts %d, CountMappings %d", id, counts[id], n)
			}
		}

		rejs, err := s.RejectionsOf(ctx, ask)
		if err != nil || len(rejs) != 1 || len(rejs["a-holidays"]) != 2 {
			t.Fatalf("RejectionsOf = %v, %v; want a-holidays' two", rejs, err)
		}
		one, _ := s.Rejections(ctx, "a-holidays")
		if !reflect.DeepEqual(rejs["a-holidays"], one) {
			t.Errorf("RejectionsOf = %+v, Rejections = %+v", rejs["a-holidays"], one)
		}

		for _, n := range []int{1, 2, 48} {
			runs, err := s.RecentRuns(ctx, ask, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				want, _ := s.Runs(ctx, id, n)
				if len(want) == 0 {
					if _, ok := runs[id]; ok {
						t.Errorf("n=%d %s: runs %v, want none", n, id, runs[id])
					}
					continue
				}
				if !reflect.DeepEqual(runs[id], want) {
					t.Errorf("n=%d %s: RecentRuns %+v, Runs %+v", n, id, runs[id], want)
				}
			}
		}
		if runs, _ := s.RecentRuns(ctx, ask, 2); len(runs["b-team"]) != 2 || runs["b-team"][0].Created != 5 {
			t.Errorf("b-team's 2 newest: %+v", runs["b-team"])
		}

		last, err := s.LastSuccesses(ctx, ask)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			want, _ := s.LastSuccess(ctx, id)
			if got, ok := last[id]; ok != !want.IsZero() || !got.Equal(want) {
				t.Errorf("%s: LastSuccesses %v (%v), LastSuccess %v", id, got, ok, want)
			}
		}
		if len(last) != 2 {
			t.Errorf("LastSuccesses = %v, want b-team's and a-holidays'", last)
		}
	})
}
