package subscription_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

const teamFeed = "../../testdata/feeds/team.ics"

// shown renders what a person sees of an event.
func shown(ev *calendar.Event) string {
	t := func(d *calendar.EventDateTime) string {
		if d.Date != "" {
			return d.Date
		}
		return d.DateTime + " " + d.TimeZone
	}
	return fmt.Sprintf("%s | %s | %s | loc=%q | desc=%q | %s %s %s", ev.Summary, t(ev.Start), t(ev.End), ev.Location,
		ev.Description, ev.Status, ev.Transparency, ev.Visibility)
}

func TestSyncMirrorsFeedIntoGoogle(t *testing.T) {
	h := newHarness(t, teamFeed)
	rep := h.sync()
	// Six single events, the weekly series, its moved and its cancelled
	// instance.
	if rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Created != 9 {
		t.Fatalf("first sync: outcome %s created %d (err %v), want ok and 9", rep.Run.Outcome, rep.Run.Created, rep.Err)
	}
	// What Google stores: the series and its (live) exception among the
	// single events.
	want := []string{
		`Team sync | 2026-12-07T09:30:00+01:00 Europe/Berlin | 2026-12-07T10:00:00+01:00 Europe/Berlin | loc="Room 2.01" | desc="" | confirmed opaque default`,
		`Team sync (moved to Tuesday) | 2026-12-22T14:00:00+01:00 Europe/Berlin | 2026-12-22T14:30:00+01:00 Europe/Berlin | loc="Room 2.01" | desc="" | confirmed opaque default`,
		`Office closed (Epiphany) | 2027-01-06 | 2027-01-07 | loc="" | desc="" | confirmed transparent default`,
		`Quarterly planning | 2027-01-11T10:00:00+01:00 Europe/Berlin | 2027-01-11T11:30:00+01:00 Europe/Berlin | loc="Room 4.12, Building B" | desc="Agenda:\n1. Roadmap\n2. Hiring; budget" | confirmed opaque default`,
		`Release 4.2 go/no-go | 2027-01-15T15:00:00Z  | 2027-01-15T16:00:00Z  | loc="" | desc="Checklist: https://wiki.example.com/release/4.2" | confirmed opaque public`,
		`Sprint retrospective | 2027-01-29T14:00:00+01:00 Europe/Berlin | 2027-01-29T15:00:00+01:00 Europe/Berlin | loc="https://meet.example.com/retro" | desc="" | confirmed opaque default`,
		`On-call handover | 2027-02-01T09:00:00+01:00 Europe/Berlin | 2027-02-01T09:30:00+01:00 Europe/Berlin | loc="" | desc="" | confirmed opaque private`,
		`Team offsite | 2027-02-08 | 2027-02-11 | loc="Lake Constance" | desc="" | confirmed transparent default`,
	}
	got := h.fake.Events(testCalendar)
	if len(got) != len(want) {
		for _, ev := range got {
			t.Log(shown(ev))
		}
		t.Fatalf("calendar holds %d events, want %d", len(got), len(want))
	}
	for i, ev := range got {
		if s := shown(ev); s != want[i] {
			t.Errorf("event %d:\n got %s\nwant %s", i, s, want[i])
		}
		if !gcalwriter.Owned(ev, calsyncd.Owner{}, "team") {
			t.Errorf("event %q lacks our ownership marks: %+v", ev.Summary, ev.ExtendedProperties)
		}
		if len(ev.Attendees) > 0 {
			t.Errorf("event %q has attendees; Google would email them", ev.Summary)
		}
	}
	if src := got[4].Source; src == nil || src.Url != "https://wiki.example.com/release/4.2" {
		t.Errorf("release event source = %+v, want the feed's URL", src)
	}
	if sync := got[0]; len(sync.Recurrence) != 1 || sync.Recurrence[0] != "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=26" {
		t.Errorf("series recurrence = %q", sync.Recurrence)
	}
	if moved := got[1]; moved.RecurringEventId != got[0].Id || moved.OriginalStartTime == nil ||
		moved.OriginalStartTime.DateTime != "2026-12-21T09:30:00+01:00" {
		t.Errorf("moved instance = %s of %q from %+v", moved.Id, moved.RecurringEventId, moved.OriginalStartTime)
	}
	// What a person sees around Christmas: the sync moved to Tuesday the
	// 22nd, none on the 28th.
	var agenda []string
	for _, o := range h.fake.Agenda(testCalendar, time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)) {
		agenda = append(agenda, o.String())
	}
	wantAgenda := []string{
		`2026-12-14T08:30:00Z..2026-12-14T09:00:00Z "Team sync"`,
		`2026-12-22T13:00:00Z..2026-12-22T13:30:00Z "Team sync (moved to Tuesday)"`,
		`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Team sync"`,
	}
	if fmt.Sprint(agenda) != fmt.Sprint(wantAgenda) {
		t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(agenda, "\n"), strings.Join(wantAgenda, "\n"))
	}
	n, err := h.store.CountMappings(t.Context(), "team")
	if err != nil || n != 9 {
		t.Errorf("mappings = %d (%v), want 9", n, err)
	}
}

func TestSecondSyncOfUnchangedFeedWritesNothing(t *testing.T) {
	h := newHarness(t, teamFeed)
	h.sync()
	before := h.writes()
	// A feed server that regenerates DTSTAMP on every request (and sends no
	// validators) must still cost zero writes.
	h.setFeed(bytes.ReplaceAll(h.feed(), []byte("DTSTAMP:20261120T090000Z"), []byte("DTSTAMP:20261129T120000Z")))
	rep := h.sync()
	if d := totalWrites(h.writes()) - totalWrites(before); d != 0 {
		t.Fatalf("second sync made %d writes, want 0", d)
	}
	if rep.Run.Unchanged != 9 || rep.Run.Outcome != calsyncd.OutcomeOK {
		t.Fatalf("second sync: outcome %s unchanged %d, want ok 9", rep.Run.Outcome, rep.Run.Unchanged)
	}
}

