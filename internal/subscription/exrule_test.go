package subscription_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// exruleShown is what a person must see of testdata/feeds/defects/exrule.ics
// in [lo, hi), written out from the calendar, not from a rule: the
// weekdays of 7-18 December, every Monday's choir but the last of each
// month, and the Friday bins but Christmas and New Year's Day.
func exruleShown(lo, hi time.Time) []string {
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		panic(err)
	}
	var out []string
	timed := func(start time.Time, d time.Duration, title string) {
		if start.Before(hi) && start.Add(d).After(lo) {
			out = append(out, start.UTC().Format(time.RFC3339)+".."+start.Add(d).UTC().Format(time.RFC3339)+" "+strconv.Quote(title))
		}
	}
	for d := 7; d <= 20; d++ {
		day := time.Date(2026, 12, d, 8, 0, 0, 0, time.UTC)
		if day.Weekday() != time.Saturday && day.Weekday() != time.Sunday {
			timed(day, 30*time.Minute, "Stand-up")
		}
	}
	for day := time.Date(2026, 12, 7, 19, 0, 0, 0, ams); day.Before(hi); day = day.AddDate(0, 0, 7) {
		if day.AddDate(0, 0, 7).Month() == day.Month() {
			timed(day, time.Hour, "Choir")
		}
	}
	for day, n := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), 0; n < 8; day, n = day.AddDate(0, 0, 7), n+1 {
		if (day.Month() != 12 || day.Day() != 25) && day.YearDay() != 1 {
			out = append(out, day.Format("2006-01-02")+".."+day.AddDate(0, 0, 1).Format("2006-01-02")+` "Bins"`)
		}
	}
	slices.Sort(out) // RFC 3339 UTC and dates sort as Agenda orders them here
	return out
}

// TestExRuleShowsInGoogleUnderEveryReading mirrors the EXRULE
// reproduction under each ExRule reading (with the other switches of
// every covering combination): Google shows none of the occurrences the
// EXRULEs exclude, whether it applies, ignores or refuses EXRULE lines.
func TestExRuleShowsInGoogleUnderEveryReading(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(defectsDir, "exrule.ics"))
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range gcalfake.CoveringReadings() {
		for _, ex := range []gcalfake.ExRule{gcalfake.ExRuleApplied, gcalfake.ExRuleIgnored, gcalfake.ExRuleRejected} {
			r := base
			r.ExRule = ex
			t.Run(r.String(), func(t *testing.T) {
				t.Parallel()
				m := newMirror(t)
				m.fake.SetReadings(r)
				m.setFeed(body)
				m.syncOK("first sync")
				want := exruleShown(m.lo, m.hi)
				got := shownBy(m.fake, m.lo, m.hi)
				if !slices.Equal(got, want) {
					missing, extra := diffLists(want, got)
					t.Errorf("Google shows %d occurrences, want %d\nmissing:\n  %s\nextra:\n  %s", len(got), len(want),
						strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
				}
				m.check("after the first sync")
				if _, writes := m.syncOK("second sync"); writes != 0 {
					t.Errorf("an unchanged feed cost %d writes", writes)
				}
			})
		}
	}
}
