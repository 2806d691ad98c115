package feed_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// The minimal reproductions of recurrence defects, our own files: each test
// states by hand what RFC 5545 means. internal/subscription mirrors the
// same files and checks what Google shows.

func parseDefect(t *testing.T, name string, opts feed.Options) *feed.Calendar {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("../../testdata/feeds/defects", name))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Now.IsZero() {
		opts.Now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	}
	cal, err := feed.ParseBytes(body, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cal
}

func eventByKey(t *testing.T, cal *feed.Calendar, uid, rid string) *feed.Event {
	t.Helper()
	for i := range cal.Events {
		if cal.Events[i].UID == uid && cal.Events[i].RecurrenceID == rid {
			return &cal.Events[i]
		}
	}
	t.Fatalf("no event %s %s in %d events", uid, rid, len(cal.Events))
	return nil
}

// defectOccurrences lists a series' original starts in UTC.
func defectOccurrences(ev *feed.Event) []string {
	var out []string
	next := ev.Series.Occurrences(100)
	for o, ok := next(); ok; o, ok = next() {
		out = append(out, o.UTC().Format(time.RFC3339))
	}
	return out
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDefectPeriodKeepsItsOwnEnd(t *testing.T) {
	cal := parseDefect(t, "rdate-period.ics", feed.Options{})
	m := eventByKey(t, cal, "period@defects.calsyncd", "")
	if want := []string{"RRULE:FREQ=WEEKLY;COUNT=4", "RDATE:20270106T080000Z"}; !slices.Equal(m.Recurrence, want) {
		t.Errorf("recurrence %q, want %q", m.Recurrence, want)
	}
	ov := eventByKey(t, cal, "period@defects.calsyncd", "20270106T080000Z")
	if !ov.Start.T.Equal(utc("2027-01-06T08:00:00Z")) || !ov.End.T.Equal(utc("2027-01-06T11:00:00Z")) || ov.Summary != "Weekly check-in" {
		t.Errorf("period occurrence %v..%v %q, want 08:00..11:00", ov.Start.T, ov.End.T, ov.Summary)
	}
	if len(cal.Events) != 2 {
		t.Errorf("%d events, want the series and its period", len(cal.Events))
	}
}

func TestDefectFloatingExdateIsInTheSeriesZone(t *testing.T) {
	// The feed's default zone is New York: it must not be the EXDATE's.
	cal := parseDefect(t, "floating-exdate.ics", feed.Options{DefaultZone: "America/New_York"})
	m := eventByKey(t, cal, "floating-exdate@defects.calsyncd", "")
	if want := []string{"RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;TZID=Europe/Berlin:20270108T110000"}; !slices.Equal(m.Recurrence, want) {
		t.Errorf("recurrence %q, want %q", m.Recurrence, want)
	}
	if got, want := defectOccurrences(m), []string{"2027-01-01T10:00:00Z", "2027-01-15T10:00:00Z"}; !slices.Equal(got, want) {
		t.Errorf("occurrences %q, want %q", got, want)
	}
}

func TestDefectDSTGapTakesTheOffsetBeforeIt(t *testing.T) {
	cal := parseDefect(t, "dst-gap.ics", feed.Options{})
	single := eventByKey(t, cal, "gap-single@defects.calsyncd", "")
	if !single.Start.T.Equal(utc("2027-03-14T06:30:00Z")) || !single.End.T.Equal(utc("2027-03-14T07:30:00Z")) {
		t.Errorf("handover %v..%v, want 01:30 EST..03:30 EDT", single.Start.T.UTC(), single.End.T.UTC())
	}
	series := eventByKey(t, cal, "gap-series@defects.calsyncd", "")
	// 02:30 on 14 March does not exist: 03:30 EDT, 07:30Z.
	if got, want := defectOccurrences(series), []string{"2027-03-07T07:30:00Z", "2027-03-14T07:30:00Z", "2027-03-21T06:30:00Z"}; !slices.Equal(got, want) {
		t.Errorf("occurrences %q, want %q", got, want)
	}
	lo, hi := utc("2027-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z")
	if !series.Series.GapOccurrence(lo, hi) {
		t.Error("the series has an occurrence in a gap")
	}
	if series.Series.GapOccurrence(utc("2027-03-15T00:00:00Z"), hi) {
		t.Error("no occurrence after 15 March is in a gap")
	}
	// An EXDATE given as a date, and an override's RECURRENCE-ID, name
	// the occurrence in the gap as the series places it.
	body, _ := os.ReadFile("../../testdata/feeds/defects/dst-gap.ics")
	edited := strings.Replace(string(body), "RRULE:FREQ=WEEKLY;COUNT=3\r\n", "RRULE:FREQ=WEEKLY;COUNT=3\r\nEXDATE;VALUE=DATE:20270314\r\n", 1)
	cal2, err := feed.ParseBytes([]byte(edited), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := defectOccurrences(eventByKey(t, cal2, "gap-series@defects.calsyncd", "")), []string{"2027-03-07T07:30:00Z", "2027-03-21T06:30:00Z"}; !slices.Equal(got, want) {
		t.Errorf("with EXDATE 14 March: occurrences %q, want %q", got, want)
	}
	override := "BEGIN:VEVENT\r\nUID:gap-series@defects.calsyncd\r\nRECURRENCE-ID;TZID=America/New_York:20270314T023000\r\n" +
		"DTSTART;TZID=America/New_York:20270314T040000\r\nDTEND;TZID=America/New_York:20270314T043000\r\nSUMMARY:Backup window (late)\r\nEND:VEVENT\r\nEND:VCALENDAR"
	cal3, err := feed.ParseBytes([]byte(strings.Replace(string(body), "END:VCALENDAR", override, 1)), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ov := eventByKey(t, cal3, "gap-series@defects.calsyncd", "20270314T073000Z")
	if !eventByKey(t, cal3, "gap-series@defects.calsyncd", "").Series.Has(ov.Original.T) {
		t.Errorf("the override's original start %v is no occurrence", ov.Original.T)
	}
	for rule, want := range map[string]bool{
		"DTSTART;TZID=America/New_York:20270101T100000\r\nRRULE:FREQ=DAILY":                         false,
		"DTSTART;TZID=America/New_York:20270101T023000\r\nRRULE:FREQ=DAILY":                         true,
		"DTSTART;TZID=America/New_York:20270101T100000\r\nRRULE:FREQ=DAILY;BYHOUR=2,10;BYMINUTE=15": true,
		"DTSTART;TZID=America/New_York:20270101T100000\r\nRRULE:FREQ=HOURLY;INTERVAL=24":            false,
		"DTSTART;TZID=Europe/Berlin:20270101T023000\r\nRRULE:FREQ=WEEKLY;BYDAY=SU":                  true,
		"DTSTART;TZID=Europe/Berlin:20270101T023000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO":                  false,
	} {
		body := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:g\r\n" + rule + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
		cal, err := feed.ParseBytes([]byte(body), feed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := cal.Events[0].Series.GapOccurrence(lo, hi); got != want {
			t.Errorf("%s: gap occurrence %v, want %v", rule, got, want)
		}
	}
}

func TestDefectCustomZoneNearIANAIsThatZone(t *testing.T) {
	cal := parseDefect(t, "custom-vtimezone.ics", feed.Options{})
	eastern := eventByKey(t, cal, "custom-eastern@defects.calsyncd", "")
	if eastern.Start.Zone != "America/New_York" {
		t.Errorf("zone %q, want America/New_York", eastern.Start.Zone)
	}
	if got := defectOccurrences(eastern); got[0] != "2027-01-04T14:00:00Z" || got[4] != "2027-05-04T13:00:00Z" {
		t.Errorf("occurrences %q: want 09:00 EST in January, 09:00 EDT in May", got)
	}
	own := eventByKey(t, cal, "custom-own@defects.calsyncd", "")
	if own.Start.Zone != "" {
		t.Errorf("zone %q: no IANA zone is +01:30/+02:30", own.Start.Zone)
	}
	want := []string{"2027-01-04T07:30:00Z", "2027-02-04T07:30:00Z", "2027-03-04T07:30:00Z", "2027-04-04T06:30:00Z", "2027-05-04T06:30:00Z"}
	if got := defectOccurrences(own); !slices.Equal(got, want) {
		t.Errorf("occurrences %q, want %q (the feed's own rules, not UTC)", got, want)
	}
	lo, hi := utc("2026-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z")
	if !own.Series.UnnamedZoneShifts(lo, hi) || eastern.Series.UnnamedZoneShifts(lo, hi) {
		t.Error("only the series in the feed's own zone is in a zone Google cannot name")
	}
}

func TestDefectSeveralRRulesGiveTheUnion(t *testing.T) {
	cal := parseDefect(t, "several-rrules.ics", feed.Options{})
	m := eventByKey(t, cal, "two-rules@defects.calsyncd", "")
	if want := []string{"RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3", "RDATE:20261210T090000Z"}; !slices.Equal(m.Recurrence, want) {
		t.Errorf("recurrence %q, want %q", m.Recurrence, want)
	}
	want := []string{"2026-12-07T09:00:00Z", "2026-12-10T09:00:00Z", "2026-12-14T09:00:00Z", "2026-12-21T09:00:00Z"}
	if got := defectOccurrences(m); !slices.Equal(got, want) {
		t.Errorf("occurrences %q, want %q", got, want)
	}
	if !slices.ContainsFunc(cal.Warnings, func(w feed.Warning) bool { return strings.Contains(w.Message, "is written as 1 RDATEs") }) {
		t.Errorf("no warning says how the second rule is written: %v", cal.Warnings)
	}
}

func TestDefectRRuleBesideRecurrenceIDIsTheSeries(t *testing.T) {
	cal := parseDefect(t, "rrule-with-recurrence-id.ics", feed.Options{})
	if len(cal.Events) != 1 {
		t.Fatalf("%d events", len(cal.Events))
	}
	m := eventByKey(t, cal, "rid-series@defects.calsyncd", "")
	want := []string{"2026-12-08T09:00:00Z", "2026-12-15T09:00:00Z", "2026-12-22T09:00:00Z", "2026-12-29T09:00:00Z"}
	if got := defectOccurrences(m); !slices.Equal(got, want) {
		t.Errorf("occurrences %q, want %q", got, want)
	}
	// With a master beside it, the component is an override as before.
	body, _ := os.ReadFile("../../testdata/feeds/defects/rrule-with-recurrence-id.ics")
	master := "BEGIN:VEVENT\r\nUID:rid-series@defects.calsyncd\r\nDTSTART;TZID=Europe/Berlin:20261201T100000\r\n" +
		"DTEND;TZID=Europe/Berlin:20261201T110000\r\nRRULE:FREQ=WEEKLY;COUNT=6\r\nSUMMARY:Team sync\r\nEND:VEVENT\r\nEND:VCALENDAR"
	cal, err := feed.ParseBytes([]byte(strings.Replace(string(body), "END:VCALENDAR", master, 1)), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Events) != 2 || cal.Events[1].RecurrenceID != "20261208T090000Z" || cal.Events[1].IsRecurring() {
		t.Errorf("events %+v", cal.Events)
	}
}

func TestDefectWindows1252TextIsDecoded(t *testing.T) {
	for name, charset := range map[string]string{"no charset": "", "declared ISO-8859-1": "ISO-8859-1", "declared windows-1252": "windows-1252", "declared UTF-8": "utf-8"} {
		cal := parseDefect(t, "windows-1252.ics", feed.Options{Charset: charset})
		ev := eventByKey(t, cal, "latin1@defects.calsyncd", "")
		if ev.Summary != "Día de la Constitución" || ev.Description != "Fiesta nacional – entrada 5 €" || ev.Location != "Málaga" || cal.Name != "Festivos España" {
			t.Errorf("%s: %q %q %q %q", name, ev.Summary, ev.Description, ev.Location, cal.Name)
		}
	}
	// A declared charset is honoured even where the bytes are valid UTF-8.
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:k\r\nDTSTART:20270101T100000Z\r\nSUMMARY:\xf0\xd2\xc9\xd7\xc5\xd4\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	cal, err := feed.ParseBytes([]byte(body), feed.Options{Charset: "KOI8-R"})
	if err != nil || cal.Events[0].Summary != "Привет" {
		t.Errorf("KOI8-R: %v %q", err, cal.Events[0].Summary)
	}
	cal, err = feed.Parse(strings.NewReader(body), feed.Options{Charset: "KOI8-R"})
	if err != nil || cal.Events[0].Summary != "Привет" {
		t.Errorf("KOI8-R streamed: %v %q", err, cal.Events[0].Summary)
	}
	// An unknown label: read as without one, with a warning.
	cal, err = feed.ParseBytes([]byte(body), feed.Options{Charset: "x-martian"})
	if err != nil || strings.ContainsRune(cal.Events[0].Summary, '\uFFFD') ||
		!slices.ContainsFunc(cal.Warnings, func(w feed.Warning) bool { return strings.Contains(w.Message, `unknown charset "x-martian"`) }) {
		t.Errorf("unknown charset: %v %q %v", err, cal.Events[0].Summary, cal.Warnings)
	}
}

// lastMondays are the 19:00 Amsterdam instants of the last Monday of each
// month in [from, to), written out from the calendar, not from a rule.
func lastMondays(from, to time.Time) []time.Time {
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		panic(err)
	}
	var out []time.Time
	for m := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); m.Before(to); m = m.AddDate(0, 1, 0) {
		last := time.Date(m.Year(), m.Month()+1, 0, 19, 0, 0, 0, ams)
		for last.Weekday() != time.Monday {
			last = last.AddDate(0, 0, -1)
		}
		if !last.Before(from) && last.Before(to) {
			out = append(out, last)
		}
	}
	return out
}

func TestDefectExRuleExcludesItsOccurrences(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cal := parseDefect(t, "exrule.ics", feed.Options{Now: now})
	weekdays := eventByKey(t, cal, "exrule-weekdays@defects.calsyncd", "")
	if want := []string{"RRULE:FREQ=DAILY;COUNT=14", "EXDATE:20261212T080000Z,20261213T080000Z,20261219T080000Z,20261220T080000Z"}; !slices.Equal(weekdays.Recurrence, want) {
		t.Errorf("weekdays: recurrence %q, want %q", weekdays.Recurrence, want)
	}
	if got := defectOccurrences(weekdays); len(got) != 10 || got[4] != "2026-12-11T08:00:00Z" || got[5] != "2026-12-14T08:00:00Z" {
		t.Errorf("weekdays: occurrences %q, want the ten weekdays of 7-18 December", got)
	}
	// The EXDATEs stop at the horizon, the endless choir does not: the
	// feed is to be rendered again before the window reaches it.
	if lo, hi := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC); cal.RereadAt.IsZero() ||
		!cal.RereadAt.After(now) || !cal.RereadAt.Before(hi) || cal.RereadAt.Before(lo) {
		t.Errorf("RereadAt = %v: want a re-render before the EXDATEs' horizon %v", cal.RereadAt, hi)
	}
	bins := eventByKey(t, cal, "exrule-bins@defects.calsyncd", "")
	if want := []string{"RRULE:FREQ=WEEKLY;COUNT=8", "EXDATE;VALUE=DATE:20261225,20270101"}; !slices.Equal(bins.Recurrence, want) {
		t.Errorf("bins: recurrence %q, want %q (two EXRULEs, all-day)", bins.Recurrence, want)
	}
	for _, ev := range cal.Events {
		for _, line := range ev.Recurrence {
			if strings.HasPrefix(line, "EXRULE") {
				t.Errorf("%s: %q is sent to Google", ev.UID, line)
			}
		}
	}
	// The endless series: its EXDATEs cover the horizon the RDATEs of an
	// extra RRULE cover, from the window's first year to its last.
	body, err := os.ReadFile("../../testdata/feeds/defects/exrule.ics")
	if err != nil {
		t.Fatal(err)
	}
	extra := strings.Replace(string(body), "RRULE:FREQ=WEEKLY;BYDAY=MO\r\n", "RRULE:FREQ=WEEKLY;BYDAY=MO\r\nRRULE:FREQ=WEEKLY;BYDAY=TH\r\n", 1)
	year := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, tt := range []struct {
		name   string
		opts   feed.Options
		lo, hi time.Time
	}{
		{"open window", feed.Options{Now: now}, time.Time{}, year(2029)},
		{"90 days ahead", feed.Options{Now: now, WindowFuture: 90 * 24 * time.Hour}, time.Time{}, year(2028)},
		{"30 days back a year on, 90 days ahead", feed.Options{Now: now.AddDate(1, 0, 0), WindowPast: 30 * 24 * time.Hour, WindowFuture: 90 * 24 * time.Hour}, year(2027), year(2029)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for name, b := range map[string]string{"one RRULE": string(body), "with an extra RRULE": extra} {
				cal, err := feed.ParseBytes([]byte(b), tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				m := eventByKey(t, cal, "exrule-monthly@defects.calsyncd", "")
				want := lastMondays(time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC), tt.hi)
				want = slices.DeleteFunc(want, func(x time.Time) bool { return !tt.lo.IsZero() && x.Before(tt.lo) })
				if got := amsterdamDates(t, m.Recurrence, "EXDATE"); !slices.EqualFunc(got, want, time.Time.Equal) {
					t.Errorf("%s: EXDATEs %v, want the last Mondays %v", name, got, want)
				}
				if name == "one RRULE" {
					continue
				}
				// The extra rule's Thursdays reach the same bound.
				rdates := amsterdamDates(t, m.Recurrence, "RDATE")
				if len(rdates) == 0 || !rdates[len(rdates)-1].Before(tt.hi) || rdates[len(rdates)-1].Before(tt.hi.AddDate(0, 0, -7)) {
					t.Errorf("%s: RDATEs end at %v, not in the week before %v", name, rdates, tt.hi)
				}
			}
		})
	}
}

