package diff_test

import (
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

func TestVacate(t *testing.T) {
	a, b := calsyncd.Key{UID: "a"}, calsyncd.Key{UID: "b"}
	series := calsyncd.Key{UID: "s"}
	exception := calsyncd.InstanceKey(series, "20270105T090000Z")
	owned := []diff.Owned{
		{Key: b, EventID: "idb", ETag: `"2"`},
		{Key: a, EventID: "ida", ETag: `"1"`},
		{Key: series, EventID: "ids", ETag: `"3"`},
		{Key: exception, EventID: "ids_x", ETag: `"4"`},
		{Key: calsyncd.Key{UID: "gone"}, EventID: "idg", Cancelled: true},
	}
	mirror := []calsyncd.Mapping{{Key: a, EventID: "ida", ETag: `"1"`}, {Key: b, EventID: "idb", ETag: `"9"`}}
	for name, tt := range map[string]struct {
		sameID bool
		want   []string
	}{
		// Another calendar: every live event but the exception.
		"another calendar": {false, []string{"ida", "idb", "ids"}},
		// The same id: a is the mirror itself (same id, same etag); b has
		// another etag, so it is another calendar's copy.
		"the same calendar id": {true, []string{"idb", "ids"}},
	} {
		var got []string
		for _, op := range diff.Vacate(owned, mirror, tt.sameID) {
			if op.Kind != diff.Delete || op.Mapping == nil || op.Mapping.Key != op.Key {
				t.Fatalf("%s: op %+v", name, op)
			}
			got = append(got, op.Mapping.EventID)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: deletes %v, want %v", name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: deletes %v, want %v", name, got, tt.want)
			}
		}
	}
}
