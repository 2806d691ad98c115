package diff_test

import (
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

func deletes(n int) diff.Plan {
	var p diff.Plan
	for i := range n {
		m := calsyncd.Mapping{Key: calsyncd.Key{UID: string(rune('a' + i))}}
		p.Deletes = append(p.Deletes, diff.Op{Kind: diff.Delete, Key: m.Key, Mapping: &m})
	}
	return p
}

func TestGuard(t *testing.T) {
	policy := diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}
	tests := map[string]struct {
		deletes int
		in      diff.GuardInput
		want    diff.Verdict
	}{
		"a few deletes pass":                 {3, diff.GuardInput{Events: 27, Mapped: 30}, diff.Verdict{}},
		"many, but not most, pass":           {12, diff.GuardInput{Events: 40, Mapped: 50}, diff.Verdict{}},
		"most of many are held":              {25, diff.GuardInput{Events: 5, Mapped: 30}, diff.Verdict{Suspicious: true, Runs: 1, Held: 25}},
		"an empty feed holds even one":       {1, diff.GuardInput{Events: 0, Mapped: 1}, diff.Verdict{Suspicious: true, Runs: 1, Held: 1}},
		"nothing mapped, nothing to guard":   {0, diff.GuardInput{Events: 0, Mapped: 0}, diff.Verdict{}},
		"held again counts the runs":         {25, diff.GuardInput{Events: 5, Mapped: 30, Runs: 1}, diff.Verdict{Suspicious: true, Runs: 2, Held: 25}},
		"confirmed after enough runs":        {25, diff.GuardInput{Events: 5, Mapped: 30, Runs: 2}, diff.Verdict{Suspicious: true, Released: 25}},
		"the operator releases them at once": {25, diff.GuardInput{Events: 5, Mapped: 30, Allow: true}, diff.Verdict{Suspicious: true, Released: 25, Allowed: true}},
	}
	for name, tt := range tests {
		tt.in.Policy = policy
		got, v := diff.Guard(deletes(tt.deletes), tt.in)
		if v != tt.want {
			t.Errorf("%s: verdict %+v, want %+v", name, v, tt.want)
		}
		if wantLeft := tt.deletes - v.Held; len(got.Deletes) != wantLeft {
			t.Errorf("%s: %d deletes let through, want %d", name, len(got.Deletes), wantLeft)
		}
	}
}

func TestGuardFollow(t *testing.T) {
	_, held := diff.Guard(deletes(25), diff.GuardInput{Events: 5, Mapped: 30, Policy: diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}})
	p, v := held.Follow(deletes(2))
	if len(p.Deletes) != 0 || v.Held != 27 || v.Runs != 1 {
		t.Errorf("after a hold, a second plan's deletes are held too: %d let through, verdict %+v", len(p.Deletes), v)
	}
	p, v = diff.Verdict{}.Follow(deletes(2))
	if len(p.Deletes) != 2 || v.Held != 0 {
		t.Errorf("without a hold, a second plan passes: %d let through, verdict %+v", len(p.Deletes), v)
	}
}

// TestGuardAgainstThePeak: a feed that shrinks a little every run passes a
// guard that only weighs the last run; against the high-water mark it is
// held once it has lost most of the peak (issue 15).
func TestGuardAgainstThePeak(t *testing.T) {
	policy := diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}
	tests := map[string]struct {
		deletes int
		in      diff.GuardInput
		want    diff.Verdict
	}{
		"half of the last run, within the peak":  {49, diff.GuardInput{Events: 51, Mapped: 100, Peak: 100}, diff.Verdict{}},
		"half again: three quarters of the peak": {25, diff.GuardInput{Events: 26, Mapped: 51, Peak: 100}, diff.Verdict{Suspicious: true, ByPeak: true, Runs: 1, Held: 25}},
		"the last run alone lets it through":     {25, diff.GuardInput{Events: 26, Mapped: 51}, diff.Verdict{}},
		"a few deletes pass whatever the peak":   {10, diff.GuardInput{Events: 4, Mapped: 14, Peak: 100}, diff.Verdict{}},
		"the operator releases a peak hold":      {25, diff.GuardInput{Events: 26, Mapped: 51, Peak: 100, Allow: true}, diff.Verdict{Suspicious: true, ByPeak: true, Released: 25, Allowed: true}},
		"a swap is no shrink":                    {25, diff.GuardInput{Events: 95, Mapped: 100, Peak: 100}, diff.Verdict{}},
	}
	for name, tt := range tests {
		tt.in.Policy = policy
		got, v := diff.Guard(deletes(tt.deletes), tt.in)
		if v != tt.want {
			t.Errorf("%s: verdict %+v, want %+v", name, v, tt.want)
		}
		if wantLeft := tt.deletes - v.Held; len(got.Deletes) != wantLeft {
			t.Errorf("%s: %d deletes let through, want %d", name, len(got.Deletes), wantLeft)
		}
	}
}

