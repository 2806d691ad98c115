package diff_test

import (
	"fmt"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

func ev(uid, rid, hash string) feed.Event { return feed.Event{UID: uid, RecurrenceID: rid, Hash: hash} }

func mp(uid, rid, hash string) calsyncd.Mapping {
	return calsyncd.Mapping{Key: calsyncd.Key{UID: uid, RecurrenceID: rid}, EventID: "id" + uid + rid, Hash: hash}
}

// render lists a plan's ops as "kind key" in order.
func render(p diff.Plan) []string {
	var out []string
	for _, op := range p.Ops() {
		out = append(out, fmt.Sprintf("%s %s", op.Kind, op.Key))
	}
	return out
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name          string
		desired       []feed.Event
		mapped        []calsyncd.Mapping
		rejected      []calsyncd.Rejection
		want          []string
		unchanged     int
		stillRejected int
	}{
		{name: "empty", want: nil},
		{
			name:    "all new",
			desired: []feed.Event{ev("b", "", "1"), ev("a", "", "1")},
			want:    []string{"create a", "create b"},
		},
		{
			name:      "unchanged",
			desired:   []feed.Event{ev("a", "", "1")},
			mapped:    []calsyncd.Mapping{mp("a", "", "1")},
			unchanged: 1,
		},
		{
			name:    "changed content",
			desired: []feed.Event{ev("a", "", "2")},
			mapped:  []calsyncd.Mapping{mp("a", "", "1")},
			want:    []string{"update a"},
		},
		{
			name:   "gone from feed",
			mapped: []calsyncd.Mapping{mp("a", "", "1")},
			want:   []string{"delete a"},
		},
		{
			name:      "mixed",
			desired:   []feed.Event{ev("keep", "", "1"), ev("change", "", "2"), ev("new", "", "n")},
			mapped:    []calsyncd.Mapping{mp("keep", "", "1"), mp("change", "", "1"), mp("old", "", "o")},
			want:      []string{"create new", "update change", "delete old"},
			unchanged: 1,
		},
		{
			name:    "masters created before instances, instances deleted before masters",
			desired: []feed.Event{ev("s", "20270105T090000Z", "s1"), ev("s", "", "s0")},
			mapped:  []calsyncd.Mapping{mp("t", "", "t0"), mp("t", "20270105T090000Z", "t1")},
			want:    []string{"create s", "create s@20270105T090000Z", "delete t@20270105T090000Z", "delete t"},
		},
		{
			name:          "rejected and unchanged since: not sent again",
			desired:       []feed.Event{ev("bad", "", "1")},
			rejected:      []calsyncd.Rejection{{Key: calsyncd.Key{UID: "bad"}, Hash: "1"}},
			stillRejected: 1,
		},
		{
			name:     "rejected but changed since: tried again",
			desired:  []feed.Event{ev("bad", "", "2")},
			rejected: []calsyncd.Rejection{{Key: calsyncd.Key{UID: "bad"}, Hash: "1"}},
			want:     []string{"create bad"},
		},
		{
			name:      "duplicate keys in the desired list: first wins",
			desired:   []feed.Event{ev("a", "", "1"), ev("a", "", "2")},
			mapped:    []calsyncd.Mapping{mp("a", "", "1")},
			unchanged: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := diff.Compute(tt.desired, tt.mapped, tt.rejected)
			if len(p.Rekeys) != 0 {
				t.Errorf("unexpected rekeys %+v", p.Rekeys)
			}
			got := render(p)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("ops = %v, want %v", got, tt.want)
			}
			if p.Unchanged != tt.unchanged || p.StillRejected != tt.stillRejected {
				t.Errorf("unchanged %d stillRejected %d, want %d %d", p.Unchanged, p.StillRejected, tt.unchanged, tt.stillRejected)
			}
			for _, op := range p.Ops() {
				if (op.Kind != diff.Delete) != (op.Event != nil) || (op.Kind != diff.Create) != (op.Mapping != nil) {
					t.Errorf("op %s %s carries the wrong payload", op.Kind, op.Key)
				}
			}
		})
	}
}

func TestCancelledSingleEventsAreNotWanted(t *testing.T) {
	cancelled := ev("gone", "", "2")
	cancelled.Status = feed.StatusCancelled
	newCancelled := ev("never", "", "1")
	newCancelled.Status = feed.StatusCancelled
	instance := ev("series", "20270105T090000Z", "1")
	instance.Status = feed.StatusCancelled
	p := diff.Compute([]feed.Event{cancelled, newCancelled, instance}, []calsyncd.Mapping{mp("gone", "", "1")}, nil)
	if got := fmt.Sprint(render(p)); got != "[create series@20270105T090000Z delete gone]" {
		t.Errorf("ops = %s", got)
	}
}

func TestUnchangedContentUnderNewKeysIsRekeyed(t *testing.T) {
	// A feed that minted new UIDs: same content, new keys. One event really
	// changed, one really left, one is really new.
	desired := []feed.Event{ev("n1", "", "h1"), ev("n2", "", "h2"), ev("n3", "", "changed"), ev("n4", "", "brand-new"),
		ev("n1", "20270105T090000Z", "i1")}
	mapped := []calsyncd.Mapping{mp("o1", "", "h1"), mp("o2", "", "h2"), mp("o3", "", "h3"), mp("o4", "", "gone"),
		mp("o1", "20270112T090000Z", "i1")}
	p := diff.Compute(desired, mapped, nil)
	var rekeys []string
	for _, r := range p.Rekeys {
		rekeys = append(rekeys, r.From.Key.String()+"→"+r.To.String())
	}
	if fmt.Sprint(rekeys) != "[o1→n1 o2→n2]" {
		t.Errorf("rekeys = %v", rekeys)
	}
	// Content that changed, or an instance of another date, is no twin.
	if got := fmt.Sprint(render(p)); got != "[create n3 create n4 create n1@20270105T090000Z delete o1@20270112T090000Z delete o4 delete o3]" {
		t.Errorf("ops = %s", got)
	}
	if p.Unchanged != 2 {
		t.Errorf("unchanged = %d, want 2", p.Unchanged)
	}
}

// An exception lives in its series in Google: it moves to a new key with
// its series, never into a series written anew (the feed without UIDs
// whose series changed: its identity changed with it).
func TestInstancesAreRekeyedOnlyWithTheirSeries(t *testing.T) {
	series := func(uid, hash string) feed.Event {
		e := ev(uid, "", hash)
		e.Recurrence = []string{"RRULE:FREQ=WEEKLY"}
		return e
	}
	desired := []feed.Event{series("n1", "s1"), ev("n1", "20270105T090000Z", "i1"), series("n2", "changed"), ev("n2", "20270105T090000Z", "i2")}
	mapped := []calsyncd.Mapping{mp("o1", "", "s1"), mp("o1", "20270105T090000Z", "i1"), mp("o2", "", "s2"), mp("o2", "20270105T090000Z", "i2")}
	p := diff.Compute(desired, mapped, nil)
	var rekeys []string
	for _, r := range p.Rekeys {
		rekeys = append(rekeys, r.From.Key.String()+"→"+r.To.String())
	}
	if fmt.Sprint(rekeys) != "[o1→n1 o1@20270105T090000Z→n1@20270105T090000Z]" {
		t.Errorf("rekeys = %v", rekeys)
	}
	if got := fmt.Sprint(render(p)); got != "[create n2 create n2@20270105T090000Z delete o2@20270105T090000Z delete o2]" {
		t.Errorf("ops = %s", got)
	}
}
