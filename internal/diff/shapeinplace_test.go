package diff_test

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// ShapeInPlace shapes a feed of single events in the events' own storage,
// as Shape would shape them; a feed with a series or an override is
// shaped by Shape, into storage of its own, the events left untouched.
func TestShapeInPlace(t *testing.T) {
	singles := func() []feed.Event {
		return parse(t,
			vevent("UID:a", "DTSTART:20270104T093000Z", "DTEND:20270104T100000Z", "SUMMARY:A"),
			vevent("UID:b", "DTSTART;VALUE=DATE:20270105", "SUMMARY:B", "STATUS:CANCELLED"),
			vevent("UID:c", "DTSTART:20270106T093000Z", "DTEND:20270106T100000Z", "SUMMARY:C"))
	}
	withSeries := func() []feed.Event {
		return parse(t, weeklyMaster,
			vevent("UID:sync", "RECURRENCE-ID;TZID=Europe/Berlin:20270111T093000", "DTSTART;TZID=Europe/Berlin:20270111T110000",
				"DTEND;TZID=Europe/Berlin:20270111T113000", "SUMMARY:Moved"),
			vevent("UID:z", "DTSTART:20270106T093000Z", "DTEND:20270106T100000Z", "SUMMARY:Z"))
	}
	opts := diff.ShapeOptions{}
	for _, tc := range []struct {
		name    string
		events  func() []feed.Event
		inPlace bool
	}{
		{"single events", singles, true},
		{"a series and an override", withSeries, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := diff.Shape(tc.events(), opts)
			events := tc.events()
			before := slices.Clone(events)
			got := diff.ShapeInPlace(events, opts)
			if !slices.Equal(shape(got), shape(want)) || !reflect.DeepEqual(got.Expanded, want.Expanded) {
				t.Fatalf("ShapeInPlace:\n%v\nShape:\n%v", shape(got), shape(want))
			}
			shared := len(got.Events) > 0 && unsafe.SliceData(got.Events) == unsafe.SliceData(events)
			if shared != tc.inPlace {
				t.Fatalf("shaped in the events' storage: %t, want %t", shared, tc.inPlace)
			}
			if !tc.inPlace && !reflect.DeepEqual(events, before) {
				t.Fatal("ShapeInPlace changed the events it did not shape in place")
			}
		})
	}
}
