package subscription_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// defectsDir holds our own minimal reproductions of the recurrence, zone
// and charset defects found in real feeds, so that a bare clone tests each shape.
const defectsDir = "../../testdata/feeds/defects"

// TestDefectReproductionsShowInGoogleAsTheFeedMeans mirrors each minimal
// reproduction and compares what Google shows with the instances written
// out by hand from RFC 5545 (not derived from our own parse), and, where
// the test's own RFC reading agrees, with expected() as well.
func TestDefectReproductionsShowInGoogleAsTheFeedMeans(t *testing.T) {
	tests := map[string]struct {
		want []string
		// oracle: expected() (rrule-go over our parse) reads the shape
		// the same way; false where it cannot (a DST gap, where rrule-go
		// follows Go's time.Date rule).
		oracle bool
	}{
		// 13.2.1: the PERIOD instance keeps its three hours.
		"rdate-period.ics": {oracle: true, want: []string{
			`2026-12-02T08:00:00Z..2026-12-02T08:30:00Z "Weekly check-in"`,
			`2026-12-09T08:00:00Z..2026-12-09T08:30:00Z "Weekly check-in"`,
			`2026-12-16T08:00:00Z..2026-12-16T08:30:00Z "Weekly check-in"`,
			`2026-12-23T08:00:00Z..2026-12-23T08:30:00Z "Weekly check-in"`,
			`2027-01-06T08:00:00Z..2027-01-06T11:00:00Z "Weekly check-in"`,
		}},
		// 13.2.2: the floating EXDATE is 11:00 in Berlin, so 8 January goes.
		"floating-exdate.ics": {oracle: true, want: []string{
			`2027-01-01T10:00:00Z..2027-01-01T11:00:00Z "Jour fixe"`,
			`2027-01-15T10:00:00Z..2027-01-15T11:00:00Z "Jour fixe"`,
		}},
		// 13.2.3: 02:30 does not exist on 14 March 2027 in New York; it is
		// read with the offset before the gap (EST), i.e. 03:30 EDT.
		"dst-gap.ics": {want: []string{
			`2027-03-07T07:30:00Z..2027-03-07T08:00:00Z "Backup window"`,
			`2027-03-14T06:30:00Z..2027-03-14T07:30:00Z "Night shift handover"`,
			`2027-03-14T07:30:00Z..2027-03-14T08:00:00Z "Backup window"`,
			`2027-03-21T06:30:00Z..2027-03-21T07:00:00Z "Backup window"`,
		}},
		// 13.2.4: a US-Eastern VTIMEZONE switching at 01:00/03:00 is New
		// York away from transition nights (summer at -04:00); a zone that
		// is no IANA zone keeps its own rules (summer at +02:30).
		"custom-vtimezone.ics": {oracle: true, want: []string{
			`2027-01-04T07:30:00Z..2027-01-04T08:30:00Z "Own-zone review"`,
			`2027-01-04T14:00:00Z..2027-01-04T14:30:00Z "Monthly review"`,
			`2027-02-04T07:30:00Z..2027-02-04T08:30:00Z "Own-zone review"`,
			`2027-02-04T14:00:00Z..2027-02-04T14:30:00Z "Monthly review"`,
			`2027-03-04T07:30:00Z..2027-03-04T08:30:00Z "Own-zone review"`,
			`2027-03-04T14:00:00Z..2027-03-04T14:30:00Z "Monthly review"`,
			`2027-04-04T06:30:00Z..2027-04-04T07:30:00Z "Own-zone review"`,
			`2027-04-04T13:00:00Z..2027-04-04T13:30:00Z "Monthly review"`,
			`2027-05-04T06:30:00Z..2027-05-04T07:30:00Z "Own-zone review"`,
			`2027-05-04T13:00:00Z..2027-05-04T13:30:00Z "Monthly review"`,
			`2027-06-04T13:00:00Z..2027-06-04T13:30:00Z "Monthly review"`,
			`2027-07-04T13:00:00Z..2027-07-04T13:30:00Z "Monthly review"`,
			`2027-08-04T13:00:00Z..2027-08-04T13:30:00Z "Monthly review"`,
		}},
		// 13.2.5: both rules' instances (the union), DTSTART once.
		"several-rrules.ics": {oracle: true, want: []string{
			`2026-12-07T09:00:00Z..2026-12-07T09:30:00Z "Clinic"`,
			`2026-12-10T09:00:00Z..2026-12-10T09:30:00Z "Clinic"`,
			`2026-12-14T09:00:00Z..2026-12-14T09:30:00Z "Clinic"`,
			`2026-12-21T09:00:00Z..2026-12-21T09:30:00Z "Clinic"`,
		}},
		// 13.2.6: an RRULE beside a RECURRENCE-ID, with no other master:
		// the component is the series.
		"rrule-with-recurrence-id.ics": {oracle: true, want: []string{
			`2026-12-08T09:00:00Z..2026-12-08T10:00:00Z "Team sync"`,
			`2026-12-15T09:00:00Z..2026-12-15T10:00:00Z "Team sync"`,
			`2026-12-22T09:00:00Z..2026-12-22T10:00:00Z "Team sync"`,
			`2026-12-29T09:00:00Z..2026-12-29T10:00:00Z "Team sync"`,
		}},
		// 24.7: a feed that never writes END:VCALENDAR: its events are
		// mirrored, not refused.
		"no-end-vcalendar.ics": {oracle: true, want: []string{
			`2026-12-07T08:00:00Z..2026-12-07T20:00:00Z "On call: Ada"`,
			`2026-12-08T08:00:00Z..2026-12-08T20:00:00Z "On call: Grace"`,
			`2026-12-09T08:00:00Z..2026-12-09T20:00:00Z "On call: Edsger"`,
		}},
		// 24.3: EXRULEs exclude (written as EXDATEs; exrule_test.go runs
		// it under every ExRule reading).
		"exrule.ics": {oracle: true, want: exruleShown(recurrenceNow.Add(-recurrencePast), recurrenceNow.AddDate(1, 0, 0))},
		// 24.5: a floating start or end is read in the other's zone.
		"mixed-kinds.ics": {oracle: true, want: []string{
			`2026-12-07T17:00:00Z..2026-12-07T18:30:00Z "Rehearsal"`,
			`2026-12-14T10:15:00Z..2026-12-14T12:00:00Z "Lunch talk"`,
			`2026-12-15T14:00:00Z..2026-12-15T15:30:00Z "Planning"`,
			`2026-12-16T15:00:00Z..2026-12-16T16:00:00Z "Call"`,
			`2026-12-21T17:00:00Z..2026-12-21T18:30:00Z "Rehearsal"`,
			`2026-12-28T17:00:00Z..2026-12-28T18:30:00Z "Rehearsal"`,
		}},
		// 13.2.7: Windows-1252 text, no charset: decoded, never U+FFFD.
		"windows-1252.ics": {oracle: true, want: []string{
			`2026-12-06..2026-12-07 "Día de la Constitución"`,
		}},
		// 24.1: UTF-8 with one damaged character: only its broken bytes
		// are lost (TestValueDefectsShowInGoogle declares charsets).
		// 24.2: TEXT escapes read whatever the parameters (a quoted VALUE).
		"text-escapes-quoted-param.ics": {oracle: true, want: []string{
			`2026-12-14T09:00:00Z..2026-12-14T10:00:00Z "Review, Q4 room 2"`,
		}},
		// 24.4: RRULE:FREQ=DAILY\;COUNT=3 is the rule FREQ=DAILY;COUNT=3.
		"escaped-rrule.ics": {oracle: true, want: []string{
			`2026-12-07T07:00:00Z..2026-12-07T07:15:00Z "Stand-up"`,
			`2026-12-08T07:00:00Z..2026-12-08T07:15:00Z "Stand-up"`,
			`2026-12-09T07:00:00Z..2026-12-09T07:15:00Z "Stand-up"`,
			`2026-12-14T16:00:00Z..2026-12-14T17:00:00Z "Training"`,
			`2026-12-16T16:00:00Z..2026-12-16T17:00:00Z "Training"`,
			`2026-12-21T16:00:00Z..2026-12-21T17:00:00Z "Training"`,
		}},
		// 24.6: TZID and a trailing Z: the TZID's wall clock (Google's
		// reading), 17:00 in New York; the EXDATE is read alike.
		"tzid-and-z.ics": {oracle: true, want: []string{
			`2026-12-08T14:00:00Z..2026-12-08T14:30:00Z "Weekly sync"`,
			`2026-12-22T14:00:00Z..2026-12-22T14:30:00Z "Weekly sync"`,
			`2026-12-22T22:00:00Z..2026-12-22T23:00:00Z "Holiday party"`,
		}},
		"broken-utf8.ics": {oracle: true, want: []string{
			"2026-12-10..2026-12-12 \"2026年日本国際\uFFFD?\uFFFD覧会\"",
		}},
	}
	// 24.8: two monthly RRULEs and a DST-gap series, over the year ahead.
	tests["rolling-horizon.ics"] = struct {
		want   []string
		oracle bool
	}{want: rollingWant(t, recurrenceNow, recurrenceNow.AddDate(1, 0, 0))}
	files, err := filepath.Glob(filepath.Join(defectsDir, "*.ics"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := tests[filepath.Base(f)]; !ok {
			t.Errorf("%s has no expected instances here", f)
		}
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join(defectsDir, name))
			if err != nil {
				t.Fatal(err)
			}
			m := newMirror(t)
			m.setFeed(body)
			m.syncOK("first sync")
			got := shownBy(m.fake, m.lo, m.hi)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Google shows:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if tt.oracle {
				m.check("after the first sync")
			}
			if _, writes := m.syncOK("second sync"); writes != 0 {
				t.Errorf("an unchanged feed cost %d writes", writes)
			}
		})
	}
}