// amsterdamDates reads the values of a recurrence line "NAME;TZID=Europe/Amsterdam:...".
func amsterdamDates(t *testing.T, lines []string, name string) []time.Time {
	t.Helper()
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, line := range lines {
		values, ok := strings.CutPrefix(line, name+";TZID=Europe/Amsterdam:")
		if !ok {
			continue
		}
		for v := range strings.SplitSeq(values, ",") {
			x, err := time.ParseInLocation("20060102T150405", v, ams)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			out = append(out, x)
		}
	}
	return out
}

func TestExRuleShapes(t *testing.T) {
	tests := []struct {
		name  string
		lines string
		want  []string // the recurrence lines
		warn  string
	}{
		{"without a rule or dates", "EXRULE:FREQ=WEEKLY", nil, "EXRULE without RRULE or RDATE ignored"},
		{"unreadable", "RRULE:FREQ=DAILY;COUNT=3\r\nEXRULE:FREQ=SOMETIMES", []string{"RRULE:FREQ=DAILY;COUNT=3"}, "EXRULE ignored"},
		{"excluding nothing", "RRULE:FREQ=WEEKLY;COUNT=3\r\nEXRULE:FREQ=WEEKLY;BYDAY=SU", []string{"RRULE:FREQ=WEEKLY;COUNT=3"}, "written as 0 EXDATEs"},
		// DTSTART (a Monday) is no Wednesday: COUNT=1 is the first Wednesday.
		{"its own COUNT", "RRULE:FREQ=DAILY;COUNT=10\r\nEXRULE:FREQ=WEEKLY;BYDAY=WE;COUNT=1",
			[]string{"RRULE:FREQ=DAILY;COUNT=10", "EXDATE:20261209T080000Z"}, "written as 1 EXDATEs"},
		{"its own UNTIL, lower case", "RRULE:FREQ=DAILY;COUNT=10\r\nexrule:freq=daily;until=20261208T235959Z",
			[]string{"RRULE:FREQ=DAILY;COUNT=10", "EXDATE:20261207T080000Z,20261208T080000Z"}, "written as 2 EXDATEs"},
		{"beside an EXDATE", "RRULE:FREQ=DAILY;COUNT=4\r\nEXDATE:20261207T080000Z\r\nEXRULE:FREQ=DAILY;COUNT=2",
			[]string{"RRULE:FREQ=DAILY;COUNT=4", "EXDATE:20261207T080000Z,20261208T080000Z"}, "written as 1 EXDATEs"},
		{"on RDATEs", "RDATE:20261208T080000Z,20261209T080000Z\r\nEXRULE:FREQ=DAILY;INTERVAL=2",
			[]string{"RDATE:20261208T080000Z,20261209T080000Z", "EXDATE:20261207T080000Z,20261209T080000Z"}, "written as 2 EXDATEs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20261207T080000Z\r\nDTEND:20261207T083000Z\r\n" +
				tt.lines + "\r\nSUMMARY:S\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
			cal, err := feed.ParseBytes([]byte(body), feed.Options{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			if len(cal.Events) != 1 || !slices.Equal(cal.Events[0].Recurrence, tt.want) {
				t.Fatalf("events %+v, want recurrence %q", cal.Events, tt.want)
			}
			if !slices.ContainsFunc(cal.Warnings, func(w feed.Warning) bool { return strings.Contains(w.Message, tt.warn) }) {
				t.Errorf("no warning saying %q: %v", tt.warn, cal.Warnings)
			}
		})
	}
}

func TestDefectMixedKindsShareOneZone(t *testing.T) {
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	ny, _ := time.LoadLocation("America/New_York")
	// Whatever the feed's default zone, the floating value takes the
	// other's: an explicit zone beats a default.
	for _, zone := range []string{"", "America/Los_Angeles"} {
		t.Run("default zone "+zone, func(t *testing.T) {
			cal := parseDefect(t, "mixed-kinds.ics", feed.Options{DefaultZone: zone})
			tests := []struct {
				uid        string
				start, end time.Time
				zone       string
			}{
				{"floating-start@defects.calsyncd", time.Date(2026, 12, 14, 11, 15, 0, 0, ams), time.Date(2026, 12, 14, 13, 0, 0, 0, ams), "Europe/Amsterdam"},
				{"floating-end@defects.calsyncd", time.Date(2026, 12, 15, 9, 0, 0, 0, ny), time.Date(2026, 12, 15, 10, 30, 0, 0, ny), "America/New_York"},
				{"floating-end-utc@defects.calsyncd", utc("2026-12-16T15:00:00Z"), utc("2026-12-16T16:00:00Z"), ""},
				{"floating-series@defects.calsyncd", time.Date(2026, 12, 7, 18, 0, 0, 0, ams), time.Date(2026, 12, 7, 19, 30, 0, 0, ams), "Europe/Amsterdam"},
			}
			for _, tt := range tests {
				ev := eventByKey(t, cal, tt.uid, "")
				if !ev.Start.T.Equal(tt.start) || !ev.End.T.Equal(tt.end) || ev.Start.Zone != tt.zone || ev.End.Zone != tt.zone {
					t.Errorf("%s: %v (%q) .. %v (%q), want %v .. %v in %q", tt.uid, ev.Start.T, ev.Start.Zone, ev.End.T, ev.End.Zone, tt.start, tt.end, tt.zone)
				}
			}
			// The series is in Amsterdam, its floating EXDATE with it.
			series := eventByKey(t, cal, "floating-series@defects.calsyncd", "")
			if want := []string{"RRULE:FREQ=WEEKLY;COUNT=4", "EXDATE;TZID=Europe/Amsterdam:20261214T180000"}; !slices.Equal(series.Recurrence, want) {
				t.Errorf("series: recurrence %q, want %q", series.Recurrence, want)
			}
			if len(cal.Warnings) != 0 {
				t.Errorf("warnings %v", cal.Warnings)
			}
		})
	}
	// An override written as its master is, with a floating RECURRENCE-ID,
	// names the master's occurrence in Amsterdam.
	body, err := os.ReadFile("../../testdata/feeds/defects/mixed-kinds.ics")
	if err != nil {
		t.Fatal(err)
	}
	override := "BEGIN:VEVENT\r\nUID:floating-series@defects.calsyncd\r\nRECURRENCE-ID:20261221T180000\r\nDTSTART:20261221T190000\r\n" +
		"DTEND;TZID=Europe/Amsterdam:20261221T203000\r\nSUMMARY:Rehearsal (late)\r\nEND:VEVENT\r\nEND:VCALENDAR"
	cal, err := feed.ParseBytes([]byte(strings.Replace(string(body), "END:VCALENDAR", override, 1)), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ov := eventByKey(t, cal, "floating-series@defects.calsyncd", "20261221T170000Z")
	if !ov.Start.T.Equal(time.Date(2026, 12, 21, 19, 0, 0, 0, ams)) || !eventByKey(t, cal, "floating-series@defects.calsyncd", "").Series.Has(ov.Original.T) {
		t.Errorf("override at %v, original %v", ov.Start.T, ov.Original.T)
	}
	// Same kinds on both sides, or a DATE on one: as before.
	for name, lines := range map[string][2]string{
		"both floating":       {"DTSTART:20261214T111500", "DTEND:20261214T130000"},
		"both zoned":          {"DTSTART;TZID=America/New_York:20261214T111500", "DTEND;TZID=Europe/Amsterdam:20261214T130000"},
		"all-day, timed end":  {"DTSTART;VALUE=DATE:20261214", "DTEND;TZID=Europe/Amsterdam:20261214T130000"},
		"floating, dated end": {"DTSTART:20261214T111500", "DTEND;VALUE=DATE:20261215"},
	} {
		body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:k\r\n" + lines[0] + "\r\n" + lines[1] + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
		alone := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:k\r\n" + lines[0] + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
		a, err1 := feed.ParseBytes([]byte(body), feed.Options{DefaultZone: "America/Los_Angeles"})
		b, err2 := feed.ParseBytes([]byte(alone), feed.Options{DefaultZone: "America/Los_Angeles"})
		if err1 != nil || err2 != nil || !a.Events[0].Start.T.Equal(b.Events[0].Start.T) || a.Events[0].Start.Zone != b.Events[0].Start.Zone {
			t.Errorf("%s: start %v, alone %v", name, a.Events[0].Start, b.Events[0].Start)
		}
	}
}
