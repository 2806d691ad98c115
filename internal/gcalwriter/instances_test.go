package gcalwriter_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// feedEvents parses VEVENTs as the feed package does and shapes them for
// Google.
func feedEvents(t *testing.T, vevents ...string) []feed.Event {
	t.Helper()
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" + strings.Join(vevents, "") + "END:VCALENDAR\r\n"
	c, err := feed.ParseBytes([]byte(body), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return diff.Shape(c.Events, diff.ShapeOptions{From: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC), Unsupported: gcalwriter.UnsupportedRecurrence}).Events
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\n"
}

func seriesVEvent(rule string) string {
	return vevent("UID:sync@example.com", "DTSTART;TZID=Europe/Berlin:20270104T093000", "DTEND;TZID=Europe/Berlin:20270104T100000",
		"RRULE:"+rule, "SUMMARY:Team sync")
}

var (
	movedVEvent = vevent("UID:sync@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:20270111T093000",
		"DTSTART;TZID=Europe/Berlin:20270112T140000", "DTEND;TZID=Europe/Berlin:20270112T150000", "SUMMARY:Team sync (Tuesday)")
	cancelledVEvent = vevent("UID:sync@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:20270118T093000",
		"DTSTART;TZID=Europe/Berlin:20270118T093000", "DTEND;TZID=Europe/Berlin:20270118T100000", "SUMMARY:Team sync", "STATUS:CANCELLED")
)

// plan computes the ops from the persisted mappings.
func plan(p *memPersister, desired []feed.Event) []diff.Op {
	return diff.Compute(desired, p.mappings(), p.rejections()).Ops()
}

func agendaOf(fake *gcalfake.Server) []string {
	var out []string
	for _, o := range fake.Agenda(cal, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)) {
		out = append(out, o.String())
	}
	return out
}

func TestOverridesBecomeExceptionsOfTheirSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		series := seriesVEvent("FREQ=WEEKLY;BYDAY=MO;COUNT=4")
		res := apply(t, w, p, plan(p, feedEvents(t, series, movedVEvent, cancelledVEvent))...)
		if res.Created != 3 || res.Err != nil {
			t.Fatalf("first write: %+v", res)
		}
		want := []string{
			`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Team sync"`,
			`2027-01-12T13:00:00Z..2027-01-12T14:00:00Z "Team sync (Tuesday)"`,
			`2027-01-25T08:30:00Z..2027-01-25T09:00:00Z "Team sync"`,
		}
		if got := agendaOf(h.fake); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// One insert for the series; the first exception reads its
		// instance by the id Google derives (and so learns that Google
		// derives ids), every later one is a single update of that id.
		if ops := requestsOf(h.recs["alice"].requests()); fmt.Sprint(ops) != "[POST GET PUT PUT]" {
			t.Errorf("requests = %v", ops)
		}
		moved := p.mapping(calsyncd.Key{UID: "sync@example.com", RecurrenceID: "20270111T083000Z"})
		master := p.mapping(calsyncd.Key{UID: "sync@example.com"})
		if !strings.HasPrefix(moved.EventID, master.EventID+"_") || moved.ETag == "" || moved.EndsAt.IsZero() {
			t.Errorf("exception mapping = %+v (series %s)", moved, master.EventID)
		}

		// The move is taken back and the series renamed: the series costs
		// one update, the former exception one update back to the series.
		renamed := strings.Replace(series, "SUMMARY:Team sync", "SUMMARY:Weekly sync", 1)
		ops2 := plan(p, feedEvents(t, renamed, cancelledVEvent))
		res = apply(t, w, p, ops2...)
		if res.Updated != 2 || res.Created+res.Deleted+res.Forgotten != 0 {
			t.Fatalf("second write: %+v", res)
		}
		want = []string{
			`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Weekly sync"`,
			`2027-01-11T08:30:00Z..2027-01-11T09:00:00Z "Weekly sync"`,
			`2027-01-25T08:30:00Z..2027-01-25T09:00:00Z "Weekly sync"`,
		}
		if got := agendaOf(h.fake); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if ops := plan(p, feedEvents(t, renamed, cancelledVEvent)); len(ops) != 0 {
			t.Errorf("a third run would write %d times", len(ops))
		}

		// The series shrinks to two instances: one update; the cancelled
		// exception past its end is forgotten without a request.
		before := len(h.recs["alice"].writes())
		shorter := strings.Replace(renamed, "COUNT=4", "COUNT=2", 1)
		res = apply(t, w, p, plan(p, feedEvents(t, shorter, cancelledVEvent))...)
		if res.Updated != 1 || res.Forgotten != 1 || len(h.recs["alice"].writes())-before != 1 {
			t.Fatalf("shortened: %+v, %d writes", res, len(h.recs["alice"].writes())-before)
		}
		if got := agendaOf(h.fake); len(got) != 2 {
			t.Errorf("agenda after shortening = %q", got)
		}
	})
}

