package subscription_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// TestUnchangedFeedRollsItsHorizonsForward: a feed
// that never changes, synced every three days for two years of an injected
// clock. What the first render left beyond the window's end (a second
// RRULE written as RDATEs, a DST-gap series written as single events, an
// event past the window) must reach Google as the window moves, for a few
// renders, not one per pass.
func TestUnchangedFeedRollsItsHorizonsForward(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(defectsDir, "rolling-horizon.ics"))
	if err != nil {
		t.Fatal(err)
	}
	m := newMirror(t)
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := start
	m.runner.Now = func() time.Time { return clock }
	m.cfg.Window = config.Window{Past: config.Duration(30 * 24 * time.Hour), Future: config.Duration(365 * 24 * time.Hour)}
	// No daily reconcile: it reads the feed in full on its own.
	m.cfg.Sync.ReconcileInterval = 0
	m.setFeed(body)
	passes, renders := 0, 0
	farAhead := false
	for ; !clock.After(start.AddDate(2, 0, 0)); clock = clock.Add(72 * time.Hour) {
		rep := m.sync()
		passes++
		switch rep.Run.Outcome {
		case calsyncd.OutcomeNotModified:
		case calsyncd.OutcomeOK:
			renders++
		default:
			t.Fatalf("%s: %s (%v)", clock.Format(time.DateOnly), rep.Run.Outcome, rep.Err)
		}
		for _, s := range shownBy(m.fake, start, start.AddDate(3, 0, 0)) {
			farAhead = farAhead || s == `2028-06-10T12:00:00Z..2028-06-10T13:00:00Z "Far ahead"`
		}
	}
	clock = clock.Add(-72 * time.Hour)
	// What a person should see over the first 300 days of the window
	// at the end (its last weeks may come late: see reread.go).
	lo, hi := clock, clock.Add(300*24*time.Hour)
	want := rollingWant(t, lo, hi)
	got := shownBy(m.fake, lo, hi)
	slices.Sort(got)
	sameSightings(t, "after two years of an unchanged feed", want, got)
	if !farAhead {
		t.Error("the event beyond the first window never reached Google")
	}
	// One render when a horizon comes within reach: about monthly here,
	// never one per pass.
	t.Logf("%d passes, %d renders", passes, renders)
	if renders > passes/4 {
		t.Errorf("%d renders in %d passes of an unchanged feed", renders, passes)
	}
}

// rollingWant is what a person should see of rolling-horizon.ics in
// [lo, hi), by the test's own reading: the Clinic on the 7th and 21st of
// every month, the handover on every second Sunday (sorted).
func rollingWant(t *testing.T, lo, hi time.Time) []string {
	t.Helper()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for d := lo.Truncate(24 * time.Hour); d.Before(hi); d = d.AddDate(0, 0, 1) {
		if day := d.Day(); day == 7 || day == 21 {
			at := time.Date(d.Year(), d.Month(), day, 9, 0, 0, 0, time.UTC)
			if !at.Before(lo) && at.Before(hi) {
				want = append(want, fmt.Sprintf("%s..%s %q", at.Format(time.RFC3339), at.Add(30*time.Minute).Format(time.RFC3339), "Clinic"))
			}
		}
		if d.Weekday() == time.Sunday && (d.Day()-1)/7 == 1 {
			// 02:30 does not exist on the second Sunday of March: read
			// with the offset before the gap, for its half hour.
			at := time.Date(d.Year(), d.Month(), d.Day(), 2, 30, 0, 0, ny)
			if at.In(ny).Hour() != 2 {
				at = time.Date(d.Year(), d.Month(), d.Day(), 2, 30, 0, 0, time.FixedZone("EST", -5*3600))
			}
			end := at.Add(30 * time.Minute)
			if !at.Before(lo) && at.Before(hi) {
				want = append(want, fmt.Sprintf("%s..%s %q", at.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), "Night shift handover"))
			}
		}
	}
	slices.Sort(want)
	return want
}
