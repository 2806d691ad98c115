package feed_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// The minimal reproductions of value defects (text, dates, durations):
// each test states by hand what the feed means.

func TestDefectBrokenUTF8LosesOnlyItsBrokenBytes(t *testing.T) {
	body, err := os.ReadFile("../../testdata/feeds/defects/broken-utf8.ics")
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the server declares, the bytes are UTF-8: only the two
	// damaged characters are lost, each broken byte a U+FFFD.
	for _, charset := range []string{"", "utf-8", "ISO-8859-1", "windows-1252", "x-martian"} {
		for name, parse := range map[string]func() (*feed.Calendar, error){
			"bytes": func() (*feed.Calendar, error) { return feed.ParseBytes(body, feed.Options{Charset: charset}) },
			"streamed": func() (*feed.Calendar, error) {
				return feed.Parse(bytes.NewReader(body), feed.Options{Charset: charset})
			},
		} {
			cal, err := parse()
			if err != nil {
				t.Fatal(err)
			}
			ev := eventByKey(t, cal, "broken-utf8@defects.calsyncd", "")
			if ev.Summary != "2026年日本国際\uFFFD?\uFFFD覧会" || ev.Location != "名古屋\uFFFD?\uFFFD部丘陵" ||
				ev.Description != "入場は無料です" || cal.Name != "展示会カレンダー" {
				t.Errorf("charset %q, %s: %q %q %q %q", charset, name, ev.Summary, ev.Location, ev.Description, cal.Name)
			}
			declared := charset == "ISO-8859-1" || charset == "windows-1252"
			if warned := slices.ContainsFunc(cal.Warnings, func(w feed.Warning) bool { return strings.Contains(w.Message, "bytes are UTF-8") }); warned != declared {
				t.Errorf("charset %q, %s: warned %v that the declaration is set aside: %v", charset, name, warned, cal.Warnings)
			}
		}
	}
	// In a UTF-8 feed, a value without any UTF-8 sequence and with bytes
	// that are not UTF-8 was pasted in from a Latin-1 source.
	mixed := bytes.Replace(body, []byte("DESCRIPTION:入場は無料です"), []byte("DESCRIPTION:Entr\xe9e libre \x96 5 \x80"), 1)
	for _, charset := range []string{"", "ISO-8859-1"} {
		cal, err := feed.ParseBytes(mixed, feed.Options{Charset: charset})
		if err != nil {
			t.Fatal(err)
		}
		ev := eventByKey(t, cal, "broken-utf8@defects.calsyncd", "")
		if ev.Description != "Entrée libre – 5 €" || ev.Summary != "2026年日本国際\uFFFD?\uFFFD覧会" {
			t.Errorf("charset %q: %q %q", charset, ev.Description, ev.Summary)
		}
	}
	// A Latin-1 feed in which two bytes happen to form a UTF-8 sequence
	// ("É’" is C9 92) is Latin-1 when it says so: its other bytes are not
	// UTF-8, so the declaration stands. Declaring nothing, the sequence
	// is taken for the UTF-8 it is, and only the bytes that are not
	// become Windows-1252 (as a value mixing "Café" in UTF-8 with
	// «Málaga» in Latin-1 wants).
	latin := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:l\r\nDTSTART:20270101T100000Z\r\nSUMMARY:CAF\xc9\x92S \xe0 M\xe1laga\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	for charset, want := range map[string]string{"windows-1252": "CAFÉ’S à Málaga", "": "CAF\u0252S à Málaga"} {
		cal, err := feed.ParseBytes([]byte(latin), feed.Options{Charset: charset})
		if err != nil || cal.Events[0].Summary != want {
			t.Errorf("charset %q: %v %q, want %q", charset, err, cal.Events[0].Summary, want)
		}
	}
}