// requestsOf names the event requests (the calendars.get of each batch left
// out): "instances" for events.instances, else the method.
func requestsOf(qs []request) []string {
	var ops []string
	for _, q := range qs {
		switch {
		case strings.HasSuffix(q.path, "/instances"):
			ops = append(ops, "instances")
		case strings.Contains(q.path, "/events"):
			ops = append(ops, q.method)
		}
	}
	return ops
}

func TestLostDatabaseAdoptsExceptionsWithoutWriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		desired := feedEvents(t, seriesVEvent("FREQ=WEEKLY;COUNT=4"), movedVEvent, cancelledVEvent)
		apply(t, w, newMem(), plan(newMem(), desired)...)
		before := len(h.recs["alice"].writes())
		p := newMem()
		res := apply(t, w, p, plan(p, desired)...)
		// The series' insert answers 409 and is adopted; the exceptions are
		// found as they are. Nothing is rewritten.
		writes := h.recs["alice"].writes()[before:]
		if res.Created != 3 || res.Adopted != 1 || len(writes) != 1 || writes[0].method != http.MethodPost {
			t.Errorf("after losing the mappings: %+v, writes %+v", res, writes)
		}
		if len(p.mappings()) != 3 {
			t.Errorf("mappings rebuilt: %d, want 3", len(p.mappings()))
		}
	})
}

func TestRefusedSeriesLeavesItsExceptionsUnparented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		// RFC 5545 forbids BYMONTHDAY in a weekly rule; Google refuses it.
		desired := feedEvents(t, seriesVEvent("FREQ=WEEKLY;BYMONTHDAY=4,11,18,25;COUNT=4"), movedVEvent)
		res := apply(t, w, p, plan(p, desired)...)
		if res.Rejected != 1 || res.Unparented != 1 || len(res.RefusedSeries) != 1 || res.RefusedSeries[0] != (calsyncd.Key{UID: "sync@example.com"}) {
			t.Fatalf("result: %+v", res)
		}
		if rj := p.rejections(); len(rj) != 1 || !strings.Contains(rj[0].Reason, "Invalid recurrence rule") {
			t.Errorf("rejections = %+v", rj)
		}
		if n := len(h.recs["alice"].writes()); n != 1 {
			t.Errorf("%d writes, want the one refused insert", n)
		}
	})
}

func TestUnsupportedRecurrence(t *testing.T) {
	for rule, want := range map[string]bool{
		"RRULE:FREQ=HOURLY;COUNT=3":  true,
		"RRULE:FREQ=MINUTELY":        true,
		"RRULE:FREQ=DAILY;BYHOUR=9":  false,
		"RRULE:FREQ=WEEKLY;BYDAY=MO": false,
	} {
		ev := &feed.Event{Start: feed.Time{T: time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)}, Recurrence: []string{rule}}
		series, err := feed.ParseSeries(ev)
		if err != nil {
			t.Fatal(err)
		}
		ev.SetSeries(series)
		if got := gcalwriter.UnsupportedRecurrence(ev) != ""; got != want {
			t.Errorf("%s: unsupported %v, want %v", rule, got, want)
		}
	}
}
