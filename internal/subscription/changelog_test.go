package subscription_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// TestRunsKeepWhatTheyWrote: each run keeps, for the status page, what
// Google took of its writes with the title and start written; a delete
// carries the title its event was written with.
func TestRunsKeepWhatTheyWrote(t *testing.T) {
	h := newHarness(t, teamFeed)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	steps := []struct {
		name string
		edit func([]byte) []byte
		want []calsyncd.RunChange // in order; empty: kept nothing
		n    int                  // how many kept
	}{
		{"backfill", func(b []byte) []byte { return b }, nil, 9},
		{"one update", func(b []byte) []byte {
			return bytes.Replace(b, []byte("SUMMARY:Sprint retrospective"), []byte("SUMMARY:Sprint retro <online>"), 1)
		}, []calsyncd.RunChange{{Kind: calsyncd.RunUpdated, Title: "Sprint retro <online>", Start: time.Date(2027, 1, 29, 14, 0, 0, 0, berlin)}}, 1},
		{"one delete", func(b []byte) []byte { return removeEvent(t, b, "UID:oncall-handover-2027-02@example.com") },
			[]calsyncd.RunChange{{Kind: calsyncd.RunDeleted, Key: calsyncd.Key{UID: "oncall-handover-2027-02@example.com"}, Title: "On-call handover", Start: time.Date(2027, 2, 1, 9, 0, 0, 0, berlin)}}, 1},
		{"nothing changed", func(b []byte) []byte { return b }, nil, 0},
	}
	for _, st := range steps {
		h.setFeed(st.edit(h.feed()))
		rep := h.sync()
		got, err := h.store.RunChanges(context.Background(), rep.Run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != st.n {
			t.Fatalf("%s: run kept %d changes, want %d: %+v", st.name, len(got), st.n, got)
		}
		for i, w := range st.want {
			c := got[i]
			if c.Kind != w.Kind || c.Title != w.Title || !c.Start.Equal(w.Start) || (w.Key.UID != "" && c.Key != w.Key) {
				t.Errorf("%s: change %d = %+v, want %+v", st.name, i, c, w)
			}
		}
		if st.name == "backfill" {
			for _, c := range got {
				if c.Kind != calsyncd.RunCreated || c.Title == "" || c.Start.IsZero() {
					t.Errorf("backfill kept %+v, want a titled create", c)
				}
			}
		}
	}
}