func TestChangingOneEventMakesExactlyOneUpdate(t *testing.T) {
	h := newHarness(t, teamFeed)
	h.sync()
	before := h.writes()
	h.setFeed(bytes.Replace(h.feed(), []byte("SUMMARY:Sprint retrospective"), []byte("SUMMARY:Sprint retro (moved online)"), 1))
	rep := h.sync()
	after := h.writes()
	if after["update"]-before["update"] != 1 || totalWrites(after)-totalWrites(before) != 1 {
		t.Fatalf("writes before %v after %v: want exactly one update", before, after)
	}
	if rep.Run.Updated != 1 || rep.Run.Unchanged != 8 {
		t.Fatalf("run counts: updated %d unchanged %d, want 1 and 8", rep.Run.Updated, rep.Run.Unchanged)
	}
	found := false
	for _, ev := range h.fake.Events(testCalendar) {
		found = found || ev.Summary == "Sprint retro (moved online)"
	}
	if !found {
		t.Fatal("the changed summary is not in the calendar")
	}
}

func TestRemovingOneEventMakesExactlyOneDelete(t *testing.T) {
	h := newHarness(t, teamFeed)
	h.sync()
	before := h.writes()
	h.setFeed(removeEvent(t, h.feed(), "UID:oncall-handover-2027-02@example.com"))
	rep := h.sync()
	after := h.writes()
	if after["delete"]-before["delete"] != 1 || totalWrites(after)-totalWrites(before) != 1 {
		t.Fatalf("writes before %v after %v: want exactly one delete", before, after)
	}
	if rep.Run.Deleted != 1 || len(h.fake.Events(testCalendar)) != 7 {
		t.Fatalf("deleted %d, calendar holds %d; want 1 and 7", rep.Run.Deleted, len(h.fake.Events(testCalendar)))
	}
}

// removeEvent cuts the VEVENT containing marker out of an ICS body.
func removeEvent(t *testing.T, body []byte, marker string) []byte {
	t.Helper()
	s := string(body)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("marker %q not in feed", marker)
	}
	start := strings.LastIndex(s[:i], "BEGIN:VEVENT")
	end := strings.Index(s[i:], "END:VEVENT") + i + len("END:VEVENT\r\n")
	return []byte(s[:start] + s[end:])
}

func TestPersonalEventsAreNeverTouched(t *testing.T) {
	h := newHarness(t, teamFeed)
	mine := h.fake.Seed(testCalendar, &calendar.Event{
		Summary: "Dentist", Start: &calendar.EventDateTime{DateTime: "2027-01-11T10:00:00+01:00"},
		End: &calendar.EventDateTime{DateTime: "2027-01-11T11:00:00+01:00"},
	})
	// A person's event that even carries somebody else's private properties.
	other := h.fake.Seed(testCalendar, &calendar.Event{
		Summary: "Other tool's event", Start: &calendar.EventDateTime{Date: "2027-01-12"}, End: &calendar.EventDateTime{Date: "2027-01-13"},
		ExtendedProperties: &calendar.EventExtendedProperties{Private: map[string]string{"calsyncd_sub": "someone-else"}},
	})
	h.sync()
	h.setFeed(removeEvent(t, h.feed(), "UID:planning-2027-01@example.com"))
	h.sync()
	// Lose the database too: reconcile-style rebuilding must not claim them.
	h.store.Close()
	os.Remove(h.dbPath)
	h.open()
	h.setFeed([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n"))
	h.syncWith(subscriptionAllowDeletes())

	for _, want := range []*calendar.Event{mine, other} {
		var got *calendar.Event
		for _, ev := range h.fake.AllEvents(testCalendar) {
			if ev.Id == want.Id {
				got = ev
			}
		}
		if got == nil || got.Status == "cancelled" || got.Etag != want.Etag || got.Summary != want.Summary {
			t.Errorf("personal event %q was touched: now %+v", want.Summary, got)
		}
	}
}

func TestLostDatabaseCreatesNoDuplicates(t *testing.T) {
	h := newHarness(t, teamFeed)
	h.sync()
	ids := map[string]bool{}
	for _, ev := range h.fake.Events(testCalendar) {
		ids[ev.Id] = true
	}
	h.store.Close()
	if err := os.RemoveAll(h.cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	h.open()
	before := h.writes()
	rep := h.sync()
	if rep.Run.Outcome != calsyncd.OutcomeOK {
		t.Fatalf("sync after losing the database: %s (%v)", rep.Run.Outcome, rep.Err)
	}
	evs := h.fake.Events(testCalendar)
	if len(evs) != 8 {
		t.Fatalf("calendar holds %d events after a lost database, want 8 (no duplicates)", len(evs))
	}
	for _, ev := range evs {
		if !ids[ev.Id] {
			t.Errorf("new event id %s after a lost database: a duplicate", ev.Id)
		}
	}
	// Unchanged content is adopted without rewriting it.
	after := h.writes()
	if after["update"] != before["update"] || after["delete"] != before["delete"] {
		t.Errorf("adoption rewrote events: before %v after %v", before, after)
	}
	if n, _ := h.store.CountMappings(t.Context(), "team"); n != 9 {
		t.Errorf("mappings rebuilt: %d, want 9", n)
	}
}

func subscriptionAllowDeletes() subscription.Options { return subscription.Options{AllowDeletes: true} }

func subscriptionReconcile() subscription.Options { return subscription.Options{Reconcile: true} }
