package subscription_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/mapping"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// driftFeed has a single event, a weekly series and an override of the
// series' third week.
const driftFeed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" +
	"BEGIN:VEVENT\r\nUID:single@example.com\r\nDTSTART:20270111T090000Z\r\nDTEND:20270111T100000Z\r\n" +
	"SUMMARY:Review\r\nLOCATION:Room 1\r\nDESCRIPTION:The quarterly review\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:series@example.com\r\nDTSTART;TZID=Europe/Berlin:20270104T100000\r\n" +
	"DTEND;TZID=Europe/Berlin:20270104T103000\r\nRRULE:FREQ=WEEKLY;COUNT=6\r\n" +
	"SUMMARY:Standup\r\nLOCATION:Room 2\r\nDESCRIPTION:Daily-ish\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:series@example.com\r\nRECURRENCE-ID;TZID=Europe/Berlin:20270118T100000\r\n" +
	"DTSTART;TZID=Europe/Berlin:20270118T110000\r\nDTEND;TZID=Europe/Berlin:20270118T113000\r\n" +
	"SUMMARY:Standup (late)\r\nLOCATION:Room 2\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// driftReadings are the emulator's readings the drift tests run under:
// every switch's every value (CoveringReadings).
func driftReadings() []gcalfake.Readings { return gcalfake.CoveringReadings() }

func (m *mirror) eventByID(id string) *calendar.Event {
	m.t.Helper()
	for _, ev := range m.fake.AllEvents(testCalendar) {
		if ev.Id == id {
			return ev
		}
	}
	m.t.Fatalf("no event %s in Google", id)
	return nil
}

func (m *mirror) reconcile(what string) subscription.Report {
	m.t.Helper()
	rep := m.syncWith(subscription.Options{Reconcile: true})
	if rep.Run.Outcome != calsyncd.OutcomeOK {
		m.t.Fatalf("%s: %s (%v) %+v", what, rep.Run.Outcome, rep.Err, rep.Run)
	}
	return rep
}

// Reconcile repairs content drift, not only deletions: an owned event
// whose title, time, location or description a person edited in Google is
// written back to the feed's version, while the reminders and colour the
// person set are kept; the run counts it as repaired, and the next
// reconcile finds nothing to repair. An edit of a person-owned field alone
// is no drift.
func TestReconcileRepairsContentDrift(t *testing.T) {
	single := mapping.EventID("", "team", calsyncd.Key{UID: "single@example.com"}, 0)
	series := mapping.EventID("", "team", calsyncd.Key{UID: "series@example.com"}, 0)
	personal := func(ev *calendar.Event) {
		ev.ColorId = "11"
		ev.Reminders = &calendar.EventReminders{Overrides: []*calendar.EventReminder{{Method: "popup", Minutes: 42}}}
	}
	for _, tc := range []struct {
		name string
		id   string
		edit func(ev *calendar.Event)
	}{
		{"a single event's title", single, func(ev *calendar.Event) { ev.Summary = "Renamed by hand" }},
		{"a single event's time", single, func(ev *calendar.Event) {
			ev.Start = &calendar.EventDateTime{DateTime: "2027-01-11T15:00:00Z"}
			ev.End = &calendar.EventDateTime{DateTime: "2027-01-11T16:00:00Z"}
		}},
		{"a single event's location", single, func(ev *calendar.Event) { ev.Location = "Somewhere else" }},
		{"a single event's description", single, func(ev *calendar.Event) { ev.Description = "Notes typed into Google" }},
		{"a series' title", series, func(ev *calendar.Event) { ev.Summary = "Standup, renamed" }},
		{"a series' time", series, func(ev *calendar.Event) {
			ev.Start = &calendar.EventDateTime{DateTime: "2027-01-04T08:00:00+01:00", TimeZone: "Europe/Berlin"}
			ev.End = &calendar.EventDateTime{DateTime: "2027-01-04T08:30:00+01:00", TimeZone: "Europe/Berlin"}
		}},
	} {
		for _, r := range driftReadings() {
			t.Run(tc.name+"/"+r.String(), func(t *testing.T) {
				m := newMirror(t)
				m.fake.SetReadings(r)
				m.setFeed([]byte(driftFeed))
				m.syncOK("first sync")
				m.check("first sync")
				m.fake.Edit(testCalendar, tc.id, func(ev *calendar.Event) {
					tc.edit(ev)
					personal(ev)
				})
				rep := m.reconcile("reconcile after the edit")
				// A series' exceptions may go with a change of its time
				// (Google does not say), and are then written back too.
				most := map[string]int{"a series' time": 2}[tc.name]
				if n := rep.Run.Repaired; n < 1 || n > max(1, most) {
					t.Errorf("repaired %d, want 1 (at most %d) (run %+v)", n, max(1, most), rep.Run)
				}
				m.check("after the repair")
				ev := m.eventByID(tc.id)
				if ev.ColorId != "11" || ev.Reminders == nil || len(ev.Reminders.Overrides) != 1 || ev.Reminders.Overrides[0].Minutes != 42 {
					t.Errorf("the person's colour and reminders were not kept: colour %q, reminders %+v", ev.ColorId, ev.Reminders)
				}
				if rep := m.reconcile("the next reconcile"); rep.Run.Repaired != 0 || rep.Run.Updated != 0 {
					t.Errorf("the next reconcile repaired %d, updated %d, want 0", rep.Run.Repaired, rep.Run.Updated)
				}
			})
		}
	}

	t.Run("only the person's fields changed", func(t *testing.T) {
		m := newMirror(t)
		m.setFeed([]byte(driftFeed))
		m.syncOK("first sync")
		m.fake.Edit(testCalendar, single, personal)
		before := totalWrites(m.writes())
		if rep := m.reconcile("reconcile"); rep.Run.Repaired != 0 {
			t.Errorf("repaired %d, want 0: colour and reminders are the person's", rep.Run.Repaired)
		}
		if n := totalWrites(m.writes()) - before; n != 0 {
			t.Errorf("%d writes, want none", n)
		}
	})

	t.Run("an override's title", func(t *testing.T) {
		m := newMirror(t)
		m.setFeed([]byte(driftFeed))
		m.syncOK("first sync")
		var inst string
		for _, o := range m.agenda() {
			if o.Summary == "Standup (late)" {
				inst = o.EventID
			}
		}
		if inst == "" {
			t.Fatal("the override is not in Google")
		}
		m.fake.Edit(testCalendar, inst, func(ev *calendar.Event) { ev.Summary = "Late standup, renamed" })
		if rep := m.reconcile("reconcile"); rep.Run.Repaired != 1 {
			t.Errorf("repaired %d, want 1", rep.Run.Repaired)
		}
		m.check("after the repair")
	})

	t.Run("a person's own event is never touched", func(t *testing.T) {
		m := newMirror(t)
		m.setFeed([]byte(driftFeed))
		m.syncOK("first sync")
		mine := m.fake.Seed(testCalendar, &calendar.Event{Summary: "Dentist", Start: &calendar.EventDateTime{DateTime: "2027-01-12T09:00:00Z"},
			End: &calendar.EventDateTime{DateTime: "2027-01-12T10:00:00Z"}})
		m.fake.Edit(testCalendar, mine.Id, func(ev *calendar.Event) { ev.Summary = "Dentist (moved)" })
		before := totalWrites(m.writes())
		if rep := m.reconcile("reconcile"); rep.Run.Repaired != 0 {
			t.Errorf("repaired %d, want 0", rep.Run.Repaired)
		}
		if n := totalWrites(m.writes()) - before; n != 0 {
			t.Errorf("%d writes to a calendar whose only change is a person's own event", n)
		}
		if ev := m.eventByID(mine.Id); ev.Summary != "Dentist (moved)" {
			t.Errorf("the person's event became %q", ev.Summary)
		}
	})
}

