package feed_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/corpus"
)

func parseOne(t *testing.T, lines ...string) feed.Event {
	t.Helper()
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nUID:s\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	cal, err := feed.ParseBytes([]byte(body), feed.Options{})
	if err != nil || len(cal.Events) != 1 {
		t.Fatalf("parse: %v %+v", err, cal)
	}
	return cal.Events[0]
}

func occurrences(s *feed.Series, n int) []string {
	var out []string
	next := s.Occurrences(n)
	for {
		t, ok := next()
		if !ok {
			return out
		}
		out = append(out, t.UTC().Format("01-02T15:04"))
	}
}

func TestSeriesOccurrences(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"weekly across DST keeps the wall clock",
			[]string{"DTSTART;TZID=Europe/Berlin:20270315T093000", "DTEND;TZID=Europe/Berlin:20270315T100000", "RRULE:FREQ=WEEKLY;COUNT=3"},
			"[03-15T08:30 03-22T08:30 03-29T07:30]"},
		{"a start outside the rule is the first occurrence and counts",
			[]string{"DTSTART:20270315T090000Z", "RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=3"},
			"[03-15T09:00 03-16T09:00 03-23T09:00]"},
		{"RDATE adds, EXDATE removes",
			[]string{"DTSTART:20270315T090000Z", "RRULE:FREQ=DAILY;COUNT=3", "EXDATE:20270316T090000Z", "RDATE:20270320T120000Z"},
			"[03-15T09:00 03-17T09:00 03-20T12:00]"},
		{"all-day with UNTIL",
			[]string{"DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=MONTHLY;UNTIL=20270301"},
			"[01-01T00:00 02-01T00:00 03-01T00:00]"},
		{"RDATEs only",
			[]string{"DTSTART:20270101T100000Z", "RDATE:20270105T100000Z,20270103T100000Z"},
			"[01-01T10:00 01-03T10:00 01-05T10:00]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := parseOne(t, tt.lines...)
			s, err := feed.ParseSeries(&ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(occurrences(s, 10)); got != tt.want {
				t.Errorf("occurrences = %s, want %s", got, tt.want)
			}
			if !slices.Equal(s.Lines(), ev.Recurrence) {
				t.Errorf("lines = %q, want %q", s.Lines(), ev.Recurrence)
			}
		})
	}
}

func TestSeriesCutsAtThisAndFuture(t *testing.T) {
	ev := parseOne(t, "DTSTART;TZID=Europe/Berlin:20270104T093000", "DTEND;TZID=Europe/Berlin:20270104T100000",
		"RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=8", "EXDATE;TZID=Europe/Berlin:20270120T093000")
	s, err := feed.ParseSeries(&ev)
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cut := time.Date(2027, 1, 18, 9, 30, 0, 0, berlin)
	if !s.Has(cut) || s.Has(time.Date(2027, 1, 20, 9, 30, 0, 0, berlin)) {
		t.Fatal("Has is wrong about the cut or the excluded date")
	}
	before, ok := s.Before(cut)
	if !ok || fmt.Sprint(before.Lines()) != "[RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20270118T082959Z]" {
		t.Errorf("before = %v %v", before.Lines(), ok)
	}
	if _, ok := s.Before(ev.Start.T); ok {
		t.Error("a cut at the first occurrence leaves something before it")
	}
	// Moved by a day: Mondays and Wednesdays become Tuesdays and Thursdays;
	// 4 of the 8 occurrences remain, the EXDATE moves along.
	later := feed.Time{T: time.Date(2027, 1, 19, 11, 0, 0, 0, berlin), Zone: "Europe/Berlin"}
	sh := s.ShiftBetween(cut, later)
	from, ok := s.From(cut, time.Time{}, sh)
	want := "[RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4 EXDATE;TZID=Europe/Berlin:20270121T110000]"
	if !ok || fmt.Sprint(from.Lines()) != want {
		t.Errorf("from = %v %v, want %s", from.Lines(), ok, want)
	}
	if got := fmt.Sprint(occurrences(from, 10)); got != "[01-19T10:00 01-26T10:00 01-28T10:00]" {
		t.Errorf("moved occurrences = %s", got)
	}
	// A monthly day-of-month rule cannot move by a day.
	monthly := parseOne(t, "DTSTART:20270115T090000Z", "RRULE:FREQ=MONTHLY;BYMONTHDAY=15")
	ms, _ := feed.ParseSeries(&monthly)
	mcut := time.Date(2027, 3, 15, 9, 0, 0, 0, time.UTC)
	if _, ok := ms.From(mcut, time.Time{}, ms.ShiftBetween(mcut, feed.Time{T: mcut.AddDate(0, 0, 1)})); ok {
		t.Error("a monthly BYMONTHDAY rule moved by a day")
	}
	// The same rule moved within its day is fine.
	if f, ok := ms.From(mcut, time.Time{}, ms.ShiftBetween(mcut, feed.Time{T: mcut.Add(2 * time.Hour)})); !ok || f.Start().T.Hour() != 11 {
		t.Errorf("a move within the day: %v", ok)
	}
}

