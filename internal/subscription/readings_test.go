package subscription_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/corpus"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// The tests in this file run the mirror under every way Google may answer
// where its documentation is silent (gcalfake.Readings): what a person sees
// must equal what the feed means under each, after a first sync and after
// changes that make Google touch the exceptions of series (every series
// retitled with one more EXDATE; every series moved by an hour or a day,
// leaving its overrides off the rule), and a run after each must find
// nothing left to write.

// seriesEdit changes every recurring master of an ICS body (a VEVENT with
// RRULE or RDATE and no RECURRENCE-ID), line by line after unfolding.
func seriesEdit(body []byte, edit func(lines []string) []string) []byte {
	text := strings.ReplaceAll(string(body), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\n ", "")
	text = strings.ReplaceAll(text, "\n\t", "")
	var out, block []string
	depth := 0 // inside a VEVENT: 1, inside one of its components: 2+
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "BEGIN:VEVENT":
			depth = 1
			block = []string{line}
			continue
		case depth > 0 && line == "END:VEVENT":
			block = append(block, line)
			if isMaster(block) {
				block = edit(block)
			}
			out = append(out, block...)
			depth, block = 0, nil
			continue
		case depth > 0:
			if strings.HasPrefix(line, "BEGIN:") {
				depth++
			} else if strings.HasPrefix(line, "END:") {
				depth--
			}
			block = append(block, line)
			continue
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\r\n"))
}

// isMaster: a VEVENT block with a rule or dates and no RECURRENCE-ID, at
// the event's own level.
func isMaster(block []string) bool {
	recurring := false
	for _, line := range ownLines(block) {
		switch propName(line) {
		case "RECURRENCE-ID":
			return false
		case "RRULE", "RDATE":
			recurring = true
		}
	}
	return recurring
}

// ownLines are the block's lines outside its nested components (VALARM).
func ownLines(block []string) []string {
	var out []string
	depth := 0
	for _, line := range block[1 : len(block)-1] {
		switch {
		case strings.HasPrefix(line, "BEGIN:"):
			depth++
		case strings.HasPrefix(line, "END:"):
			depth--
		case depth == 0:
			out = append(out, line)
		}
	}
	return out
}

func propName(line string) string {
	name, _, _ := strings.Cut(line, ":")
	name, _, _ = strings.Cut(name, ";")
	return strings.ToUpper(name)
}

// retitleAndExclude appends " (renamed)" to the series' title and excludes
// its first occurrence (DTSTART) with an EXDATE, except in series whose
// UID keep names (an EXDATE would leave them without an occurrence: the
// feed package drops such an event, and calsyncd keeps what it wrote of
// an event it could not read).
func retitleAndExclude(keep map[string]bool) func([]string) []string {
	return func(block []string) []string { return retitleAndExcludeBlock(block, keep) }
}

func retitleAndExcludeBlock(block []string, keep map[string]bool) []string {
	out := slices.Clone(block[:len(block)-1])
	uid := ""
	titled := false
	var dtstart string
	depth := 0
	for i, line := range out[1:] {
		if strings.HasPrefix(line, "BEGIN:") {
			depth++
		} else if strings.HasPrefix(line, "END:") {
			depth--
		}
		if depth != 0 {
			continue
		}
		switch propName(line) {
		case "SUMMARY":
			out[i+1] = line + " (renamed)"
			titled = true
		case "DTSTART":
			dtstart = line
		case "UID":
			_, uid, _ = strings.Cut(line, ":")
		}
	}
	if !titled {
		out = append(out, "SUMMARY:(renamed)")
	}
	if dtstart != "" && !keep[uid] {
		out = append(out, "EXDATE"+strings.TrimPrefix(dtstart, dtstart[:len("DTSTART")]))
	}
	return append(out, "END:VEVENT")
}

// shiftSeries moves the series' DTSTART and DTEND by an hour (a day for
// dates): its overrides name occurrences it no longer has. A rule that
// fixes what the shift changes (BYHOUR of a timed series, any BY part of
// an all-day one) is left as it is: its DTSTART would no longer be one of
// its occurrences, a shape RFC 5545 leaves to the reader.
func shiftSeries(block []string) []string {
	allDay := false
	for _, line := range ownLines(block) {
		if propName(line) == "DTSTART" {
			allDay = !strings.Contains(line[strings.LastIndexByte(line, ':'):], "T")
		}
	}
	for _, line := range ownLines(block) {
		if propName(line) != "RRULE" {
			continue
		}
		_, rule, _ := strings.Cut(strings.ToUpper(line), ":")
		if strings.Contains(rule, "BYHOUR") || strings.Contains(rule, "BYMINUTE") || allDay && strings.Contains(rule, "BY") {
			return block
		}
	}
	out := slices.Clone(block)
	depth := 0
	for i, line := range out[1 : len(out)-1] {
		if strings.HasPrefix(line, "BEGIN:") {
			depth++
		} else if strings.HasPrefix(line, "END:") {
			depth--
		}
		if depth != 0 {
			continue
		}
		if n := propName(line); n == "DTSTART" || n == "DTEND" {
			out[i+1] = shiftLine(line)
		}
	}
	return out
}

func shiftLine(line string) string {
	j := strings.LastIndexByte(line, ':')
	head, value := line[:j+1], strings.TrimSpace(line[j+1:])
	for _, layout := range []string{"20060102T150405Z", "20060102T150405"} {
		if t, err := time.Parse(layout, value); err == nil {
			return head + t.Add(time.Hour).Format(layout)
		}
	}
	if t, err := time.Parse("20060102", value); err == nil {
		return head + t.AddDate(0, 0, 1).Format("20060102")
	}
	return line
}

// convergeUnder mirrors body under r, checks it, then applies each change
// and checks again; every check is followed by a run that must write
// nothing.
func convergeUnder(t *testing.T, r gcalfake.Readings, body []byte) {
	t.Helper()
	m := newMirror(t)
	m.fake.SetReadings(r)
	m.setFeed(body)
	m.syncOK("first sync")
	m.check("after the first sync")
	if _, writes := m.syncOK("unchanged"); writes != 0 {
		t.Errorf("an unchanged feed cost %d writes after the first sync", writes)
	}
	for _, change := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"every series retitled, its first occurrence excluded", func(b []byte) []byte {
			edited := seriesEdit(b, retitleAndExclude(nil))
			if lost := lostUIDs(t, b, edited); len(lost) > 0 {
				edited = seriesEdit(b, retitleAndExclude(lost))
			}
			return edited
		}},
		{"every series moved", func(b []byte) []byte { return seriesEdit(b, shiftSeries) }},
	} {
		body = change.edit(body)
		m.setFeed(body)
		// Moving an expanded series replaces every event it was written
		// as: more deletes than the guard lets through unasked.
		if rep := m.syncWith(subscription.Options{Reconcile: true, AllowDeletes: true}); rep.Run.Outcome != calsyncd.OutcomeOK {
			t.Fatalf("%s: sync ended %s (%v): %+v", change.name, rep.Run.Outcome, rep.Err, rep.Run)
		}
		if os.Getenv("DEBUG_READINGS") != "" {
			t.Logf("%s: %+v", change.name, m.syncWith(subscription.Options{Reconcile: true, AllowDeletes: true}).Run)
		}
		m.check("after: " + change.name)
		if _, writes := m.syncOK("unchanged"); writes != 0 {
			t.Errorf("%s: the next run cost %d writes", change.name, writes)
		}
	}
}

