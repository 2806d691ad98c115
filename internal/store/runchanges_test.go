package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// TestRunChangesAreKeptBoundedAndTitled: a run's writes are kept, in
// order, up to calsyncd.MaxRunChanges over its rounds; a delete takes the
// title and start its event was last written with; the changes go with
// their run when the retention prunes it.
func TestRunChangesAreKeptBoundedAndTitled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		run := func(days int) int64 {
			t.Helper()
			id, err := s.StartRun(ctx, "team", testNow.Add(-time.Duration(days)*24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		first, second, third := run(30), run(1), run(0)
		standup := calsyncd.RunChange{Kind: calsyncd.RunCreated, Key: calsyncd.Key{UID: "standup"}, Title: "Stand-up <b>", Start: start}
		holiday := calsyncd.RunChange{Kind: calsyncd.RunUpdated, Key: calsyncd.Key{UID: "xmas", RecurrenceID: "20261225"}, Title: "Christmas", Start: time.Date(2026, 12, 25, 0, 0, 0, 0, time.UTC), AllDay: true}
		if err := s.AddRunChanges(ctx, "team", first, []calsyncd.RunChange{standup, holiday}); err != nil {
			t.Fatal(err)
		}
		// The second run deletes both, knowing only their keys, and
		// writes more than the bound over two rounds.
		var many []calsyncd.RunChange
		for i := range calsyncd.MaxRunChanges {
			many = append(many, calsyncd.RunChange{Kind: calsyncd.RunCreated, Key: calsyncd.Key{UID: fmt.Sprintf("e%d", i)}, Title: fmt.Sprintf("event %d", i), Start: start})
		}
		gone := []calsyncd.RunChange{{Kind: calsyncd.RunDeleted, Key: standup.Key}, {Kind: calsyncd.RunDeleted, Key: holiday.Key}, {Kind: calsyncd.RunDeleted, Key: calsyncd.Key{UID: "never-seen"}}}
		if err := s.AddRunChanges(ctx, "team", second, gone); err != nil {
			t.Fatal(err)
		}
		if err := s.AddRunChanges(ctx, "team", second, many); err != nil {
			t.Fatal(err)
		}
		got, err := s.RunChanges(ctx, second)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != calsyncd.MaxRunChanges {
			t.Fatalf("run %d kept %d changes, want the bound %d", second, len(got), calsyncd.MaxRunChanges)
		}
		for _, tt := range []struct {
			at   int
			want calsyncd.RunChange
		}{
			{0, calsyncd.RunChange{Kind: calsyncd.RunDeleted, Key: standup.Key, Title: standup.Title, Start: start}},
			{1, calsyncd.RunChange{Kind: calsyncd.RunDeleted, Key: holiday.Key, Title: "Christmas", Start: holiday.Start, AllDay: true}},
			{2, calsyncd.RunChange{Kind: calsyncd.RunDeleted, Key: calsyncd.Key{UID: "never-seen"}}},
			{3, many[0]},
			// The last kept: the bound cut the second round short.
			{calsyncd.MaxRunChanges - 1, many[calsyncd.MaxRunChanges-4]},
		} {
			c := got[tt.at]
			if c.Kind != tt.want.Kind || c.Key != tt.want.Key || c.Title != tt.want.Title || !c.Start.Equal(tt.want.Start) || c.AllDay != tt.want.AllDay {
				t.Errorf("change %d = %+v, want %+v", tt.at, c, tt.want)
			}
		}
		if err := s.AddRunChanges(ctx, "team", third, many[:1]); err != nil {
			t.Fatal(err)
		}
		// The retention keeps two runs: the first run's changes go with it.
		if _, err := s.PruneRuns(ctx, 0, 2); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			run  int64
			want int
		}{{first, 0}, {second, calsyncd.MaxRunChanges}, {third, 1}} {
			got, err := s.RunChanges(ctx, tt.run)
			if err != nil || len(got) != tt.want {
				t.Errorf("after pruning, run %d keeps %d changes (%v), want %d", tt.run, len(got), err, tt.want)
			}
		}
	})
}
