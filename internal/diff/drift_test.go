package diff_test

import (
	"slices"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// copyOf is Google's copy of an event as a test states it: it shows the
// feed events whose summary is shows.
type copyOf struct{ shows string }

func (c copyOf) Shows(ev *feed.Event) bool { return ev.Summary == c.shows }

func TestDrifted(t *testing.T) {
	at := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	ev := func(uid, rid, summary, hash string) feed.Event {
		e := feed.Event{UID: uid, RecurrenceID: rid, Summary: summary, Start: feed.Time{T: at}, End: feed.Time{T: at.Add(time.Hour)}}
		e.Hash = hash
		return e
	}
	m := func(uid, rid, id, hash string) calsyncd.Mapping {
		return calsyncd.Mapping{Key: calsyncd.Key{UID: uid, RecurrenceID: rid}, EventID: id, Hash: hash, ETag: "e"}
	}
	o := func(id, shows string, cancelled bool) diff.Owned {
		return diff.Owned{EventID: id, Content: copyOf{shows}, Cancelled: cancelled}
	}
	const rid = "20270111T090000Z"
	tests := []struct {
		name    string
		desired []feed.Event
		mapped  []calsyncd.Mapping
		owned   []diff.Owned
		want    []string // UID/rid
	}{
		{name: "in step", desired: []feed.Event{ev("a", "", "A", "h")}, mapped: []calsyncd.Mapping{m("a", "", "ga", "h")},
			owned: []diff.Owned{o("ga", "A", false)}},
		{name: "edited by hand", desired: []feed.Event{ev("a", "", "A", "h")}, mapped: []calsyncd.Mapping{m("a", "", "ga", "h")},
			owned: []diff.Owned{o("ga", "A by hand", false)}, want: []string{"a/"}},
		{name: "the feed changed too: the plan updates it anyway", desired: []feed.Event{ev("a", "", "A2", "h2")},
			mapped: []calsyncd.Mapping{m("a", "", "ga", "h")}, owned: []diff.Owned{o("ga", "A by hand", false)}},
		{name: "deleted by hand: reconcile's refresh, not drift", desired: []feed.Event{ev("a", "", "A", "h")},
			mapped: []calsyncd.Mapping{m("a", "", "ga", "h")}, owned: []diff.Owned{o("ga", "A by hand", true)}},
		{name: "not mapped: nothing to compare", desired: []feed.Event{ev("a", "", "A", "h")},
			owned: []diff.Owned{o("ga", "other", false)}},
		{name: "an event we do not own is not listed", desired: []feed.Event{ev("a", "", "A", "h")},
			mapped: []calsyncd.Mapping{m("a", "", "ga", "h")}},
		{name: "an exception edited by hand", desired: []feed.Event{ev("s", "", "S", "hs"), ev("s", rid, "S late", "hx")},
			mapped: []calsyncd.Mapping{m("s", "", "gs", "hs"), m("s", rid, "gx", "hx")},
			owned:  []diff.Owned{o("gs", "S", false), o("gx", "S moved", false)}, want: []string{"s/" + rid}},
		{name: "a series edited by hand takes its missing exceptions along",
			desired: []feed.Event{ev("s", "", "S", "hs"), ev("s", rid, "S late", "hx")},
			mapped:  []calsyncd.Mapping{m("s", "", "gs", "hs"), m("s", rid, "gx", "hx")},
			owned:   []diff.Owned{o("gs", "S renamed", false)}, want: []string{"s/", "s/" + rid}},
		{name: "an exception missing from the listing of a series in step proves nothing",
			desired: []feed.Event{ev("s", "", "S", "hs"), ev("s", rid, "S late", "hx")},
			mapped:  []calsyncd.Mapping{m("s", "", "gs", "hs"), m("s", rid, "gx", "hx")},
			owned:   []diff.Owned{o("gs", "S", false)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, k := range diff.Drifted(tc.desired, tc.mapped, tc.owned) {
				got = append(got, k.UID+"/"+k.RecurrenceID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("drifted %v, want %v", got, tc.want)
			}
		})
	}
}

// An instance of our series a person edited (or deleted) is an exception
// carrying the series' marks: never a duplicate of the series (deleting it
// would cancel the occurrence), but an instance to write back, keyed by
// its original start.
func TestReconcileTellsAnInstanceEditedByHandFromADuplicate(t *testing.T) {
	series := calsyncd.Key{UID: "s"}
	mapped := []calsyncd.Mapping{{Key: series, EventID: "gs", Hash: "h"}}
	owned := []diff.Owned{
		{Key: series, EventID: "gs", Hash: "h"},
		{Key: series, EventID: "gs_20270111T090000Z", Hash: "h", Instance: true, Original: "20270111T090000Z"},
		{Key: series, EventID: "gs_20270118T090000Z", Hash: "h", Instance: true, Original: "20270118T090000Z", Cancelled: true},
	}
	r := diff.Reconcile(calsyncd.Owner{}, "team", mapped, owned)
	if len(r.Duplicates) != 0 || len(r.Adopt) != 0 || len(r.Refresh) != 0 {
		t.Fatalf("repair %+v: an edited instance is no duplicate", r)
	}
	// The deleted one too: the feed is the source of truth.
	want := []calsyncd.Key{{UID: "s", RecurrenceID: "20270111T090000Z"}, {UID: "s", RecurrenceID: "20270118T090000Z"}}
	if len(r.Edited) != 2 {
		t.Fatalf("edited %+v, want %v", r.Edited, want)
	}
	for i, m := range r.Edited {
		if m.Key != want[i] || m.Hash != "" || m.EventID != "" {
			t.Errorf("edited %+v, want a mapping of %v with no hash or id (found again by its original start)", m, want[i])
		}
	}
	// Once written back they are ours, under their own keys: nothing to do.
	mapped = append(mapped, calsyncd.Mapping{Key: want[0], EventID: "gs_20270111T090000Z", Hash: "hi"},
		calsyncd.Mapping{Key: want[1], EventID: "gs_20270118T090000Z", Hash: "hi"})
	owned[1].Key, owned[2].Key, owned[2].Cancelled = want[0], want[1], false
	if r := diff.Reconcile(calsyncd.Owner{}, "team", mapped, owned); len(r.Adopt)+len(r.Refresh)+len(r.Duplicates)+len(r.Edited) > 0 {
		t.Errorf("after the repair: %+v", r)
	}
}
