package subscription_test

import (
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/mapping"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// summaries are the titles of our events in the test calendar, by UID.
func (h *harness) summaries() map[string]string {
	out := map[string]string{}
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.Status != "cancelled" && ev.ExtendedProperties != nil {
			out[ev.ExtendedProperties.Private[gcalwriter.PropUID]] = ev.Summary
		}
	}
	return out
}

// renamedFeed is weeklyFeed(n) with every title changed.
func renamedFeed(n int) []byte {
	return []byte(strings.ReplaceAll(string(weeklyFeed(n)), "SUMMARY:Week ", "SUMMARY:Renamed week "))
}

// The write policy end to end: deletes: never keeps in Google what leaves
// the feed (and holds nothing: no guard, no pending deletes, mappings
// kept so a return is no second copy); updates: never leaves what was
// written as it was, while new events are still created.
func TestWritePolicy(t *testing.T) {
	const n = 30
	empty := []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n")
	tests := []struct {
		name             string
		deletes, updates string
		filter           bool
		feed             []byte
		// want after two runs of feed
		events, deleted, updated, created, keptDeletes, keptUpdates int
		renamed                                                     int // events whose Google title is the feed's new one
	}{
		{name: "mirror: the feed empties, held by the guard", feed: empty, events: n},
		{name: "deletes never: the feed empties", deletes: "never", feed: empty, events: n, keptDeletes: n},
		{name: "mirror: five leave", feed: weeklyFeed(n - 5), events: n - 5, deleted: 5},
		{name: "deletes never: five leave", deletes: "never", feed: weeklyFeed(n - 5), events: n, keptDeletes: 5},
		{name: "deletes never: a filter excludes", deletes: "never", filter: true, feed: weeklyFeed(n), events: n, keptDeletes: 11},
		{name: "deletes mirror: a filter excludes", deletes: "mirror", filter: true, feed: weeklyFeed(n), events: n - 11, deleted: 11},
		{name: "mirror: every title changes", feed: renamedFeed(n), events: n, updated: n, renamed: n},
		{name: "updates never: every title changes", updates: "never", feed: renamedFeed(n), events: n, keptUpdates: n},
		{name: "updates never: new events are created", updates: "never", feed: renamedFeed(n + 3), events: n + 3, created: 3, keptUpdates: n, renamed: 3},
		{name: "both never: renamed and shrunk", deletes: "never", updates: "never", feed: renamedFeed(n - 10), events: n, keptDeletes: 10, keptUpdates: n - 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "")
			h.setFeed(weeklyFeed(n))
			if rep := h.sync(); rep.Run.Created != n {
				t.Fatalf("first sync created %d", rep.Run.Created)
			}
			sub := &h.cfg.Subscriptions[0]
			if tt.deletes != "" {
				sub.Deletes = ptr(tt.deletes)
			}
			if tt.updates != "" {
				sub.Updates = ptr(tt.updates)
			}
			if tt.filter {
				// Weeks 1, 10-19: 11 events.
				sub.Filters = []config.Filter{filter(true, "summary", `^Week 1[0-9]?$`)}
			}
			h.setFeed(tt.feed)
			var deleted, updated, created int
			var rep subscription.Report
			for run := 1; run <= 2; run++ {
				r := h.syncWith(subscription.Options{})
				deleted, updated, created = deleted+r.Run.Deleted, updated+r.Run.Updated, created+r.Run.Created
				if run == 1 {
					// The second run finds the feed unchanged (not modified).
					rep = r
				}
			}
			if got := len(h.summaries()); got != tt.events {
				t.Errorf("Google holds %d of our events, want %d", got, tt.events)
			}
			if deleted != tt.deleted || updated != tt.updated || created != tt.created {
				t.Errorf("deleted %d, updated %d, created %d; want %d, %d, %d", deleted, updated, created, tt.deleted, tt.updated, tt.created)
			}
			if rep.Plan.KeptDeletes != tt.keptDeletes || rep.Plan.KeptUpdates != tt.keptUpdates {
				t.Errorf("kept %d deletes, %d updates; want %d, %d", rep.Plan.KeptDeletes, rep.Plan.KeptUpdates, tt.keptDeletes, tt.keptUpdates)
			}
			renamed := 0
			for _, s := range h.summaries() {
				if strings.HasPrefix(s, "Renamed") {
					renamed++
				}
			}
			if renamed != tt.renamed {
				t.Errorf("%d events show the feed's new title, want %d", renamed, tt.renamed)
			}
			st, _ := h.store.Subscription(t.Context(), "team")
			if tt.deletes == "never" && (rep.Run.HeldDeletes != 0 || st.HeldDeletes != 0 || st.GuardRuns != 0) {
				t.Errorf("deletes: never held deletes: run %d, state %d, guard runs %d", rep.Run.HeldDeletes, st.HeldDeletes, st.GuardRuns)
			}
			if tt.deletes == "never" {
				if mapped, _ := h.store.CountMappings(t.Context(), "team"); mapped != tt.events {
					t.Errorf("the store maps %d events, want every one kept in Google (%d)", mapped, tt.events)
				}
			}
			if rep.Run.Outcome != calsyncd.OutcomeOK && rep.Run.Outcome != calsyncd.OutcomePartial {
				t.Errorf("outcome %s (%v)", rep.Run.Outcome, rep.Err)
			}
		})
	}
}

