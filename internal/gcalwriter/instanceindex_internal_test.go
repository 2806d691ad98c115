package gcalwriter

import (
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// The batch's instance index keeps only a series' own instances, by
// original start (the instant of a timed one in any offset, the date of
// an all-day one), a later listing's item replacing an earlier one's,
// and add answers what that listing alone showed.
func TestInstanceIndex(t *testing.T) {
	timed := func(series, id, at, etag string) *calendar.Event {
		return &calendar.Event{Id: id, RecurringEventId: series, Etag: etag, OriginalStartTime: &calendar.EventDateTime{DateTime: at}}
	}
	allDay := func(series, id, date string) *calendar.Event {
		return &calendar.Event{Id: id, RecurringEventId: series, OriginalStartTime: &calendar.EventDateTime{Date: date}}
	}
	nine := feed.Time{T: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)}
	ten := feed.Time{T: time.Date(2027, 3, 8, 10, 0, 0, 0, time.UTC)}
	day := feed.Time{AllDay: true, T: time.Date(2027, 3, 2, 0, 0, 0, 0, time.UTC)}

	type listing struct {
		series string
		items  []*calendar.Event
		shown  int // what add answers for this listing alone
	}
	type lookup struct {
		series string
		at     feed.Time
		id     string // "" for none
	}
	tests := []struct {
		name     string
		listings []listing
		lookups  []lookup
	}{
		{"nothing listed", nil, []lookup{{"s", nine, ""}}},
		{
			"matched by original start in any offset",
			[]listing{{"s", []*calendar.Event{timed("s", "s_a", "2027-03-01T10:00:00+01:00", "1")}, 1}},
			[]lookup{{"s", nine, "s_a"}, {"s", ten, ""}, {"t", nine, ""}},
		},
		{
			"another series' item is never kept",
			[]listing{{"s", []*calendar.Event{timed("t", "t_a", "2027-03-01T09:00:00Z", "1"), {Id: "loose"}}, 0}},
			[]lookup{{"s", nine, ""}, {"t", nine, ""}},
		},
		{
			"all-day by date",
			[]listing{{"s", []*calendar.Event{allDay("s", "s_d", "2027-03-02")}, 1}},
			[]lookup{{"s", day, "s_d"}},
		},
		{
			"a later listing replaces an item and keeps the rest",
			[]listing{
				{"s", []*calendar.Event{timed("s", "old", "2027-03-01T09:00:00Z", "1"), timed("s", "s_b", "2027-03-08T10:00:00Z", "1")}, 2},
				{"s", []*calendar.Event{timed("s", "new", "2027-03-01T09:00:00Z", "2")}, 1},
			},
			[]lookup{{"s", nine, "new"}, {"s", ten, "s_b"}},
		},
		{
			"an unreadable original start is not indexed",
			[]listing{{"s", []*calendar.Event{timed("s", "s_x", "not a time", "1"), {Id: "s_y", RecurringEventId: "s"}}, 0}},
			[]lookup{{"s", nine, ""}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var x instanceIndex
			for i, l := range tc.listings {
				if got := len(x.add(l.series, l.items)); got != l.shown {
					t.Errorf("listing %d: add answered %d instances, want %d", i, got, l.shown)
				}
			}
			for _, l := range tc.lookups {
				got := x.at(l.series, l.at)
				switch {
				case l.id == "" && got != nil:
					t.Errorf("at(%s, %v) = %s, want none", l.series, l.at.T, got.Id)
				case l.id != "" && (got == nil || got.Id != l.id):
					t.Errorf("at(%s, %v) = %v, want %s", l.series, l.at.T, got, l.id)
				}
			}
		})
	}
}