// An instance of our series a person moved by hand becomes an exception
// that carries the series' marks. Reconcile must not take it for a
// duplicate copy of the series and delete it (that cancels the
// occurrence, as calsyncd once did): it writes the instance
// back to the series' occurrence, found by its original start, keeping
// the colour the person gave it.
func TestReconcileRepairsAnInstanceMovedByHand(t *testing.T) {
	for _, r := range driftReadings() {
		t.Run(r.String(), func(t *testing.T) { repairsAnInstanceMovedByHand(t, r) })
	}
}

func repairsAnInstanceMovedByHand(t *testing.T, r gcalfake.Readings) {
	m := newMirror(t)
	m.fake.SetReadings(r)
	m.setFeed([]byte(driftFeed))
	m.syncOK("first sync")
	series := mapping.EventID("", "team", calsyncd.Key{UID: "series@example.com"}, 0)
	var inst gcalfake.Occurrence
	for _, o := range m.agenda() {
		if o.SeriesID == series && o.Start.Equal(time.Date(2027, 1, 25, 9, 0, 0, 0, time.UTC)) {
			inst = o
		}
	}
	if inst.EventID == "" {
		t.Fatal("no instance on 25 January")
	}
	m.fake.Edit(testCalendar, inst.EventID, func(ev *calendar.Event) {
		ev.Start = &calendar.EventDateTime{DateTime: "2027-01-25T14:00:00Z", TimeZone: "Europe/Berlin"}
		ev.End = &calendar.EventDateTime{DateTime: "2027-01-25T14:30:00Z", TimeZone: "Europe/Berlin"}
		ev.ColorId = "5"
	})
	rep := m.reconcile("reconcile")
	if rep.Run.Repaired != 1 {
		t.Errorf("repaired %d, want 1 (run %+v)", rep.Run.Repaired, rep.Run)
	}
	m.check("after the repair")
	var back *calendar.Event
	for _, ev := range m.fake.AllEvents(testCalendar) {
		if ev.RecurringEventId == series && ev.OriginalStartTime != nil && strings.HasPrefix(ev.OriginalStartTime.DateTime, "2027-01-25") {
			back = ev
		}
	}
	if back == nil || back.Status == "cancelled" || back.ColorId != "5" {
		t.Fatalf("the instance after the repair: %+v", back)
	}
	before := totalWrites(m.writes())
	if rep := m.reconcile("the next reconcile"); rep.Run.Repaired != 0 {
		t.Errorf("the next reconcile repaired %d, want 0", rep.Run.Repaired)
	}
	if n := totalWrites(m.writes()) - before; n != 0 {
		t.Errorf("the next reconcile wrote %d times, want 0", n)
	}
	if rep, _ := m.syncOK("a plain sync"); rep.Run.Deleted != 0 || rep.Run.Updated != 0 {
		t.Errorf("a plain sync after the repair: %+v", rep.Run)
	}
	m.check("after a plain sync")

	// Written back, the instance is ours: edited again, it is repaired
	// again.
	m.fake.Edit(testCalendar, back.Id, func(ev *calendar.Event) { ev.Summary = "Standup, just this once" })
	if rep := m.reconcile("reconcile after a second edit"); rep.Run.Repaired != 1 {
		t.Errorf("after a second edit: repaired %d, want 1 (run %+v)", rep.Run.Repaired, rep.Run)
	}
	m.check("at the end")
}

