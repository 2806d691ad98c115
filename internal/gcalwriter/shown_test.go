package gcalwriter_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// TestEveryShownFieldReachesGoogleAndTheHash: each field of feed.Shown,
// changed on its own, changes both the content hash and the Google event
// we write (as SameContent sees it). A field added to what Google shows
// but forgotten by the hash or by the writer fails here.
func TestEveryShownFieldReachesGoogleAndTheHash(t *testing.T) {
	base := feed.Event{UID: "u@example.com", Summary: "Standup", Description: "Daily", Location: "Room 1",
		URL: "https://example.com/standup", Status: feed.StatusConfirmed, Transparency: feed.TransparencyOpaque,
		Visibility: feed.VisibilityDefault,
		Start:      feed.Time{T: time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC)},
		End:        feed.Time{T: time.Date(2027, 1, 11, 9, 15, 0, 0, time.UTC)}}
	base.Hash = base.ComputeHash()
	fields := reflect.TypeFor[feed.Shown]()
	for i := range fields.NumField() {
		name := fields.Field(i).Name
		t.Run(name, func(t *testing.T) {
			ev := base
			f := reflect.ValueOf(&ev).Elem().FieldByName(name)
			if !f.IsValid() {
				// What a subscription adds (colour, reminders) is the
				// event's Style.
				ev.Style = &feed.Style{}
				f = reflect.ValueOf(ev.Style).Elem().FieldByName(name)
			}
			if !f.IsValid() {
				t.Fatalf("neither feed.Event nor feed.Style has a field %s: Shown must be the event's own fields", name)
			}
			switch v := f.Addr().Interface().(type) {
			case *string:
				*v += "-changed"
			case *feed.Time:
				v.T = v.T.Add(time.Hour)
			case *[]string:
				*v = append(*v, "RRULE:FREQ=DAILY;COUNT=3")
			case **feed.Reminders:
				*v = &feed.Reminders{Overrides: []feed.Reminder{{Method: "popup", Minutes: 10}}}
			default:
				t.Fatalf("no change known for a %s field", f.Type())
			}
			if reflect.DeepEqual(ev.Shown(), base.Shown()) {
				t.Fatalf("Shown does not carry %s", name)
			}
			ev.Hash = ev.ComputeHash()
			if ev.Hash == base.Hash {
				t.Errorf("changing %s leaves the content hash as it was", name)
			}
			want, got := gcalwriter.ToGoogle("", "team", &ev), gcalwriter.ToGoogle("", "team", &base)
			got.ExtendedProperties.Private[gcalwriter.PropHash] = ev.Hash
			if gcalwriter.SameContent(want, got) {
				t.Errorf("changing %s changes nothing Google shows", name)
			}
		})
	}
}
