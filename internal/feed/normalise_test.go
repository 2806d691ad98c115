package feed_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

func calendar(lines ...string) []byte {
	return []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VCALENDAR\r\n")
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT"
}

func parse(t *testing.T, body []byte, opts feed.Options) *feed.Calendar {
	t.Helper()
	cal, err := feed.ParseBytes(body, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkCalendar(t, cal)
	return cal
}

// TestParseReadsCutBodiesAsFarAsTheyAreWhole: a body without
// END:VCALENDAR keeps every component it holds whole and says how it
// stopped; a component without its END is dropped; what is not a
// calendar at all is still refused.
func TestParseReadsCutBodiesAsFarAsTheyAreWhole(t *testing.T) {
	body := calendar(vevent("UID:a", "DTSTART:20270101T100000Z"), vevent("UID:b", "DTSTART:20270102T100000Z"))
	s := string(body)
	tests := map[string]struct {
		body    string
		want    feed.Cut
		uids    []string
		refused bool
	}{
		"whole":                    {body: s, want: feed.Whole, uids: []string{"a", "b"}},
		"no END:VCALENDAR":         {body: strings.TrimSuffix(s, "END:VCALENDAR\r\n"), want: feed.CutBetween, uids: []string{"a", "b"}},
		"no END:VCALENDAR, no EOL": {body: strings.TrimSuffix(s, "\r\nEND:VCALENDAR\r\n"), want: feed.CutBetween, uids: []string{"a", "b"}},
		"cut in END:VCALENDAR":     {body: s[:len(s)-3], want: feed.CutBetween, uids: []string{"a", "b"}},
		"cut in END:VEVENT":        {body: s[:len(s)-20], want: feed.CutInside, uids: []string{"a"}},
		"cut in the last event":    {body: s[:strings.LastIndex(s, "DTSTART")], want: feed.CutInside, uids: []string{"a"}},
		"cut in a VALARM":          {body: strings.Replace(s, "UID:b", "UID:b\r\nBEGIN:VALARM\r\nACTION:DISPLAY", 1)[:strings.Index(s, "UID:b")+30], want: feed.CutInside, uids: []string{"a"}},
		"cut in a VTODO":           {body: strings.TrimSuffix(s, "END:VCALENDAR\r\n") + "BEGIN:VTODO\r\nUID:t\r\n", want: feed.CutInside, uids: []string{"a", "b"}},
		"calendar only":            {body: "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n", want: feed.CutBetween},
		"second calendar cut":      {body: s + strings.TrimSuffix(string(calendar(vevent("UID:c", "DTSTART:20270103T100000Z"))), "END:VCALENDAR\r\n"), want: feed.CutBetween, uids: []string{"a", "b", "c"}},
		"html":                     {body: "<!DOCTYPE html><html><head><title>Sign in</title></head>", refused: true},
		"empty":                    {body: "", refused: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cal, err := feed.ParseBytes([]byte(tt.body), feed.Options{})
			if tt.refused {
				if !errors.Is(err, feed.ErrNotCalendar) || feed.CheckBody([]byte(tt.body)) == nil {
					t.Fatalf("err = %v, CheckBody = %v; want both refused", err, feed.CheckBody([]byte(tt.body)))
				}
				return
			}
			if err != nil || feed.CheckBody([]byte(tt.body)) != nil {
				t.Fatalf("err = %v, CheckBody = %v", err, feed.CheckBody([]byte(tt.body)))
			}
			var uids []string
			for _, ev := range cal.Events {
				uids = append(uids, ev.UID)
			}
			if cal.Cut != tt.want || strings.Join(uids, ",") != strings.Join(tt.uids, ",") {
				t.Errorf("cut %v, events %v; want %v, %v", cal.Cut, uids, tt.want, tt.uids)
			}
			if said := strings.Contains(fmt.Sprint(cal.Warnings), "without END:VCALENDAR"); said != (tt.want != feed.Whole) {
				t.Errorf("warnings %v: say the cut = %v, want %v", cal.Warnings, said, tt.want != feed.Whole)
			}
		})
	}
}