func TestDefectTextIsUnescapedWhateverItsParameters(t *testing.T) {
	cal := parseDefect(t, "text-escapes-quoted-param.ics", feed.Options{})
	ev := eventByKey(t, cal, "quoted-param@defects.calsyncd", "")
	if ev.Summary != "Review, Q4\nroom 2" || ev.Location != "Room 2; 3rd floor" || ev.Description != "A\nB\n" {
		t.Errorf("%q %q %q", ev.Summary, ev.Location, ev.Description)
	}
	// The same lines through golang-ical's own reading of parameters
	// (a backslash in one sends the line there), and on the calendar.
	for _, tt := range []struct{ line, want string }{
		{`SUMMARY;VALUE="A^nB^n":A\nB\n`, "A\nB\n"},
		{`SUMMARY;X-NOTE=a\b;VALUE=X-TEXT:One\, two\; three`, "One, two; three"},
		{`SUMMARY;VALUE=TEXT:One\, two`, "One, two"},
		{`SUMMARY;LANGUAGE=en:One\, two`, "One, two"},
		{`SUMMARY:One\, two`, "One, two"},
	} {
		body := "BEGIN:VCALENDAR\r\nX-WR-CALNAME;VALUE=\"x\":Team\\, room\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTART:20270101T100000Z\r\n" + tt.line + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
		cal, err := feed.ParseBytes([]byte(body), feed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := cal.Events[0].Summary; got != tt.want || cal.Name != "Team, room" {
			t.Errorf("%s: %q, calendar %q; want %q", tt.line, got, cal.Name, tt.want)
		}
	}
}

func TestDefectEscapedSemicolonsInARuleKeepTheRule(t *testing.T) {
	cal := parseDefect(t, "escaped-rrule.ics", feed.Options{})
	for _, tt := range []struct {
		uid  string
		rule string
		want []string
	}{
		{"escaped-daily@defects.calsyncd", "RRULE:FREQ=DAILY;COUNT=3",
			[]string{"2026-12-07T07:00:00Z", "2026-12-08T07:00:00Z", "2026-12-09T07:00:00Z"}},
		{"escaped-weekly@defects.calsyncd", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=3",
			[]string{"2026-12-14T16:00:00Z", "2026-12-16T16:00:00Z", "2026-12-21T16:00:00Z"}},
	} {
		ev := eventByKey(t, cal, tt.uid, "")
		if !ev.IsRecurring() || !slices.Equal(ev.Recurrence, []string{tt.rule}) {
			t.Errorf("%s: recurrence %q, want %q", tt.uid, ev.Recurrence, tt.rule)
			continue
		}
		if got := defectOccurrences(ev); !slices.Equal(got, tt.want) {
			t.Errorf("%s: occurrences %q, want %q", tt.uid, got, tt.want)
		}
	}
	for _, w := range cal.Warnings {
		if strings.Contains(w.Message, "RRULE") {
			t.Errorf("warning %q: the rule is read whole", w)
		}
	}
}

func TestDefectTZIDWithZIsTheZonesWallClock(t *testing.T) {
	cal := parseDefect(t, "tzid-and-z.ics", feed.Options{})
	single := eventByKey(t, cal, "tzid-and-z@defects.calsyncd", "")
	// 17:00 in New York (EST) is 22:00 UTC, as Google shows it.
	if !single.Start.T.Equal(utc("2026-12-22T22:00:00Z")) || !single.End.T.Equal(utc("2026-12-22T23:00:00Z")) || single.Start.Zone != "America/New_York" {
		t.Errorf("%v..%v %q, want 17:00..18:00 in New York", single.Start.T.UTC(), single.End.T.UTC(), single.Start.Zone)
	}
	// The EXDATE is read the same way, so it removes its occurrence.
	series := eventByKey(t, cal, "tzid-and-z-series@defects.calsyncd", "")
	if got, want := defectOccurrences(series), []string{"2026-12-08T14:00:00Z", "2026-12-22T14:00:00Z"}; !slices.Equal(got, want) {
		t.Errorf("occurrences %q, want %q", got, want)
	}
	if !slices.ContainsFunc(cal.Warnings, func(w feed.Warning) bool {
		return strings.Contains(w.Message, "trailing Z are read on America/New_York's clock")
	}) {
		t.Errorf("no warning says how the values are read: %v", cal.Warnings)
	}
	// An unknown TZID: the Z is all that says when, so it is UTC.
	body := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTART;TZID=Mars/Olympus:20270101T170000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	c, err := feed.ParseBytes([]byte(body), feed.Options{DefaultZone: "Europe/Berlin"})
	if err != nil || !c.Events[0].Start.T.Equal(utc("2027-01-01T17:00:00Z")) {
		t.Errorf("unknown zone: %v %v", err, c.Events[0].Start.T)
	}
}
