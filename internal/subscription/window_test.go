package subscription_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// datedFeed is a feed of all-day events on the given dates, UIDs prefixed.
func datedFeed(prefix string, dates ...time.Time) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//window test//EN\r\n")
	for i, d := range dates {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%s%d@example.com\r\nDTSTART;VALUE=DATE:%s\r\nSUMMARY:Day %d\r\nEND:VEVENT\r\n",
			prefix, i, d.Format("20060102"), i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

func TestWindowKeepsHistory(t *testing.T) {
	h := newHarness(t, "")
	now := time.Date(2027, 3, 15, 12, 0, 0, 0, time.UTC)
	h.runner.Now = func() time.Time { return now }
	old, recent, soon, later := now.AddDate(0, 0, -60), now.AddDate(0, 0, -10), now.AddDate(0, 0, 5), now.AddDate(0, 0, 40)
	h.setFeed(datedFeed("d", old, recent, soon, later))
	rep := h.sync()
	// Only what overlaps [now-30d, ∞) is mirrored.
	if rep.Run.Created != 3 || len(h.fake.Events(testCalendar)) != 3 {
		t.Fatalf("first sync created %d, want 3 (the 60-day-old event is outside the window)", rep.Run.Created)
	}
	// Forty days on, the feed drops its past events, as many feeds do, and
	// cancels the one that was still ahead ("soon" has passed meanwhile).
	now = now.AddDate(0, 0, 40)
	body := datedFeed("d", old, recent, soon, later)
	for _, uid := range []string{"UID:d0@example.com", "UID:d1@example.com", "UID:d2@example.com"} {
		body = removeEvent(t, body, uid)
	}
	h.setFeed(body)
	rep = h.sync()
	if rep.Run.Deleted != 0 || len(h.fake.Events(testCalendar)) != 3 {
		t.Fatalf("deleted %d (calendar holds %d): events that ended before the window are history, not deletions",
			rep.Run.Deleted, len(h.fake.Events(testCalendar)))
	}
	// An event inside the window that leaves the feed is deleted.
	h.setFeed([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n"))
	rep = h.syncWith(subscriptionAllowDeletes())
	if rep.Run.Deleted != 1 || len(h.fake.Events(testCalendar)) != 2 {
		t.Fatalf("the in-window event that left the feed: deleted %d, calendar holds %d", rep.Run.Deleted, len(h.fake.Events(testCalendar)))
	}
}

func TestUnstableUIDsCostNoWrites(t *testing.T) {
	h := newHarness(t, "")
	base := time.Date(2027, 5, 3, 0, 0, 0, 0, time.UTC)
	var dates []time.Time
	for i := 0; i < 12; i++ {
		dates = append(dates, base.AddDate(0, 0, 7*i))
	}
	h.setFeed(datedFeed("fetch1-", dates...))
	h.sync()
	before := h.writes()
	// The server mints new UIDs on every fetch.
	for run := 2; run <= 3; run++ {
		h.setFeed(datedFeed(fmt.Sprintf("fetch%d-", run), dates...))
		rep := h.sync()
		if d := totalWrites(h.writes()) - totalWrites(before); d != 0 {
			t.Fatalf("run %d wrote %d times for a feed whose content did not change", run, d)
		}
		if rep.Run.Unchanged != 12 || rep.Run.Outcome != calsyncd.OutcomeOK {
			t.Fatalf("run %d: %+v", run, rep.Run)
		}
	}
	st, _ := h.store.Subscription(t.Context(), "team")
	if len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "identity: content") {
		t.Fatalf("notes = %v, want the advice to use identity: content", st.Notes)
	}
	// The operator follows the advice: still no writes, and the note goes.
	h.cfg.Subscriptions[0].Identity = "content"
	h.setFeed(datedFeed("fetch4-", dates...))
	h.sync()
	h.setFeed(datedFeed("fetch5-", dates...))
	h.sync()
	if d := totalWrites(h.writes()) - totalWrites(before); d != 0 {
		t.Fatalf("switching to identity: content wrote %d times", d)
	}
	st, _ = h.store.Subscription(t.Context(), "team")
	if len(st.Notes) != 0 {
		t.Fatalf("notes after the switch = %v", st.Notes)
	}
	if len(h.fake.Events(testCalendar)) != 12 {
		t.Fatalf("calendar holds %d events", len(h.fake.Events(testCalendar)))
	}
	// A reconcile finds nothing to repair: the events were re-keyed, not lost.
	before = h.writes()
	h.syncWith(subscriptionReconcile())
	if d := totalWrites(h.writes()) - totalWrites(before); d != 0 || len(h.fake.Events(testCalendar)) != 12 {
		t.Fatalf("reconcile after re-keying wrote %d times; calendar holds %d", d, len(h.fake.Events(testCalendar)))
	}
}