func TestParseRepairs(t *testing.T) {
	tests := map[string]struct {
		body  string
		check func(t *testing.T, ev feed.Event)
	}{
		"BOM, LF, lowercase": {
			body: "\xef\xbb\xbfbegin:vcalendar\nbegin:vevent\nuid:a\ndtstart;value=date:20270101\nsummary:x\nend:vevent\nend:vcalendar\n",
			check: func(t *testing.T, ev feed.Event) {
				if !ev.Start.AllDay || ev.Summary != "x" {
					t.Errorf("got %+v", ev)
				}
			},
		},
		"TZID that swallowed the value": {
			body: string(calendar(vevent("UID:a", `DTSTART;TZID="W. Europe Standard Time:20270601T090000"`))),
			check: func(t *testing.T, ev feed.Event) {
				if ev.Start.Zone != "Europe/Berlin" || !ev.Start.T.Equal(at("Europe/Berlin", 2027, 6, 1, 9, 0)) {
					t.Errorf("got %v %q", ev.Start.T, ev.Start.Zone)
				}
			},
		},
		"raw newlines in a description": {
			body: string(calendar(vevent("UID:a", "DTSTART:20270101T100000Z", "DESCRIPTION:Join:", "https://example.com/j/1", "", "Passcode: 42", "SUMMARY:s"))),
			check: func(t *testing.T, ev feed.Event) {
				if ev.Description != "Join:\nhttps://example.com/j/1\n\nPasscode: 42" || ev.Summary != "s" {
					t.Errorf("description %q summary %q", ev.Description, ev.Summary)
				}
			},
		},
		"fold that lost its space": {
			body: string(calendar(vevent("UID:a", "DTSTART:20270101T100000Z", "ORGANIZER;CN=Ada Love", "lace:mailto:a@example.com", "SUMMARY:s"))),
			check: func(t *testing.T, ev feed.Event) {
				if ev.Summary != "s" {
					t.Errorf("summary %q", ev.Summary)
				}
			},
		},
		"missing END:VEVENT": {
			body: "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270101T100000Z\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:20270101T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
		},
		"text escapes once": {
			body: string(calendar(vevent("UID:a", "DTSTART:20270101T100000Z", `SUMMARY:a\, b\; c\\n d\nnext`))),
			check: func(t *testing.T, ev feed.Event) {
				if ev.Summary != "a, b; c\\n d\nnext" {
					t.Errorf("summary %q", ev.Summary)
				}
			},
		},
		"two calendars concatenated": {
			body: string(calendar(vevent("UID:a", "DTSTART:20270101T100000Z"))) + string(calendar(vevent("UID:b", "DTSTART:20270101T100000Z"))),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cal := parse(t, []byte(tt.body), feed.Options{})
			if len(cal.Events) == 0 {
				t.Fatalf("no events; warnings %v", cal.Warnings)
			}
			if tt.check != nil {
				tt.check(t, cal.Events[0])
			}
			if name == "missing END:VEVENT" || name == "two calendars concatenated" {
				if len(cal.Events) != 2 {
					t.Errorf("%d events, want 2", len(cal.Events))
				}
			}
		})
	}
}

func TestParseOneBadEventNeverSinksTheFeed(t *testing.T) {
	// A parameter golang-ical cannot read makes it reject the whole body;
	// the components are then parsed one by one.
	body := calendar(
		vevent("UID:good-1", "DTSTART:20270101T100000Z", "SUMMARY:one"),
		vevent("UID:bad", "DTSTART:20270101T100000Z", "LOCATION;X A=1:v", "SUMMARY:bad"),
		vevent("UID:no-start", "SUMMARY:no start"),
		vevent("UID:bad-date", "DTSTART:20270230T100000Z"),
		vevent("UID:good-2", "DTSTART:20270102T100000Z", "SUMMARY:two"),
	)
	cal := parse(t, body, feed.Options{})
	var uids []string
	for _, ev := range cal.Events {
		uids = append(uids, ev.UID)
	}
	if strings.Join(uids, ",") != "good-1,good-2" {
		t.Errorf("events %v", uids)
	}
	for _, want := range []string{`bad: VEVENT 2 ("bad") skipped: unreadable`, "no-start: event", "bad-date: event"} {
		found := false
		for _, w := range cal.Warnings {
			found = found || strings.HasPrefix(w.String(), want)
		}
		if !found {
			t.Errorf("no warning %q in %v", want, cal.Warnings)
		}
	}
}