// Every recurring event of the corpus reads back into the lines it came
// with.
func TestSeriesReadsBackTheCorpus(t *testing.T) {
	dir, files := corpus.Files(t)
	n := 0
	for _, name := range files {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte("RRULE")) && !bytes.Contains(body, []byte("RDATE")) {
			continue
		}
		cal := mustParseCorpus(t, name, feed.Options{})
		for i := range cal.Events {
			ev := &cal.Events[i]
			if !ev.IsRecurring() {
				continue
			}
			n++
			s, err := feed.ParseSeries(ev)
			if err != nil {
				t.Errorf("%s %s: %v", name, ev.UID, err)
				continue
			}
			if !slices.Equal(s.Lines(), ev.Recurrence) {
				t.Errorf("%s %s: lines %q, want %q", name, ev.UID, s.Lines(), ev.Recurrence)
			}
			if next := s.Occurrences(1); next == nil {
				t.Errorf("%s %s: no iterator", name, ev.UID)
			} else if first, ok := next(); ok && (first.Before(ev.Start.T) || !first.Equal(ev.Start.T) && s.Has(ev.Start.T)) {
				t.Errorf("%s %s: first occurrence %s, DTSTART %s", name, ev.UID, first, ev.Start.T)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d recurring events in the corpus", n)
	}
}

// TestParserHandsOnItsSeries: every recurring event of the corpus carries
// the series the parser read, and it says the same as the event's lines and
// as reading them back; every override with a series in the feed carries
// its original start as that series names its occurrences.
func TestParserHandsOnItsSeries(t *testing.T) {
	dir, files := corpus.Files(t)
	masters, overrides := 0, 0
	for _, name := range files {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte("RRULE")) && !bytes.Contains(body, []byte("RDATE")) {
			continue
		}
		cal := mustParseCorpus(t, name, feed.Options{})
		series := map[string]*feed.Event{}
		for i := range cal.Events {
			ev := &cal.Events[i]
			if ev.IsRecurring() != (ev.Series != nil) {
				t.Errorf("%s %s: recurring %v, series %v", name, ev.UID, ev.IsRecurring(), ev.Series != nil)
				continue
			}
			if ev.Series == nil {
				continue
			}
			masters++
			series[ev.UID] = ev
			read, err := feed.ParseSeries(ev)
			if err != nil {
				t.Fatalf("%s %s: %v", name, ev.UID, err)
			}
			if !slices.Equal(ev.Series.Lines(), ev.Recurrence) || !slices.Equal(read.Lines(), ev.Recurrence) {
				t.Errorf("%s %s: series %q, read back %q, lines %q", name, ev.UID, ev.Series.Lines(), read.Lines(), ev.Recurrence)
			}
			a, b := ev.Series.Occurrences(50), read.Occurrences(50)
			for {
				x, okx := a()
				y, oky := b()
				if okx != oky || !x.Equal(y) {
					t.Errorf("%s %s: occurrences differ: %s %v, read back %s %v", name, ev.UID, x, okx, y, oky)
					break
				}
				if !okx {
					break
				}
			}
		}
		for i := range cal.Events {
			ov := &cal.Events[i]
			m := series[ov.UID]
			if ov.RecurrenceID == "" || m == nil {
				continue
			}
			overrides++
			want, ok := feed.ParseRecurrenceID(ov.RecurrenceID, m.Start)
			if !ok || !ov.Original.T.Equal(want) || ov.Original.AllDay != m.Start.AllDay || feed.CanonicalRecurrenceID(ov.Original) != ov.RecurrenceID {
				t.Errorf("%s %s: original start %+v for recurrence id %s (series all-day %v)", name, ov.UID, ov.Original, ov.RecurrenceID, m.Start.AllDay)
			}
		}
	}
	if masters < 100 || overrides < 10 {
		t.Errorf("only %d series and %d overrides in the corpus", masters, overrides)
	}
}
