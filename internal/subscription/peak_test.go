package subscription_test

import (
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

// TestGradualShrinkIsHeld: a feed losing half its events every run
// (100 → 51 → 26 → 14 → 4) never deletes more than half of the last run,
// so a guard that weighs only the last run deleted 96 events and held
// none. Weighed against the high-water mark of the last 7 days
// it is held from the third step on, and flagged; with the mark switched
// off (period 0) the old behaviour is reproduced.
func TestGradualShrinkIsHeld(t *testing.T) {
	steps := []int{51, 26, 14, 4}
	for _, tt := range []struct {
		name      string
		period    config.Duration
		wantLeft  int // events in the calendar after the last step
		wantHelds []int
	}{
		{"against the last run only", 0, 4, []int{0, 0, 0, 0}},
		{"against the 7-day high-water mark", config.Duration(7 * 24 * time.Hour), 51, []int{0, 25, 37, 47}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "")
			h.cfg.Sync.DeleteGuard.Period = tt.period
			h.cfg.Sync.DeleteGuard.ConfirmRuns = 5 // nothing confirms itself within the four steps
			h.setFeed(weeklyFeed(100))
			if rep := h.sync(); rep.Run.Created != 100 {
				t.Fatalf("first sync created %d", rep.Run.Created)
			}
			deleted := 0
			for i, n := range steps {
				h.setFeed(weeklyFeed(n))
				rep := h.sync()
				deleted += rep.Run.Deleted
				if rep.Run.HeldDeletes != tt.wantHelds[i] {
					t.Errorf("step to %d: %d deletes held, want %d (deleted %d)", n, rep.Run.HeldDeletes, tt.wantHelds[i], rep.Run.Deleted)
				}
			}
			if got := len(h.fake.Events(testCalendar)); got != tt.wantLeft {
				t.Errorf("calendar holds %d events after 100→51→26→14→4, want %d (%d deleted)", got, tt.wantLeft, deleted)
			}
			t.Logf("%s: %d deleted over four runs, %d left", tt.name, deleted, len(h.fake.Events(testCalendar)))
			st, _ := h.store.Subscription(t.Context(), "team")
			if tt.period > 0 && (st.GuardPeak != 100 || st.HeldDeletes != 47) {
				t.Errorf("state: peak %d, held %d; want the peak of 100 kept and 47 deletes held", st.GuardPeak, st.HeldDeletes)
			}
		})
	}
}

// TestPeakGivesWayAfterItsPeriod: a mark not reached for longer than the
// period gives way to the feed's size, and a release (the operator's
// --allow-deletes) makes the new size the mark at once.
func TestPeakGivesWayAfterItsPeriod(t *testing.T) {
	h := newHarness(t, "")
	now := time.Now()
	h.runner.Now = func() time.Time { return now }
	h.setFeed(weeklyFeed(100))
	h.sync()
	h.setFeed(weeklyFeed(51))
	h.sync()
	// Eight days later, 51 is what the feed holds: the step to 26 is half
	// of it, not three quarters of a peak gone stale.
	now = now.Add(8 * 24 * time.Hour)
	h.setFeed(weeklyFeed(26))
	if rep := h.sync(); rep.Run.HeldDeletes != 0 || rep.Run.Deleted != 25 {
		t.Errorf("after the period: deleted %d, held %d; want 25 deleted", rep.Run.Deleted, rep.Run.HeldDeletes)
	}

	h2 := newHarness(t, "")
	h2.setFeed(weeklyFeed(100))
	h2.sync()
	h2.setFeed(weeklyFeed(40))
	h2.syncWith(allowDeletes)
	h2.setFeed(weeklyFeed(28))
	if rep := h2.sync(); rep.Run.HeldDeletes != 0 || rep.Run.Deleted != 12 {
		t.Errorf("after an allowed shrink to 40, 40→28 was held against the old peak: deleted %d, held %d", rep.Run.Deleted, rep.Run.HeldDeletes)
	}
}

// TestPeakHoldIsLogged: the run's line says the deletes were held against
// the high-water mark.
func TestPeakHoldIsLogged(t *testing.T) {
	h := newHarness(t, "")
	logs := captureLog(h)
	h.setFeed(weeklyFeed(100))
	h.sync()
	h.setFeed(weeklyFeed(51))
	h.sync()
	h.setFeed(weeklyFeed(26))
	h.sync()
	if !strings.Contains(logs.String(), "held_against_peak=100") {
		t.Errorf("the run line does not name the peak:\n%s", logs.String())
	}
}