// The number repaired is reported: in the run's record, in the run's log
// line, in the status's run (which `sync --json` prints too) and in the
// calsyncd_events_repaired_total counter.
func TestARepairIsReported(t *testing.T) {
	m := newMirror(t)
	m.setFeed([]byte(driftFeed))
	m.syncOK("first sync")
	metrics := status.NewMetrics()
	m.runner.Observer = metrics
	logs := captureLog(m.harness)
	m.fake.Edit(testCalendar, mapping.EventID("", "team", calsyncd.Key{UID: "single@example.com"}, 0),
		func(ev *calendar.Event) { ev.Summary = "Renamed by hand" })
	m.reconcile("reconcile")
	runs, err := m.store.Runs(t.Context(), "team", 1)
	if err != nil || len(runs) != 1 || runs[0].Repaired != 1 {
		t.Fatalf("the run's record: %+v, %v", runs, err)
	}
	if got := status.RunOf(runs[0]); got.Repaired != 1 {
		t.Errorf("the status's run: %+v", got)
	}
	if !strings.Contains(logs.String(), "repaired=1") {
		t.Errorf("the run's line does not say repaired=1:\n%s", logs)
	}
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `calsyncd_events_repaired_total{subscription="team"} 1`) {
		t.Errorf("no repaired counter in the metrics:\n%s", rec.Body.String())
	}
}

// A dry-run with --reconcile shows the repair it would make, and makes
// none.
func TestADryRunShowsTheRepair(t *testing.T) {
	m := newMirror(t)
	m.setFeed([]byte(driftFeed))
	m.syncOK("first sync")
	m.fake.Edit(testCalendar, mapping.EventID("", "team", calsyncd.Key{UID: "single@example.com"}, 0),
		func(ev *calendar.Event) { ev.Location = "Typed into Google" })
	before := totalWrites(m.writes())
	pv, err := m.runner.Preview(t.Context(), m.cfg.Subscriptions[0], subscription.Options{Reconcile: true})
	if err != nil || pv.Err != nil {
		t.Fatal(err, pv.Err)
	}
	if pv.Reconcile == nil || pv.Reconcile.Repairing != 1 || len(pv.Updates) != 1 || pv.Updates[0].Key.UID != "single@example.com" {
		t.Fatalf("preview: reconcile %+v, updates %+v", pv.Reconcile, pv.Updates)
	}
	if n := totalWrites(m.writes()) - before; n != 0 {
		t.Errorf("a dry-run wrote %d times", n)
	}
}

// An occurrence of our series a person deleted by hand is restored by the
// next reconcile, as a deleted single event is: the feed is the source of
// truth. (Google keeps a deleted instance as a cancelled exception; where
// it drops our marks from it, reconcile cannot tell it is ours and leaves
// it, as before.)
func TestReconcileRestoresAnOccurrenceDeletedByHand(t *testing.T) {
	for _, r := range driftReadings() {
		t.Run(r.String(), func(t *testing.T) {
			m := newMirror(t)
			m.fake.SetReadings(r)
			m.setFeed([]byte(driftFeed))
			m.syncOK("first sync")
			series := mapping.EventID("", "team", calsyncd.Key{UID: "series@example.com"}, 0)
			var inst gcalfake.Occurrence
			for _, o := range m.agenda() {
				if o.SeriesID == series && o.Start.Equal(time.Date(2027, 2, 1, 9, 0, 0, 0, time.UTC)) {
					inst = o
				}
			}
			if inst.EventID == "" {
				t.Fatal("no instance on 1 February")
			}
			m.fake.Delete(testCalendar, inst.EventID)
			rep := m.reconcile("reconcile")
			if rep.Run.Repaired != 1 {
				t.Errorf("repaired %d, want 1 (run %+v)", rep.Run.Repaired, rep.Run)
			}
			m.check("after the reconcile")
			before := totalWrites(m.writes())
			m.reconcile("the next reconcile")
			if n := totalWrites(m.writes()) - before; n != 0 {
				t.Errorf("the next reconcile wrote %d times, want 0", n)
			}
		})
	}
}
