package diff_test

import (
	"fmt"
	"slices"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

func TestKeep(t *testing.T) {
	key := func(uid, rid string) calsyncd.Key { return calsyncd.Key{UID: uid, RecurrenceID: rid} }
	m := func(k calsyncd.Key) *calsyncd.Mapping { return &calsyncd.Mapping{Key: k} }
	const rid = "20270104T090000Z"
	// A plan with a new event, a new series with its exception, an
	// exception added to a series written before, an update of that
	// series (dropping an occurrence whose exception is forgotten), a
	// single event gone and a series gone with its exception.
	plan := func() diff.Plan {
		return diff.Plan{
			Creates: []diff.Op{
				{Kind: diff.Create, Key: key("new", "")},
				{Kind: diff.Create, Key: key("fresh", "")},
				{Kind: diff.Create, Key: key("fresh", rid)},
				{Kind: diff.Create, Key: key("written", rid), ParentMapping: m(key("written", ""))},
			},
			Updates: []diff.Op{{Kind: diff.Update, Key: key("written", ""), Mapping: m(key("written", ""))}},
			Deletes: []diff.Op{
				{Kind: diff.Delete, Key: key("written", "20270111T090000Z"), Forget: true},
				{Kind: diff.Delete, Key: key("gone", "")},
				{Kind: diff.Delete, Key: key("left", rid), Forget: true},
				{Kind: diff.Delete, Key: key("left", "")},
			},
			Reverts: 1,
		}
	}
	names := func(ops []diff.Op) []string {
		var out []string
		for _, op := range ops {
			out = append(out, fmt.Sprintf("%s %s", op.Kind, op.Key))
		}
		return out
	}
	tests := []struct {
		name                   string
		w                      diff.Writes
		plan, deletes, updates []string
	}{
		{name: "mirror keeps nothing", plan: names(plan().Ops())},
		{
			name: "never delete",
			w:    diff.Writes{NeverDelete: true},
			// The exception forgotten with its series' update goes on;
			// the one of the series kept stays with it.
			plan:    []string{"create new", "create fresh", "update written", "create fresh@" + rid, "create written@" + rid, "delete written@20270111T090000Z"},
			deletes: []string{"delete gone", "delete left"},
		},
		{
			name:    "never update",
			w:       diff.Writes{NeverUpdate: true},
			plan:    []string{"create new", "create fresh", "create fresh@" + rid, "delete gone", "delete left@" + rid, "delete left"},
			updates: []string{"create written@" + rid, "update written"},
		},
		{
			name:    "never either",
			w:       diff.Writes{NeverDelete: true, NeverUpdate: true},
			plan:    []string{"create new", "create fresh", "create fresh@" + rid},
			deletes: []string{"delete gone", "delete left"},
			updates: []string{"create written@" + rid, "update written"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kept := plan().Keep(tt.w)
			if g := names(got.Ops()); !slices.Equal(g, tt.plan) {
				t.Errorf("plan = %q, want %q", g, tt.plan)
			}
			if g := names(kept.Deletes); !slices.Equal(g, tt.deletes) {
				t.Errorf("kept deletes = %q, want %q", g, tt.deletes)
			}
			if g := names(kept.Updates); !slices.Equal(g, tt.updates) {
				t.Errorf("kept updates = %q, want %q", g, tt.updates)
			}
			if tt.w.NeverUpdate && got.Reverts != 0 {
				t.Errorf("reverts = %d, want 0", got.Reverts)
			}
		})
	}
}
