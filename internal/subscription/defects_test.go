package subscription_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// defectsDir holds our own minimal reproductions of the recurrence, zone
// and charset defects of issue 13, so that a bare clone tests each shape.
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
	}
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