func TestParseSyntheticUIDsAreStable(t *testing.T) {
	a := vevent("DTSTART:20270101T100000Z", "SUMMARY:standup", "DTSTAMP:20260101T000000Z")
	b := vevent("DTSTART:20270101T100000Z", "SUMMARY:standup", "DESCRIPTION:a twin")
	c := vevent("DTSTART:20270102T100000Z", "SUMMARY:retro")
	first := parse(t, calendar(a, b, c), feed.Options{})
	again := parse(t, calendar(c, strings.Replace(a, "20260101", "20260202", 1), b), feed.Options{})
	if len(first.Events) != 3 {
		t.Fatalf("%d events", len(first.Events))
	}
	for i := range first.Events {
		if first.Events[i].UID != again.Events[i].UID || first.Events[i].Hash != again.Events[i].Hash {
			t.Errorf("event %d: %s/%s then %s/%s", i, first.Events[i].UID, first.Events[i].Hash, again.Events[i].UID, again.Events[i].Hash)
		}
		if !strings.HasPrefix(first.Events[i].UID, "calsyncd-") {
			t.Errorf("synthetic UID %q", first.Events[i].UID)
		}
	}
}

func TestParseDuplicateUIDs(t *testing.T) {
	tests := map[string]struct {
		events []string
		want   string
	}{
		"highest SEQUENCE": {events: []string{
			vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:new", "SEQUENCE:2"),
			vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:old", "SEQUENCE:1"),
		}, want: "new"},
		"then LAST-MODIFIED": {events: []string{
			vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:old", "LAST-MODIFIED:20260101T000000Z"),
			vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:new", "LAST-MODIFIED:20260102T000000Z"),
		}, want: "new"},
		"then DTSTAMP": {events: []string{
			vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:new", "DTSTAMP:20260102T000000Z"),
			vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:old", "DTSTAMP:20260101T000000Z"),
		}, want: "new"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for _, order := range [][]string{tt.events, {tt.events[1], tt.events[0]}} {
				cal := parse(t, calendar(order...), feed.Options{})
				if len(cal.Events) != 1 || cal.Events[0].Summary != tt.want || len(cal.Warnings) != 1 {
					t.Errorf("got %+v, warnings %v", cal.Events, cal.Warnings)
				}
			}
		})
	}
	// A stable tiebreak when nothing else differs.
	a := vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:a")
	b := vevent("UID:x", "DTSTART:20270101T100000Z", "SUMMARY:b")
	if x, y := parse(t, calendar(a, b), feed.Options{}), parse(t, calendar(b, a), feed.Options{}); x.Events[0].Summary != y.Events[0].Summary {
		t.Error("the tiebreak depends on the order")
	}
}

func TestParseContentIdentity(t *testing.T) {
	fetch := func(suffix string) *feed.Calendar {
		return parse(t, calendar(
			vevent("UID:m-"+suffix, "DTSTART;TZID=Europe/Berlin:20270104T100000", "SUMMARY:weekly", "RRULE:FREQ=WEEKLY"),
			vevent("UID:m-"+suffix, "RECURRENCE-ID;TZID=Europe/Berlin:20270111T100000", "DTSTART;TZID=Europe/Berlin:20270111T110000", "SUMMARY:weekly (moved)"),
			vevent("UID:s-"+suffix, "DTSTART:20270105T100000Z", "SUMMARY:single", "DESCRIPTION:"+suffix),
		), feed.Options{Identity: feed.IdentityContent})
	}
	one, two := fetch("1"), fetch("2")
	if len(one.Events) != 3 {
		t.Fatalf("%d events", len(one.Events))
	}
	for i := range one.Events {
		if one.Events[i].Key() != two.Events[i].Key() {
			t.Errorf("key %v then %v", one.Events[i].Key(), two.Events[i].Key())
		}
		if !strings.HasPrefix(one.Events[i].UID, "content-") {
			t.Errorf("UID %q", one.Events[i].UID)
		}
	}
	// The override stays with its master.
	master := find(t, one, bySummary("weekly"))
	override := find(t, one, bySummary("weekly (moved)"))
	if master.UID != override.UID || override.RecurrenceID != "20270111T090000Z" {
		t.Errorf("master %v, override %v", master.Key(), override.Key())
	}
}