// lostUIDs are the UIDs of before's events that after no longer has.
func lostUIDs(t *testing.T, before, after []byte) map[string]bool {
	uids := func(body []byte) map[string]bool {
		out := map[string]bool{}
		cal, err := feed.ParseBytes(body, feed.Options{Now: recurrenceNow, WindowPast: recurrencePast})
		if err != nil {
			t.Fatalf("edited feed: %v", err)
		}
		for _, ev := range cal.Events {
			out[ev.UID] = true
		}
		return out
	}
	now := uids(after)
	lost := map[string]bool{}
	for uid := range uids(before) {
		if !now[uid] {
			lost[uid] = true
		}
	}
	return lost
}

// readingFeeds are the feeds of testdata/ and the generated series.
func readingFeeds(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for name, body := range generated {
		out[name] = body
	}
	out["all-day series with a cancelled fourth week"] = allDayCancelledFourth
	paths, err := filepath.Glob("../../testdata/feeds/*.ics")
	if err != nil || len(paths) == 0 {
		t.Fatalf("testdata feeds: %v (%d)", err, len(paths))
	}
	// The minimal reproductions of the feed defects the corpus taught us.
	defects, err := filepath.Glob("../../testdata/feeds/*/*.ics")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, defects...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel("../../testdata/feeds", p)
		out[name] = b
	}
	return out
}