// An event kept by deletes: never that comes back to the feed is its
// mapped event again, not a second copy; switching back to mirror deletes
// what the feed no longer has (weighed by the guard as a configuration
// change).
func TestDeletesNeverReturnAndSwitchBack(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(weeklyFeed(20))
	h.sync()
	h.cfg.Subscriptions[0].Deletes = ptr("never")
	h.setFeed(weeklyFeed(15))
	if rep := h.sync(); rep.Run.Deleted != 0 || rep.Plan.KeptDeletes != 5 {
		t.Fatalf("deletes: never: deleted %d, kept %d; want 0, 5", rep.Run.Deleted, rep.Plan.KeptDeletes)
	}
	before := h.writes()
	h.setFeed(weeklyFeed(20))
	rep := h.sync()
	if rep.Run.Created != 0 || h.writes()["insert"] != before["insert"] || len(h.summaries()) != 20 {
		t.Fatalf("the kept events came back: created %d (inserts %d → %d), Google holds %d; want no copy",
			rep.Run.Created, before["insert"], h.writes()["insert"], len(h.summaries()))
	}
	h.setFeed(weeklyFeed(15))
	h.sync()
	h.cfg.Subscriptions[0].Deletes = ptr("mirror")
	// The feed is unchanged: the new policy alone makes the run read it.
	if rep := h.sync(); rep.Run.Deleted != 5 || len(h.summaries()) != 15 {
		t.Fatalf("back to mirror: deleted %d, Google holds %d; want 5, 15", rep.Run.Deleted, len(h.summaries()))
	}
}

// updates: never leaves a person's edit in Google as they made it: a
// reconcile repairs nothing of it, nor restores an event they deleted;
// under mirror the same reconcile writes both back.
func TestUpdatesNeverLeavesDrift(t *testing.T) {
	for _, tt := range []struct {
		updates  string
		repaired bool
	}{{"mirror", true}, {"never", false}} {
		t.Run(tt.updates, func(t *testing.T) {
			h := newHarness(t, "")
			h.setFeed(weeklyFeed(12))
			h.sync()
			h.cfg.Subscriptions[0].Updates = ptr(tt.updates)
			edited := mapping.EventID("", "team", calsyncd.Key{UID: "w03@example.com"}, 0)
			gone := mapping.EventID("", "team", calsyncd.Key{UID: "w04@example.com"}, 0)
			h.fake.Edit(testCalendar, edited, func(ev *calendar.Event) { ev.Summary = "Moved to the pub" })
			h.fake.Delete(testCalendar, gone)
			rep := h.syncWith(subscriptionReconcile())
			got := h.summaries()
			if repaired := got["w03@example.com"] == "Week 3" && got["w04@example.com"] == "Week 4"; repaired != tt.repaired {
				t.Fatalf("updates: %s: after a reconcile Google shows %q and %q (repaired %d, kept %d updates); want repaired %t",
					tt.updates, got["w03@example.com"], got["w04@example.com"], rep.Run.Repaired, rep.Plan.KeptUpdates, tt.repaired)
			}
			if !tt.repaired && (got["w03@example.com"] != "Moved to the pub" || rep.Plan.KeptUpdates != 2) {
				t.Fatalf("the person's edit: %q, kept updates %d; want it kept, 2 kept", got["w03@example.com"], rep.Plan.KeptUpdates)
			}
		})
	}
}

