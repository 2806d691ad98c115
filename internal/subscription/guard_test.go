package subscription_test

import (
	"fmt"
	"strings"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// weeklyFeed is an ICS feed of n events, one a week.
func weeklyFeed(n int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//guard test//EN\r\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:w%02d@example.com\r\nDTSTART;VALUE=DATE:2027%02d%02d\r\nSUMMARY:Week %d\r\nEND:VEVENT\r\n",
			i, 1+i/28, 1+i%28, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

func TestMassDeleteGuard(t *testing.T) {
	const n = 30
	full := weeklyFeed(n)
	tests := []struct {
		name string
		feed []byte
		// wantHeld: the run holds deletes (rather than failing outright).
		wantHeld bool
	}{
		{name: "feed emptied", feed: []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n"), wantHeld: true},
		{name: "feed truncated", feed: full[:len(full)*3/10]},
		{name: "feed replaced by an HTML page", feed: []byte("<!DOCTYPE html><html><head><title>Sign in</title></head></html>")},
		{name: "most events gone", feed: weeklyFeed(5), wantHeld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "")
			h.setFeed(full)
			if rep := h.sync(); rep.Run.Created != n {
				t.Fatalf("first sync created %d", rep.Run.Created)
			}
			h.setFeed(tt.feed)
			for run := 1; run <= 2; run++ {
				rep := h.sync()
				if got := len(h.fake.Events(testCalendar)); got != n {
					t.Fatalf("run %d: calendar holds %d events, want all %d kept", run, got, n)
				}
				st, _ := h.store.Subscription(t.Context(), "team")
				if tt.wantHeld && (rep.Run.HeldDeletes == 0 || st.HeldDeletes == 0) {
					t.Fatalf("run %d: held deletes not flagged (run %d, state %d)", run, rep.Run.HeldDeletes, st.HeldDeletes)
				}
				if !tt.wantHeld && rep.Run.Outcome != calsyncd.OutcomeFailed && rep.Run.HeldDeletes == 0 {
					t.Fatalf("run %d: outcome %s with nothing held", run, rep.Run.Outcome)
				}
			}
			if !tt.wantHeld {
				return
			}
			// The third consecutive run releases the deletes.
			rep := h.sync()
			want := 0
			if strings.Contains(string(tt.feed), "VEVENT") {
				want = 5
			}
			if got := len(h.fake.Events(testCalendar)); got != want || rep.Run.HeldDeletes != 0 {
				t.Fatalf("third run: calendar holds %d events (held %d), want %d", got, rep.Run.HeldDeletes, want)
			}
			if st, _ := h.store.Subscription(t.Context(), "team"); st.HeldDeletes != 0 || st.GuardRuns != 0 {
				t.Fatalf("guard state not cleared: %+v", st)
			}
		})
	}
}

func TestAllowDeletesReleasesHeldDeletesAtOnce(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(weeklyFeed(30))
	h.sync()
	h.setFeed(weeklyFeed(2))
	if rep := h.sync(); rep.Run.HeldDeletes != 28 {
		t.Fatalf("held %d, want 28", rep.Run.HeldDeletes)
	}
	rep := h.syncWith(subscription.Options{AllowDeletes: true})
	if rep.Run.Deleted != 28 || len(h.fake.Events(testCalendar)) != 2 {
		t.Fatalf("deleted %d, calendar holds %d", rep.Run.Deleted, len(h.fake.Events(testCalendar)))
	}
}

func TestGuardResetsWhenTheFeedRecovers(t *testing.T) {
	h := newHarness(t, "")
	full := weeklyFeed(30)
	h.setFeed(full)
	h.sync()
	h.setFeed(weeklyFeed(3))
	h.sync()
	h.sync()
	h.setFeed(full) // the feed comes back before the third run
	if rep := h.sync(); rep.Run.HeldDeletes != 0 || (rep.Run.Outcome != calsyncd.OutcomeOK && rep.Run.Outcome != calsyncd.OutcomeNotModified) {
		t.Fatalf("recovered feed: %+v", rep.Run)
	}
	h.setFeed(weeklyFeed(3))
	if rep := h.sync(); rep.Run.HeldDeletes != 27 {
		t.Fatalf("a new mass delete starts counting afresh: held %d", rep.Run.HeldDeletes)
	}
	if len(h.fake.Events(testCalendar)) != 30 {
		t.Fatal("deleted before three consecutive runs")
	}
}
