package diff_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

func TestReconcile(t *testing.T) {
	const sub = "team"
	key := func(uid string) calsyncd.Key { return calsyncd.Key{UID: uid} }
	id := func(uid string, gen int) string { return mapping.EventID("", sub, key(uid), gen) }
	owned := func(uid, eventID, hash string, cancelled bool, updated int) diff.Owned {
		return diff.Owned{Key: key(uid), EventID: eventID, Hash: hash, ETag: "e-" + eventID[:6], Cancelled: cancelled,
			Updated: time.Unix(int64(updated), 0)}
	}
	mapped := func(uid, eventID, hash string) calsyncd.Mapping {
		return calsyncd.Mapping{Key: key(uid), EventID: eventID, Hash: hash, ETag: "etag"}
	}
	tests := []struct {
		name    string
		mapped  []calsyncd.Mapping
		owned   []diff.Owned
		adopt   []string // "uid=eventID/gen/hash"
		refresh []string // uid
		dups    []string // eventID
	}{
		{name: "in step", mapped: []calsyncd.Mapping{mapped("a", id("a", 0), "h")}, owned: []diff.Owned{owned("a", id("a", 0), "h", false, 1)}},
		{
			name:  "lost database: adopt what we own",
			owned: []diff.Owned{owned("a", id("a", 0), "ha", false, 1), owned("b", id("b", 2), "hb", false, 1)},
			adopt: []string{"a=" + id("a", 0) + "/0/ha", "b=" + id("b", 2) + "/2/hb"},
		},
		{
			name:    "deleted by hand: refresh so the plan restores it",
			mapped:  []calsyncd.Mapping{mapped("a", id("a", 0), "h")},
			owned:   []diff.Owned{owned("a", id("a", 0), "h", true, 1)},
			refresh: []string{"a"},
		},
		{
			name:    "purged entirely: refresh too",
			mapped:  []calsyncd.Mapping{mapped("a", id("a", 0), "h")},
			refresh: []string{"a"},
		},
		{
			name:   "duplicates: keep the mapped copy",
			mapped: []calsyncd.Mapping{mapped("a", id("a", 1), "h")},
			owned:  []diff.Owned{owned("a", id("a", 0), "h", false, 9), owned("a", id("a", 1), "h", false, 1), owned("a", "abcdefgh", "h", false, 5)},
			dups:   []string{id("a", 0), "abcdefgh"},
		},
		{
			name:  "duplicates without mapping: keep the highest generation",
			owned: []diff.Owned{owned("a", "abcdefgh", "h", false, 9), owned("a", id("a", 0), "h", false, 1), owned("a", id("a", 3), "h2", false, 2)},
			adopt: []string{"a=" + id("a", 3) + "/3/h2"},
			dups:  []string{"abcdefgh", id("a", 0)},
		},
		{
			name:  "foreign ids: keep the newest",
			owned: []diff.Owned{owned("a", "abcdefgh", "h1", false, 1), owned("a", "bcdefghi", "h2", false, 5)},
			adopt: []string{"a=bcdefghi/0/h2"},
			dups:  []string{"abcdefgh"},
		},
		{
			name:   "mapping points at a cancelled copy while a live one exists: adopt the live one",
			mapped: []calsyncd.Mapping{mapped("a", id("a", 0), "h")},
			owned:  []diff.Owned{owned("a", id("a", 0), "h", true, 1), owned("a", id("a", 1), "h", false, 2)},
			adopt:  []string{"a=" + id("a", 1) + "/1/h"},
		},
		{
			name:   "an event rekeyed to a new UID is neither adopted under its old one nor refreshed",
			mapped: []calsyncd.Mapping{mapped("new", id("old", 0), "h")},
			owned:  []diff.Owned{owned("old", id("old", 0), "h", false, 1)},
		},
		{
			name:   "a missing overridden instance is not refreshed",
			mapped: []calsyncd.Mapping{{Key: calsyncd.Key{UID: "s", RecurrenceID: "20270105T090000Z"}, EventID: "xyz12", Hash: "h"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := diff.Reconcile(calsyncd.Owner{}, sub, tt.mapped, tt.owned)
			var adopt, refresh, dups []string
			for _, m := range r.Adopt {
				adopt = append(adopt, fmt.Sprintf("%s=%s/%d/%s", m.Key.UID, m.EventID, m.Generation, m.Hash))
			}
			for _, m := range r.Refresh {
				if m.Hash != "" || m.ETag != "" {
					t.Errorf("refreshed mapping keeps hash %q etag %q", m.Hash, m.ETag)
				}
				refresh = append(refresh, m.Key.UID)
			}
			for _, op := range r.Duplicates {
				if op.Kind != diff.Delete || op.Mapping == nil {
					t.Errorf("duplicate op = %+v", op)
				}
				dups = append(dups, op.Mapping.EventID)
			}
			sort.Strings(dups)
			want := append([]string(nil), tt.dups...)
			sort.Strings(want)
			if fmt.Sprint(adopt) != fmt.Sprint(tt.adopt) || fmt.Sprint(refresh) != fmt.Sprint(tt.refresh) || fmt.Sprint(dups) != fmt.Sprint(want) {
				t.Errorf("adopt %v refresh %v dups %v\nwant adopt %v refresh %v dups %v", adopt, refresh, dups, tt.adopt, tt.refresh, want)
			}
		})
	}
}