func TestParseWindow(t *testing.T) {
	now := time.Date(2027, 6, 15, 12, 0, 0, 0, time.UTC)
	body := calendar(
		vevent("UID:old", "DTSTART:20270101T100000Z", "DTEND:20270101T110000Z"),
		vevent("UID:recent", "DTSTART:20270601T100000Z", "DTEND:20270601T110000Z"),
		vevent("UID:far", "DTSTART:20290101T100000Z"),
		vevent("UID:old-weekly", "DTSTART:20270101T100000Z", "RRULE:FREQ=WEEKLY;COUNT=3"),
		vevent("UID:long-weekly", "DTSTART:20270101T100000Z", "RRULE:FREQ=WEEKLY;UNTIL=20271231T000000Z"),
		vevent("UID:endless", "DTSTART:20200101T100000Z", "RRULE:FREQ=YEARLY"),
		vevent("UID:rdate", "DTSTART:20200101T100000Z", "RDATE:20270620T100000Z"),
		vevent("UID:old-weekly", "RECURRENCE-ID:20270108T100000Z", "DTSTART:20270108T120000Z"),
		vevent("UID:long-weekly", "RECURRENCE-ID:20270108T100000Z", "DTSTART:20270108T120000Z"),
		vevent("UID:all-day", "DTSTART;VALUE=DATE:20270520", "DTEND;VALUE=DATE:20270620"),
	)
	tests := map[string]struct {
		past, future time.Duration
		want         string
	}{
		"unbounded":        {want: "all-day,endless,far,long-weekly,long-weekly@20270108T100000Z,old,old-weekly,old-weekly@20270108T100000Z,rdate,recent"},
		"30 days back":     {past: 30 * 24 * time.Hour, want: "all-day,endless,far,long-weekly,long-weekly@20270108T100000Z,rdate,recent"},
		"and a year ahead": {past: 30 * 24 * time.Hour, future: 365 * 24 * time.Hour, want: "all-day,endless,long-weekly,long-weekly@20270108T100000Z,rdate,recent"},
		// No lower bound: everything up to three days ahead, the series'
		// DTSTART included (its RDATE is later).
		"only ahead": {future: 3 * 24 * time.Hour, want: "all-day,endless,long-weekly,long-weekly@20270108T100000Z,old,old-weekly,old-weekly@20270108T100000Z,rdate,recent"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cal := parse(t, body, feed.Options{Now: now, WindowPast: tt.past, WindowFuture: tt.future})
			var keys []string
			for _, ev := range cal.Events {
				keys = append(keys, ev.Key().String())
			}
			if got := strings.Join(keys, ","); got != tt.want {
				t.Errorf("kept %s\nwant %s", got, tt.want)
			}
			if cal.OutsideWindow != 10-len(keys) || len(cal.Outside) != cal.OutsideWindow {
				t.Errorf("OutsideWindow = %d, Outside %v", cal.OutsideWindow, cal.Outside)
			}
		})
	}
}

// TestParseLargeFeedWithAnUnreadableEvent covers the parallel path: a feed
// large enough to be read in slices, one slice holding an event golang-ical
// cannot read.
func TestParseLargeFeedWithAnUnreadableEvent(t *testing.T) {
	body := string(feedgen.Generate(5000))
	bad := vevent("UID:unreadable", "DTSTART:20270101T100000Z", "LOCATION;X A=1:v", "SUMMARY:bad")
	body = strings.Replace(body, "END:VCALENDAR\r\n", bad+"\r\nEND:VCALENDAR\r\n", 1)
	cal := parse(t, []byte(body), feed.Options{})
	if len(cal.Events) != 5000 {
		t.Errorf("%d events, want 5000", len(cal.Events))
	}
	if len(cal.Warnings) != 1 || !strings.Contains(cal.Warnings[0].String(), `unreadable: VEVENT 5001 ("bad") skipped: unreadable`) {
		t.Errorf("warnings %v", cal.Warnings)
	}
}
