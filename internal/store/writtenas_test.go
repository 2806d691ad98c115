package store_test

import (
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// TestWrittenAs: the title and start a key was last created or updated
// with, from the kept runs — the later run's, never a delete's, only the
// subscription's own and only for the keys asked (a dry-run names a
// delete by it).
func TestWrittenAs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		for _, id := range []string{"team", "other"} {
			if _, err := s.EnsureSubscription(ctx, id, "cal-"+id, "default"); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Date(2027, 1, 15, 15, 0, 0, 0, time.UTC)
		day := time.Date(2027, 1, 6, 0, 0, 0, 0, time.UTC)
		add := func(sub string, ago int, cs ...calsyncd.RunChange) {
			t.Helper()
			id, err := s.StartRun(ctx, sub, testNow.Add(-time.Duration(ago)*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.AddRunChanges(ctx, sub, id, cs); err != nil {
				t.Fatal(err)
			}
		}
		release, epiphany, instance := calsyncd.Key{UID: "release"}, calsyncd.Key{UID: "holiday"}, calsyncd.Key{UID: "sync", RecurrenceID: "20270111T090000Z"}
		add("team", 3, calsyncd.RunChange{Kind: calsyncd.RunCreated, Key: release, Title: "Release 4.1", Start: start},
			calsyncd.RunChange{Kind: calsyncd.RunCreated, Key: epiphany, Title: "Office closed", Start: day, AllDay: true})
		add("team", 2, calsyncd.RunChange{Kind: calsyncd.RunUpdated, Key: release, Title: "Release 4.2 go/no-go", Start: start},
			calsyncd.RunChange{Kind: calsyncd.RunCreated, Key: instance, Title: "Team sync (moved)", Start: start})
		add("team", 1, calsyncd.RunChange{Kind: calsyncd.RunDeleted, Key: release})
		add("other", 1, calsyncd.RunChange{Kind: calsyncd.RunCreated, Key: calsyncd.Key{UID: "theirs"}, Title: "Not team's", Start: start})

		got, err := s.WrittenAs(ctx, "team", []calsyncd.Key{release, epiphany, instance, {UID: "theirs"}, {UID: "never"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			key    calsyncd.Key
			title  string
			start  time.Time
			allDay bool
			found  bool
		}{
			{release, "Release 4.2 go/no-go", start, false, true},
			{epiphany, "Office closed", day, true, true},
			{instance, "Team sync (moved)", start, false, true},
			{calsyncd.Key{UID: "theirs"}, "", time.Time{}, false, false},
			{calsyncd.Key{UID: "never"}, "", time.Time{}, false, false},
		} {
			c, ok := got[tt.key]
			if ok != tt.found || c.Title != tt.title || !c.Start.Equal(tt.start) || c.AllDay != tt.allDay {
				t.Errorf("%v = %+v (%v), want %q %v all-day %v (%v)", tt.key, c, ok, tt.title, tt.start, tt.allDay, tt.found)
			}
		}
		if len(got) != 3 {
			t.Errorf("%d keys found, want 3: %v", len(got), got)
		}
		if none, err := s.WrittenAs(ctx, "team", nil); err != nil || len(none) != 0 {
			t.Errorf("no keys: %v %v", none, err)
		}
	})
}