// window.past: now mirrors future events only: an event that ended
// before the pass is not created, not updated and not deleted; one under
// way or to come is mirrored. window.past: 0 is the opposite, no limit.
func TestWindowPastNow(t *testing.T) {
	now := time.Date(2027, 3, 15, 12, 0, 0, 0, time.UTC)
	old, yesterday, today, soon := now.AddDate(-1, 0, 0), now.AddDate(0, 0, -1), now, now.AddDate(0, 0, 5)
	for _, tt := range []struct {
		name   string
		window config.Window
		first  int // created by the first sync
	}{
		{"past now", config.Window{PastNow: true}, 2},
		{"past 0 (unbounded)", config.Window{}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "")
			clock := now
			h.runner.Now = func() time.Time { return clock }
			w := tt.window
			h.cfg.Subscriptions[0].Window = &w
			h.setFeed(datedFeed("d", old, yesterday, today, soon))
			if rep := h.sync(); rep.Run.Created != tt.first {
				t.Fatalf("first sync created %d, want %d", rep.Run.Created, tt.first)
			}
			if !w.PastNow {
				return
			}
			// Two days on, today's event has passed, soon's is still
			// ahead. The feed renames every event and drops today's.
			clock = now.AddDate(0, 0, 2)
			body := strings.ReplaceAll(string(datedFeed("d", old, yesterday, today, soon)), "SUMMARY:Day", "SUMMARY:New day")
			h.setFeed(removeEvent(t, []byte(body), "UID:d2@example.com"))
			rep := h.sync()
			got := h.summaries()
			if rep.Run.Deleted != 0 || rep.Run.Created != 0 || rep.Run.Updated != 1 {
				t.Fatalf("two days on: deleted %d, created %d, updated %d; want 0, 0, 1 (only the event ahead)", rep.Run.Deleted, rep.Run.Created, rep.Run.Updated)
			}
			if got["d2@example.com"] != "Day 2" || got["d3@example.com"] != "New day 3" || len(got) != 2 {
				t.Fatalf("Google shows %v: the past event must stay as written, the one ahead follow the feed", got)
			}
		})
	}
}

// updates: never keeps a series as it was written: an occurrence the
// feed cancels afterwards (a cancelled exception) stays in Google, where
// mirroring cancels it; a series new to the feed is created with its
// cancelled occurrence.
func TestUpdatesNeverKeepsASeriesOccurrences(t *testing.T) {
	series := func(uid string, cancelled bool) string {
		s := "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTART:20270104T090000Z\r\nDTEND:20270104T093000Z\r\nRRULE:FREQ=WEEKLY;COUNT=4\r\nSUMMARY:Standup " + uid + "\r\nEND:VEVENT\r\n"
		if cancelled {
			s += "BEGIN:VEVENT\r\nUID:" + uid + "\r\nRECURRENCE-ID:20270111T090000Z\r\nDTSTART:20270111T090000Z\r\nDTEND:20270111T093000Z\r\nSTATUS:CANCELLED\r\nSUMMARY:Standup " + uid + "\r\nEND:VEVENT\r\n"
		}
		return s
	}
	feed := func(body string) []byte {
		return []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" + body + "END:VCALENDAR\r\n")
	}
	count := func(h *harness, summary string) int {
		n := 0
		for _, o := range h.agenda() {
			if o.Summary == summary {
				n++
			}
		}
		return n
	}
	for _, tt := range []struct {
		updates     string
		old, newer  int // occurrences shown of the series written before and of the new one
		keptUpdates int
	}{{"mirror", 3, 3, 0}, {"never", 4, 3, 1}} {
		t.Run(tt.updates, func(t *testing.T) {
			h := newHarness(t, "")
			h.setFeed(feed(series("a@example.com", false)))
			h.sync()
			h.cfg.Subscriptions[0].Updates = ptr(tt.updates)
			h.setFeed(feed(series("a@example.com", true) + series("b@example.com", true)))
			rep := h.sync()
			if got := count(h, "Standup a@example.com"); got != tt.old {
				t.Errorf("the series written before shows %d occurrences, want %d", got, tt.old)
			}
			if got := count(h, "Standup b@example.com"); got != tt.newer {
				t.Errorf("the new series shows %d occurrences, want %d", got, tt.newer)
			}
			if rep.Plan.KeptUpdates != tt.keptUpdates {
				t.Errorf("kept %d updates, want %d", rep.Plan.KeptUpdates, tt.keptUpdates)
			}
		})
	}
}
