package gcalwriter_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// TestRejectionsAreSampledInTheLog: a batch of many events Google refuses
// logs the first ten one by one and counts the rest in its line
// (warnings of one kind must not flood the log).
func TestRejectionsAreSampledInTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		var ops []diff.Op
		for i := range 50 {
			bad := event(fmt.Sprintf("bad%02d@example.com", i), "Bad")
			bad.Recurrence = []string{"RRULE:NOPE"}
			bad.Hash = bad.ComputeHash()
			ops = append(ops, create(bad))
		}
		res := apply(t, w, newMem(), ops...)
		if res.Rejected != 50 {
			t.Fatalf("rejected %d, want 50", res.Rejected)
		}
		logs := h.logs.String()
		if n := strings.Count(logs, "event rejected by Google"); n != 10 {
			t.Errorf("%d rejection lines for 50 refused events, want 10", n)
		}
		if !strings.Contains(logs, "rejected=50") || !strings.Contains(logs, "rejections_logged=10") {
			t.Errorf("the batch line does not count them all:\n%s", logs)
		}
	})
}

// TestMissingInstancesAreSampledInTheLog: overrides of occurrences the
// series in Google no longer has (a person cut its rule short) each fail
// and are retried next run, but only the first ten are logged one by one.
func TestMissingInstancesAreSampledInTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		series := vevent("UID:daily@example.com", "DTSTART:20270104T090000Z", "DTEND:20270104T093000Z", "RRULE:FREQ=DAILY;COUNT=60", "SUMMARY:Daily")
		apply(t, w, p, plan(p, feedEvents(t, series))...)
		master := p.mapping(calsyncd.Key{UID: "daily@example.com"})
		h.fake.Edit(cal, master.EventID, func(ev *calendar.Event) { ev.Recurrence = []string{"RRULE:FREQ=DAILY;COUNT=1"} })
		vevents := []string{series}
		for d := range 30 {
			day := time.Date(2027, 1, 6+d, 0, 0, 0, 0, time.UTC).Format("20060102")
			vevents = append(vevents, vevent("UID:daily@example.com", "RECURRENCE-ID:"+day+"T090000Z",
				"DTSTART:"+day+"T100000Z", "DTEND:"+day+"T103000Z", "SUMMARY:Daily (late)"))
		}
		res := apply(t, w, p, plan(p, feedEvents(t, vevents...))...)
		if res.Failed != 30 {
			t.Fatalf("failed %d, want the 30 overrides without an instance: %+v", res.Failed, res)
		}
		logs := h.logs.String()
		if n := strings.Count(logs, "no instance to write the exception to"); n != 10 {
			t.Errorf("%d lines for 30 missing instances, want 10", n)
		}
		if !strings.Contains(logs, "more exceptions without an instance in this batch") {
			t.Errorf("no line says the rest are not logged:\n%s", logs)
		}
	})
}