func TestNextPeak(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	tests := map[string]struct {
		peak     int
		at       time.Time
		mapped   int
		now      time.Time
		period   time.Duration
		wantPeak int
		wantAt   time.Time
	}{
		"first run":               {0, time.Time{}, 100, t0, week, 100, t0},
		"a smaller run keeps it":  {100, t0, 51, t0.Add(time.Hour), week, 100, t0},
		"reached again, renewed":  {100, t0, 100, t0.Add(time.Hour), week, 100, t0.Add(time.Hour)},
		"a bigger run raises it":  {100, t0, 120, t0.Add(time.Hour), week, 120, t0.Add(time.Hour)},
		"kept for the period":     {100, t0, 40, t0.Add(week), week, 100, t0},
		"past the period it goes": {100, t0, 40, t0.Add(week + time.Minute), week, 40, t0.Add(week + time.Minute)},
		"no period, no mark":      {100, t0, 40, t0.Add(time.Hour), 0, 0, time.Time{}},
	}
	for name, tt := range tests {
		peak, at := diff.NextPeak(tt.peak, tt.at, tt.mapped, tt.now, tt.period)
		if peak != tt.wantPeak || !at.Equal(tt.wantAt) {
			t.Errorf("%s: NextPeak = %d at %v, want %d at %v", name, peak, at, tt.wantPeak, tt.wantAt)
		}
	}
}

// TestGuardRefusesAFeedOverItsLimits: over a limit nothing is written or
// deleted; at the limit the plan passes.
func TestGuardRefusesAFeedOverItsLimits(t *testing.T) {
	lim := diff.Limits{MaxEvents: 100, MaxExpanded: 50}
	plan := deletes(3)
	plan.Creates = []diff.Op{{Kind: diff.Create}}
	plan.Updates = []diff.Op{{Kind: diff.Update}}
	plan.Unchanged = 7
	for name, tt := range map[string]struct {
		events, expanded int
		key              string
	}{
		"at the limits":           {100, 50, ""},
		"one event over":          {101, 0, "limits.max_events"},
		"one occurrence over":     {10, 51, "limits.max_instances_expanded"},
		"no limits (zero) at all": {1 << 20, 1 << 20, "none"},
	} {
		l := lim
		if tt.key == "none" {
			l, tt.key = diff.Limits{}, ""
		}
		got, v := diff.Guard(plan, diff.GuardInput{Events: tt.events, Mapped: 10, FeedEvents: tt.events, Expanded: tt.expanded,
			Limits: l, Policy: diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}})
		if tt.key == "" {
			if v.Refused != nil || len(got.Creates)+len(got.Updates)+len(got.Deletes) != 5 {
				t.Errorf("%s: refused %v, plan %+v", name, v.Refused, got)
			}
			continue
		}
		if v.Refused == nil || v.Refused.Key != tt.key || calsyncd.ClassOf(v.Refused) != calsyncd.ClassFeedOverLimit {
			t.Errorf("%s: verdict %+v, want refused by %s", name, v, tt.key)
		}
		if len(got.Creates)+len(got.Updates)+len(got.Deletes)+len(got.Rekeys) != 0 || got.Unchanged != 7 {
			t.Errorf("%s: a refused plan still writes: %+v", name, got)
		}
	}
}

// TestGuardRefusesACutExpansion: an expansion shape stopped counting is
// over its limit, whatever it counted.
func TestGuardRefusesACutExpansion(t *testing.T) {
	_, v := diff.Guard(deletes(0), diff.GuardInput{Events: 51, FeedEvents: 1, Expanded: 50, ExpansionCut: true,
		Limits: diff.Limits{MaxExpanded: 50}, Policy: diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}})
	if v.Refused == nil || !v.Refused.AtLeast || !strings.Contains(v.Refused.Error(), "more than 50 occurrences") {
		t.Errorf("verdict %+v", v)
	}
}
