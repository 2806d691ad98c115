package diff_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// parse reads VEVENTs (CRLF added) as the feed package does.
func parse(t *testing.T, vevents ...string) []feed.Event {
	t.Helper()
	body := "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:test\n" + strings.Join(vevents, "") + "END:VCALENDAR\n"
	cal, err := feed.ParseBytes([]byte(strings.ReplaceAll(body, "\n", "\r\n")), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cal.Events
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\n" + strings.Join(lines, "\n") + "\nEND:VEVENT\n"
}

// shape renders each shaped event as "key | summary | start..end | status | recurrence".
func shape(s diff.Shaped) []string {
	var out []string
	for _, ev := range s.Events {
		when := func(t feed.Time) string {
			if t.AllDay {
				return t.Date()
			}
			return t.T.UTC().Format("2006-01-02T15:04Z")
		}
		out = append(out, fmt.Sprintf("%s | %s | %s..%s | %s | %s", ev.Key(), ev.Summary, when(ev.Start), when(ev.End), ev.Status,
			strings.Join(ev.Recurrence, " ")))
		if ev.Hash != ev.ComputeHash() {
			out = append(out, "  stale hash for "+ev.Key().String())
		}
	}
	return out
}

func check(t *testing.T, got diff.Shaped, want ...string) {
	t.Helper()
	g := shape(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("shape:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

var weeklyMaster = vevent("UID:sync", "DTSTART;TZID=Europe/Berlin:20270104T093000", "DTEND;TZID=Europe/Berlin:20270104T100000",
	"RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6", "SUMMARY:Team sync")

func TestShapeOverridesBecomeInstanceExceptions(t *testing.T) {
	events := parse(t, weeklyMaster,
		vevent("UID:sync", "RECURRENCE-ID;TZID=Europe/Berlin:20270111T093000", "DTSTART;TZID=Europe/Berlin:20270112T140000",
			"DTEND;TZID=Europe/Berlin:20270112T143000", "SUMMARY:Team sync (Tuesday)"),
		vevent("UID:sync", "RECURRENCE-ID;TZID=Europe/Berlin:20270118T093000", "DTSTART;TZID=Europe/Berlin:20270118T093000",
			"DTEND;TZID=Europe/Berlin:20270118T100000", "SUMMARY:Team sync", "STATUS:CANCELLED"),
		// Not an occurrence of the series: an event of its own.
		vevent("UID:sync", "RECURRENCE-ID;TZID=Europe/Berlin:20270119T093000", "DTSTART;TZID=Europe/Berlin:20270119T093000",
			"DTEND;TZID=Europe/Berlin:20270119T100000", "SUMMARY:Extra"),
		// No series in the feed at all.
		vevent("UID:orphan", "RECURRENCE-ID:20270105T100000Z", "DTSTART:20270105T110000Z", "DTEND:20270105T120000Z", "SUMMARY:Orphan"),
	)
	got := diff.Shape(events, diff.ShapeOptions{})
	check(t, got,
		"orphan@20270105T100000Z/single | Orphan | 2027-01-05T11:00Z..2027-01-05T12:00Z | confirmed | ",
		"sync | Team sync | 2027-01-04T08:30Z..2027-01-04T09:00Z | confirmed | RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6",
		"sync@20270111T083000Z | Team sync (Tuesday) | 2027-01-12T13:00Z..2027-01-12T13:30Z | confirmed | ",
		"sync@20270118T083000Z | Team sync | 2027-01-18T08:30Z..2027-01-18T09:00Z | cancelled | ",
		"sync@20270119T083000Z/single | Extra | 2027-01-19T08:30Z..2027-01-19T09:00Z | confirmed | ",
	)
	if got.Orphans != 2 || got.Splits != 0 || len(got.Expanded) != 0 {
		t.Errorf("orphans %d splits %d expanded %d", got.Orphans, got.Splits, len(got.Expanded))
	}
}

func TestShapeSplitsAtThisAndFuture(t *testing.T) {
	// The corpus' issue_75_range_parameter: a UTC series every other day,
	// moved by -3h from the 13th and by +1 day 2h22m from the 21st, with an
	// RDATE and a plain override in the first split.
	events := parse(t,
		vevent("UID:210", "DTSTART:20240901T120000Z", "DTEND:20240901T140000Z", "RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20250920",
			"RDATE:20240914T090000Z", "SUMMARY:ORIGINAL EVENT"),
		vevent("UID:210", "RECURRENCE-ID;RANGE=THISANDFUTURE:20240913T120000Z", "DTSTART:20240913T090000Z", "DTEND:20240913T160000Z",
			"SUMMARY:MODIFIED EVENT"),
		vevent("UID:210", "RECURRENCE-ID:20240915T120000Z", "DTSTART:20240915T170000Z", "DTEND:20240915T190000Z", "SUMMARY:MODIFIED EVENT"),
		vevent("UID:210", "RECURRENCE-ID;RANGE=THISANDFUTURE:20240921T120000Z", "DTSTART:20240922T142200Z", "DTEND:20240922T161300Z",
			"SUMMARY:EDITED EVENT"),
	)
	got := diff.Shape(events, diff.ShapeOptions{})
	check(t, got,
		"210 | ORIGINAL EVENT | 2024-09-01T12:00Z..2024-09-01T14:00Z | confirmed | RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20240913T115959Z",
		"210@20240913T120000Z/series | MODIFIED EVENT | 2024-09-13T09:00Z..2024-09-13T16:00Z | confirmed | "+
			"RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20240921T085959Z RDATE:20240914T060000Z",
		"210@20240913T120000Z/series/20240915T090000Z | MODIFIED EVENT | 2024-09-15T17:00Z..2024-09-15T19:00Z | confirmed | ",
		"210@20240921T120000Z/series | EDITED EVENT | 2024-09-22T14:22Z..2024-09-22T16:13Z | confirmed | "+
			"RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20250922T022159Z",
	)
	if got.Splits != 2 {
		t.Errorf("splits = %d, want 2", got.Splits)
	}
}

func TestShapeSplitMovesWeekdaysOrExpands(t *testing.T) {
	moveToTuesday := vevent("UID:sync", "RECURRENCE-ID;RANGE=THISANDFUTURE;TZID=Europe/Berlin:20270125T093000",
		"DTSTART;TZID=Europe/Berlin:20270126T100000", "DTEND;TZID=Europe/Berlin:20270126T110000", "SUMMARY:Team sync (Tuesdays)")
	got := diff.Shape(parse(t, weeklyMaster, moveToTuesday), diff.ShapeOptions{})
	check(t, got,
		"sync | Team sync | 2027-01-04T08:30Z..2027-01-04T09:00Z | confirmed | RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20270125T082959Z",
		"sync@20270125T083000Z/series | Team sync (Tuesdays) | 2027-01-26T09:00Z..2027-01-26T10:00Z | confirmed | RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=3",
	)
	// A monthly day-of-month rule cannot move by a day: its occurrences
	// from the split on are written one by one.
	monthly := vevent("UID:rent", "DTSTART;VALUE=DATE:20270115", "RRULE:FREQ=MONTHLY;BYMONTHDAY=15;COUNT=4", "SUMMARY:Rent")
	later := vevent("UID:rent", "RECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20270315", "DTSTART;VALUE=DATE:20270316", "SUMMARY:Rent (late)")
	opts := diff.ShapeOptions{From: date(2027, 1, 1), To: date(2028, 1, 1)}
	got = diff.Shape(parse(t, monthly, later), opts)
	check(t, got,
		"rent | Rent | 2027-01-15..2027-01-16 | confirmed | RRULE:FREQ=MONTHLY;BYMONTHDAY=15;UNTIL=20270314",
		"rent@20270315/single | Rent (late) | 2027-03-16..2027-03-17 | confirmed | ",
		"rent@20270415/single | Rent (late) | 2027-04-16..2027-04-17 | confirmed | ",
	)
	if len(got.Expanded) != 1 || got.Expanded[0].Occurrences != 2 || !strings.Contains(got.Expanded[0].Reason, "THISANDFUTURE") {
		t.Errorf("expanded = %+v", got.Expanded)
	}
}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestShapeExpandsWhatGoogleCannotHold(t *testing.T) {
	events := parse(t, weeklyMaster,
		vevent("UID:sync", "RECURRENCE-ID;TZID=Europe/Berlin:20270111T093000", "DTSTART;TZID=Europe/Berlin:20270112T140000",
			"DTEND;TZID=Europe/Berlin:20270112T143000", "SUMMARY:Team sync (Tuesday)"),
		vevent("UID:sync", "RECURRENCE-ID;TZID=Europe/Berlin:20270118T093000", "DTSTART;TZID=Europe/Berlin:20270118T093000",
			"DTEND;TZID=Europe/Berlin:20270118T100000", "SUMMARY:Team sync", "STATUS:CANCELLED"),
	)
	window := diff.ShapeOptions{From: date(2027, 1, 10), To: date(2027, 2, 1)}
	expanded := []string{
		"sync@20270111T083000Z/single | Team sync (Tuesday) | 2027-01-12T13:00Z..2027-01-12T13:30Z | confirmed | ",
		"sync@20270125T083000Z/single | Team sync | 2027-01-25T08:30Z..2027-01-25T09:00Z | confirmed | ",
	}

	unsupported := window
	unsupported.Unsupported = func(ev *feed.Event) string { return "weekly is not for Google today" }
	got := diff.Shape(events, unsupported)
	check(t, got, expanded...)
	if len(got.Expanded) != 1 || got.Expanded[0].Occurrences != 2 || got.Expanded[0].Key != (calsyncd.Key{UID: "sync"}) {
		t.Errorf("expanded = %+v", got.Expanded)
	}
	if note := diff.ExpansionNote(got.Expanded); !strings.HasPrefix(note, diff.ExpansionNotePrefix) || !strings.Contains(note, `"Team sync" (weekly is not for Google today)`) {
		t.Errorf("note = %q", note)
	}

	// Refused by Google with this very content: expanded; once the content
	// changes, it is offered to Google again.
	master := diff.Shape(events, window).Events[0]
	refused := window
	refused.Rejected = []calsyncd.Rejection{{Key: master.Key(), Hash: master.Hash, Reason: "HTTP 400 invalid: Invalid recurrence rule."}}
	check(t, diff.Shape(events, refused), expanded...)
	refused.Rejected[0].Hash = "an older version"
	if got := diff.Shape(events, refused); len(got.Expanded) != 0 {
		t.Errorf("a changed series is still expanded: %+v", got.Expanded)
	}

	// A cap on one series' occurrences.
	capped := unsupported
	capped.MaxOccurrences = 1
	if got := diff.Shape(events, capped); len(got.Events) != 1 || !got.Expanded[0].Truncated {
		t.Errorf("capped expansion = %v %+v", shape(got), got.Expanded)
	}
}

func TestComputeRevertsOrForgetsInstancesWhoseOverrideLeft(t *testing.T) {
	events := parse(t, weeklyMaster)
	master := events[0]
	moved := calsyncd.Mapping{Key: calsyncd.Key{UID: "sync", RecurrenceID: "20270111T083000Z"}, EventID: "x_20270111T083000Z", Hash: "old"}
	gone := calsyncd.Mapping{Key: calsyncd.Key{UID: "sync", RecurrenceID: "20270301T083000Z"}, EventID: "x_20270301T083000Z", Hash: "old"}
	mappedMaster := calsyncd.Mapping{Key: master.Key(), EventID: "x", Hash: master.Hash}
	p := diff.Compute(events, []calsyncd.Mapping{mappedMaster, moved, gone}, nil)
	if got := fmt.Sprint(render(p)); got != "[update sync@20270111T083000Z delete sync@20270301T083000Z]" {
		t.Fatalf("ops = %s", got)
	}
	rev := p.Updates[0]
	if !rev.Revert || p.Reverts != 1 || rev.Parent == nil || rev.ParentMapping == nil || rev.ParentMapping.EventID != "x" {
		t.Fatalf("revert op = %+v", rev)
	}
	if rev.Event.Summary != "Team sync" || !rev.Event.Start.T.Equal(time.Date(2027, 1, 11, 8, 30, 0, 0, time.UTC)) ||
		rev.Event.End.T.Sub(rev.Event.Start.T) != 30*time.Minute || len(rev.Event.Recurrence) != 0 {
		t.Errorf("reverted to %+v", rev.Event)
	}
	// Once written back, it costs nothing until the series changes.
	moved.Hash = rev.Event.Hash
	if p := diff.Compute(events, []calsyncd.Mapping{mappedMaster, moved}, nil); p.Writes() != 0 || p.Unchanged != 2 {
		t.Errorf("after the revert: ops %v unchanged %d", render(p), p.Unchanged)
	}
	// The series left the feed: everything goes, instances only forgotten.
	p = diff.Compute(nil, []calsyncd.Mapping{mappedMaster, moved}, nil)
	if got := fmt.Sprint(render(p)); got != "[delete sync@20270111T083000Z delete sync]" || !p.Deletes[0].Forget || p.Deletes[1].Forget {
		t.Errorf("ops = %s", got)
	}
}

func TestComputeOrdersSeriesBeforeTheirInstances(t *testing.T) {
	desired := []feed.Event{ev("u", "20270110T090000Z/series/20270117T100000Z", "i"), ev("u", "20270110T090000Z/series", "s"),
		ev("u", "20270103T090000Z", "j"), ev("u", "", "m")}
	p := diff.Compute(desired, nil, nil)
	want := "[create u create u@20270110T090000Z/series create u@20270103T090000Z create u@20270110T090000Z/series/20270117T100000Z]"
	if got := fmt.Sprint(render(p)); got != want {
		t.Errorf("ops = %s\nwant %s", got, want)
	}
	if p.Creates[3].Parent == nil || p.Creates[3].Parent.Key().RecurrenceID != "20270110T090000Z/series" {
		t.Errorf("instance of the split series has parent %+v", p.Creates[3].Parent)
	}
}

// TestShapeStopsExpandingAtTheLimit: with MaxExpanded set, shaping ten
// FREQ=SECONDLY series (1.2 KB of feed, 10,000 single events) stops just
// past the limit instead of building them all for the guard to refuse.
func TestShapeStopsExpandingAtTheLimit(t *testing.T) {
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n")
	for i := range 10 {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:s%d\r\nDTSTART:20270302T000000Z\r\nDURATION:PT1S\r\nRRULE:FREQ=SECONDLY\r\nSUMMARY:s\r\nEND:VEVENT\r\n", i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	cal, err := feed.ParseBytes([]byte(b.String()), feed.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	secondly := func(ev *feed.Event) string {
		if ev.Series != nil && ev.Series.Frequency() == "SECONDLY" {
			return "sub-daily"
		}
		return ""
	}
	opts := diff.ShapeOptions{From: now.Add(-24 * time.Hour), To: now.Add(365 * 24 * time.Hour), Unsupported: secondly}
	all := diff.Shape(cal.Events, opts)
	opts.MaxExpanded = 5000
	cut := diff.Shape(cal.Events, opts)
	t.Logf("%d bytes of feed: %d single events unbounded; %d with MaxExpanded 5000 (cut %v)",
		b.Len(), all.ExpandedOccurrences(), cut.ExpandedOccurrences(), cut.ExpansionCut)
	if all.ExpandedOccurrences() != 10000 || all.ExpansionCut {
		t.Errorf("unbounded: %d occurrences (cut %v), want 10000", all.ExpandedOccurrences(), all.ExpansionCut)
	}
	if cut.ExpandedOccurrences() != 5001 || !cut.ExpansionCut || len(cut.Events) != 5001 {
		t.Errorf("bounded: %d occurrences, %d events (cut %v), want 5001 and the cut flagged", cut.ExpandedOccurrences(), len(cut.Events), cut.ExpansionCut)
	}
}

// A series' update carries the exceptions the plan does not write (to be
// checked after it) and those it forgets off the rule (to be deleted where
// Google still shows them); a series left unchanged carries none.
func TestComputeAttachesExceptionsToTheirSeriesUpdate(t *testing.T) {
	events := parse(t, weeklyMaster)
	master := events[0]
	rev := diff.Compute(events, []calsyncd.Mapping{{Key: master.Key(), EventID: "x", Hash: master.Hash},
		{Key: calsyncd.Key{UID: "sync", RecurrenceID: "20270111T083000Z"}, EventID: "x_20270111T083000Z", Hash: "old"}}, nil).Updates[0]
	kept := calsyncd.Mapping{Key: rev.Key, EventID: rev.Mapping.EventID, Hash: rev.Event.Hash}
	off := calsyncd.Mapping{Key: calsyncd.Key{UID: "sync", RecurrenceID: "20270112T083000Z"}, EventID: "x_20270112T083000Z", Hash: "o"}
	stale := calsyncd.Mapping{Key: master.Key(), EventID: "x", Hash: "before"}
	p := diff.Compute(events, []calsyncd.Mapping{stale, kept, off}, nil)
	if got := fmt.Sprint(render(p)); got != "[update sync delete sync@20270112T083000Z]" {
		t.Fatalf("ops = %s", got)
	}
	up := p.Updates[0]
	if len(up.Exceptions) != 1 || up.Exceptions[0].Key != kept.Key || up.Exceptions[0].Mapping.EventID != kept.EventID ||
		up.Exceptions[0].Event == nil || up.Exceptions[0].Kind != diff.Update {
		t.Errorf("exceptions = %+v", up.Exceptions)
	}
	if len(up.Forgotten) != 1 || up.Forgotten[0].Mapping != off ||
		!up.Forgotten[0].Original.T.Equal(time.Date(2027, 1, 12, 8, 30, 0, 0, time.UTC)) || up.Forgotten[0].Original.AllDay {
		t.Errorf("forgotten = %+v", up.Forgotten)
	}
	if p.Writes() != 2 || p.Unchanged != 1 {
		t.Errorf("the checks are no writes of the plan: %d writes, %d unchanged", p.Writes(), p.Unchanged)
	}
	// Unchanged series: nothing to check.
	p = diff.Compute(events, []calsyncd.Mapping{{Key: master.Key(), EventID: "x", Hash: master.Hash}, kept}, nil)
	if p.Writes() != 0 {
		t.Errorf("ops = %v", render(p))
	}
}

func TestShapeWritesSeriesGoogleWouldPlaceWrongAsSingleEvents(t *testing.T) {
	ownZone := "BEGIN:VTIMEZONE\nTZID:Office time\nBEGIN:STANDARD\nDTSTART:19701025T030000\nTZOFFSETFROM:+0230\nTZOFFSETTO:+0130\n" +
		"RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:19700329T020000\nTZOFFSETFROM:+0130\n" +
		"TZOFFSETTO:+0230\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\nEND:DAYLIGHT\nEND:VTIMEZONE\n"
	from, to := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		events []feed.Event
		reason string // "" : kept as a series
		want   []string
	}{
		"an occurrence in a DST gap": {parse(t, vevent("UID:gap", "DTSTART;TZID=America/New_York:20270307T023000",
			"DTEND;TZID=America/New_York:20270307T030000", "RRULE:FREQ=WEEKLY;COUNT=3", "SUMMARY:Backup")),
			"daylight-saving gap", []string{
				"gap@20270307T073000Z/single | Backup | 2027-03-07T07:30Z..2027-03-07T08:00Z | confirmed | ",
				"gap@20270314T073000Z/single | Backup | 2027-03-14T07:30Z..2027-03-14T08:00Z | confirmed | ",
				"gap@20270321T063000Z/single | Backup | 2027-03-21T06:30Z..2027-03-21T07:00Z | confirmed | ",
			}},
		"the feed's own zone": {parse(t, ownZone+vevent("UID:own", "DTSTART;TZID=Office time:20270304T090000",
			"DTEND;TZID=Office time:20270304T100000", "RRULE:FREQ=MONTHLY;COUNT=2", "SUMMARY:Review")),
			"feed's own", []string{
				"own@20270304T073000Z/single | Review | 2027-03-04T07:30Z..2027-03-04T08:30Z | confirmed | ",
				"own@20270404T063000Z/single | Review | 2027-04-04T06:30Z..2027-04-04T07:30Z | confirmed | ",
			}},
		"the feed's own zone, no switch in the window": {parse(t, ownZone+vevent("UID:own", "DTSTART;TZID=Office time:20270504T090000",
			"DTEND;TZID=Office time:20270504T100000", "RRULE:FREQ=MONTHLY;COUNT=2", "SUMMARY:Review")),
			"", []string{"own | Review | 2027-05-04T06:30Z..2027-05-04T07:30Z | confirmed | RRULE:FREQ=MONTHLY;COUNT=2"}},
	}
	for name, tt := range tests {
		lo, hi := from, to
		if tt.reason == "" {
			lo = time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC)
			hi = time.Date(2027, 8, 1, 0, 0, 0, 0, time.UTC)
		}
		got := diff.Shape(tt.events, diff.ShapeOptions{From: lo, To: hi})
		if g := shape(got); strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: shape:\n%s\nwant:\n%s", name, strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
		}
		if tt.reason == "" && len(got.Expanded) != 0 || tt.reason != "" && (len(got.Expanded) != 1 || !strings.Contains(got.Expanded[0].Reason, tt.reason)) {
			t.Errorf("%s: expanded %+v, want reason %q", name, got.Expanded, tt.reason)
		}
	}
}