// everyReading are the feeds run under every combination of readings
// (gcalfake.AllReadings); the others, and the corpus, run under
// gcalfake.CoveringReadings, which keeps the suite fast (all of them under
// every combination with CALSYNCD_ALL_READINGS=1).
var everyReading = map[string]bool{
	"all-day series with a cancelled fourth week": true,
	"moved and cancelled instances":               true,
	"this and future":                             true,
}

func TestSmallFeedsConvergeUnderEveryReading(t *testing.T) {
	for name, body := range readingFeeds(t) {
		readings := gcalfake.CoveringReadings()
		if everyReading[name] && !testing.Short() || os.Getenv("CALSYNCD_ALL_READINGS") == "1" {
			readings = gcalfake.AllReadings()
			if !strings.Contains(string(body), "EXRULE") {
				// calsyncd never sends EXRULE: the switch cannot change
				// what a feed without one shows (a third of the time).
				readings = slices.DeleteFunc(readings, func(r gcalfake.Readings) bool { return r.ExRule != gcalfake.ExRuleApplied })
			}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, r := range readings {
				t.Run(r.String(), func(t *testing.T) { convergeUnder(t, r, body) })
			}
		})
	}
}

// TestCorpusConvergesUnderEveryReading mirrors the corpus files with series
// or overrides under gcalfake.CoveringReadings. With CALSYNCD_ALL_READINGS=1
// (not for CI: some minutes on 2 cores) it mirrors every corpus file
// that parses (the series edits leave those without series as they are)
// under every combination.
func TestCorpusConvergesUnderEveryReading(t *testing.T) {
	dir := corpus.Dir(t)
	readings := gcalfake.CoveringReadings()
	all := os.Getenv("CALSYNCD_ALL_READINGS") == "1"
	if all {
		readings = gcalfake.AllReadings()
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".ics") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n, recurring := 0, 0
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cal, err := feed.ParseBytes(body, feed.Options{Now: recurrenceNow, WindowPast: recurrencePast})
		if err != nil || len(cal.Events) == 0 {
			continue
		}
		if hasRecurrence(cal.Events) {
			recurring++
		} else if !all {
			continue
		}
		n++
		name, _ := filepath.Rel(dir, path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, r := range readings {
				t.Run(r.String(), func(t *testing.T) { convergeUnder(t, r, body) })
			}
		})
	}
	if recurring < 20 {
		t.Errorf("only %d corpus files have recurring events or overrides", recurring)
	}
	t.Logf("%d corpus files (%d with series or overrides) × %d readings", n, recurring, len(readings))
}

// allDayCancelledFourth is a minimal reproduction: a weekly
// all-day series with an EXDATE and its fourth week cancelled.
var allDayCancelledFourth = calendarOf(
	vevent("UID:bins-weekly@example.com", "DTSTART;VALUE=DATE:20261207", "DTEND;VALUE=DATE:20261208",
		"RRULE:FREQ=WEEKLY;COUNT=6", "EXDATE;VALUE=DATE:20261214", "SUMMARY:Bins"),
	vevent("UID:bins-weekly@example.com", "RECURRENCE-ID;VALUE=DATE:20261228", "DTSTART;VALUE=DATE:20261228",
		"DTEND;VALUE=DATE:20261229", "SUMMARY:Bins", "STATUS:CANCELLED"))

func TestAllDayCancellationLandsOnItsOwnWeek(t *testing.T) {
	for _, mode := range []gcalfake.AllDayOriginalStart{gcalfake.OriginalStartHonoured, gcalfake.OriginalStartIgnored, gcalfake.OriginalStartRejected} {
		for _, ids := range []gcalfake.InstanceIDs{gcalfake.InstanceIDsDerived, gcalfake.InstanceIDsOpaque} {
			r := gcalfake.Readings{AllDayOriginalStart: mode, InstanceIDs: ids}
			t.Run(r.String(), func(t *testing.T) {
				m := newMirror(t)
				m.fake.SetReadings(r)
				m.setFeed(allDayCancelledFourth)
				m.syncOK("first sync")
				var got []string
				for _, o := range m.fake.Agenda(testCalendar, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)) {
					got = append(got, o.String())
				}
				// 7 Dec stays, 14 Dec excluded, 28 Dec cancelled.
				want := []string{`2026-12-07..2026-12-08 "Bins"`, `2026-12-21..2026-12-22 "Bins"`,
					`2027-01-04..2027-01-05 "Bins"`, `2027-01-11..2027-01-12 "Bins"`}
				if !slices.Equal(got, want) {
					t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				m.check("after the first sync")
			})
		}
	}
}
