package diff_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

func deletes(n int) diff.Plan { return deletesFrom(0, n) }

// deletesFrom is a plan deleting the events numbered from to from+n.
func deletesFrom(from, n int) diff.Plan {
	var p diff.Plan
	for i := from; i < from+n; i++ {
		m := calsyncd.Mapping{Key: calsyncd.Key{UID: fmt.Sprintf("e%d", i)}}
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
		"a few deletes pass":                  {3, diff.GuardInput{Events: 27, Mapped: 30}, diff.Verdict{}},
		"many, but not most, pass":            {12, diff.GuardInput{Events: 40, Mapped: 50}, diff.Verdict{}},
		"most of many are held":               {25, diff.GuardInput{Events: 5, Mapped: 30}, diff.Verdict{Suspicious: true, Runs: 1, Held: 25}},
		"an empty feed holds even one":        {1, diff.GuardInput{Events: 0, Mapped: 1}, diff.Verdict{Suspicious: true, Runs: 1, Held: 1}},
		"nothing mapped, nothing to guard":    {0, diff.GuardInput{Events: 0, Mapped: 0}, diff.Verdict{}},
		"held again counts the runs":          {25, diff.GuardInput{Events: 5, Mapped: 30, Runs: 1, Held: "same"}, diff.Verdict{Suspicious: true, Runs: 2, Held: 25}},
		"other deletes start the count again": {25, diff.GuardInput{Events: 5, Mapped: 30, Runs: 2, Held: "other"}, diff.Verdict{Suspicious: true, Runs: 1, Held: 25}},
		"confirmed after enough runs":         {25, diff.GuardInput{Events: 5, Mapped: 30, Runs: 2, Held: "same"}, diff.Verdict{Suspicious: true, Released: 25}},
		"the operator releases them at once":  {25, diff.GuardInput{Events: 5, Mapped: 30, Allow: true}, diff.Verdict{Suspicious: true, Released: 25, Allowed: true}},
	}
	for name, tt := range tests {
		tt.in.Policy = policy
		if tt.in.Held == "same" {
			tt.in.Held = diff.Digest(deletes(tt.deletes).Deletes)
		}
		got, v := diff.Guard(deletes(tt.deletes), tt.in)
		tt.want = held(tt.want, tt.deletes, tt.in)
		if v != tt.want {
			t.Errorf("%s: verdict %+v, want %+v", name, v, tt.want)
		}
		if wantLeft := tt.deletes - v.Held; len(got.Deletes) != wantLeft {
			t.Errorf("%s: %d deletes let through, want %d", name, len(got.Deletes), wantLeft)
		}
	}
}

// held fills in what a held verdict names: the deletes' digest and the
// base they are weighed against.
func held(v diff.Verdict, n int, in diff.GuardInput) diff.Verdict {
	if v.Held > v.Adopted {
		v.Digest = diff.Digest(deletes(n - v.Adopted).Deletes)
		v.Base = in.Mapped
		if in.Runs > 0 && in.Base > 0 {
			v.Base = in.Base
		}
	}
	return v
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
// held once it has lost most of the peak.
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
		"a bleed of a few is held past the peak": {10, diff.GuardInput{Events: 4, Mapped: 14, Peak: 100}, diff.Verdict{Suspicious: true, ByPeak: true, Runs: 1, Held: 10}},
		"a few deletes within the peak pass":     {10, diff.GuardInput{Events: 60, Mapped: 70, Peak: 100}, diff.Verdict{}},
		"the operator releases a peak hold":      {25, diff.GuardInput{Events: 26, Mapped: 51, Peak: 100, Allow: true}, diff.Verdict{Suspicious: true, ByPeak: true, Released: 25, Allowed: true}},
		"a swap is no shrink":                    {25, diff.GuardInput{Events: 95, Mapped: 100, Peak: 100}, diff.Verdict{}},
	}
	for name, tt := range tests {
		tt.in.Policy = policy
		if tt.in.Held == "same" {
			tt.in.Held = diff.Digest(deletes(tt.deletes).Deletes)
		}
		got, v := diff.Guard(deletes(tt.deletes), tt.in)
		tt.want = held(tt.want, tt.deletes, tt.in)
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

// guardSim runs a feed through the guard run after run as the daemon
// does: the mappings are what the guard let through, the peak follows
// NextPeak, and the hold's count, base and digest carry over.
type guardSim struct {
	policy        diff.DeletePolicy
	mapped        map[int]bool
	runs, base    int
	digest        string
	peak          int
	deleted, held []int
}

func (s *guardSim) run(feed []int) {
	var p diff.Plan
	in := map[int]bool{}
	for _, e := range feed {
		in[e] = true
		if !s.mapped[e] {
			p.Creates = append(p.Creates, diff.Op{Kind: diff.Create, Key: calsyncd.Key{UID: fmt.Sprintf("e%d", e)}})
		}
	}
	var gone []int
	for e := range s.mapped {
		if !in[e] {
			gone = append(gone, e)
		}
	}
	slices.Sort(gone)
	for _, e := range gone {
		p.Deletes = append(p.Deletes, diff.Op{Kind: diff.Delete, Key: calsyncd.Key{UID: fmt.Sprintf("e%d", e)}})
	}
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	s.peak, _ = diff.NextPeak(s.peak, t0, len(s.mapped), t0, time.Hour)
	got, v := diff.Guard(p, diff.GuardInput{Events: len(feed), Mapped: len(s.mapped), Peak: s.peak,
		Runs: s.runs, Base: s.base, Held: s.digest, Policy: s.policy})
	s.runs, s.base, s.digest = v.Runs, v.Base, v.Digest
	if v.Released > 0 {
		s.peak = len(feed)
	}
	for _, op := range got.Deletes {
		var e int
		fmt.Sscanf(op.Key.UID, "e%d", &e)
		delete(s.mapped, e)
	}
	for _, e := range feed {
		s.mapped[e] = true
	}
	s.deleted, s.held = append(s.deleted, len(got.Deletes)), append(s.held, v.Held)
}

func events(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// TestGuardSequences are the sequences that tested the guard: a feed
// replaced whole, a bleed of at most min_deletes a run, and a release
// that would take along losses never held. Each is weighed run by run.
func TestGuardSequences(t *testing.T) {
	policy := diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}
	bleed := [][]int{events(0, 100)}
	for n := 90; n >= 0; n -= 10 {
		bleed = append(bleed, events(0, max(n, 1)))
	}
	tests := map[string]struct {
		feeds       [][]int
		wantDeleted []int
		wantHeld    []int
	}{
		// Run 1 creates 110 and holds 100; the 110 must not dilute the
		// hold on run 2: it is confirmed on run 3, as the policy says.
		"replaced whole": {
			feeds:       [][]int{events(0, 100), events(1000, 110), events(1000, 110), events(1000, 110)},
			wantDeleted: []int{0, 0, 0, 100}, wantHeld: []int{0, 100, 100, 0},
		},
		// Ten a run, never more than min_deletes: held once the feed has
		// lost more than half its peak, and for good while it goes on.
		"a bleed of min_deletes a run": {
			feeds:       bleed,
			wantDeleted: []int{0, 10, 10, 10, 10, 10, 0, 0, 0, 0, 0},
			wantHeld:    []int{0, 0, 0, 0, 0, 0, 10, 20, 30, 40, 49},
		},
		// 55 held twice; on the third run the feed loses 43 more: they
		// were never held, so the count starts again for all 98.
		"losses first seen on the confirming run": {
			feeds:       [][]int{events(0, 100), events(0, 45), events(0, 45), events(0, 2), events(0, 2), events(0, 2)},
			wantDeleted: []int{0, 0, 0, 0, 0, 98}, wantHeld: []int{0, 55, 55, 98, 98, 0},
		},
	}
	for name, tt := range tests {
		s := &guardSim{policy: policy, mapped: map[int]bool{}}
		for _, f := range tt.feeds {
			s.run(f)
		}
		t.Logf("%s: deleted per run %v, held per run %v", name, s.deleted, s.held)
		if fmt.Sprint(s.deleted) != fmt.Sprint(tt.wantDeleted) || fmt.Sprint(s.held) != fmt.Sprint(tt.wantHeld) {
			t.Errorf("%s: deleted %v held %v, want deleted %v held %v", name, s.deleted, s.held, tt.wantDeleted, tt.wantHeld)
		}
	}
}

// TestGuardHoldsWhatAConfigChangeDeletes: deletes that follow a change
// of the configuration are never confirmed by waiting; the
// operator releases them.
func TestGuardHoldsWhatAConfigChangeDeletes(t *testing.T) {
	policy := diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}
	in := diff.GuardInput{Events: 0, Mapped: 50, ByConfig: true, Policy: policy}
	for run := 1; run <= 5; run++ {
		got, v := diff.Guard(deletes(50), in)
		if len(got.Deletes) != 0 || v.Held != 50 || !v.ByConfig {
			t.Fatalf("run %d: %d deleted, verdict %+v: a config change's deletes wait for the operator", run, len(got.Deletes), v)
		}
		in.Runs, in.Base, in.Held = v.Runs, v.Base, v.Digest
	}
	in.Allow = true
	if got, v := diff.Guard(deletes(50), in); len(got.Deletes) != 50 || !v.Allowed {
		t.Errorf("--allow-deletes: %d deleted, verdict %+v", len(got.Deletes), v)
	}
}

// TestGuardNeverDeletesWhatTheRunAdopted: a delete of an event the run
// adopted (found in Google, never mapped here) is held whatever the
// counts, until the operator allows it.
func TestGuardNeverDeletesWhatTheRunAdopted(t *testing.T) {
	policy := diff.DeletePolicy{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3}
	adopted := func(k calsyncd.Key) bool { return k.UID == "e0" || k.UID == "e1" }
	got, v := diff.Guard(deletes(3), diff.GuardInput{Events: 97, Mapped: 100, Adopted: adopted, Policy: policy})
	if len(got.Deletes) != 1 || got.Deletes[0].Key.UID != "e2" || v.Held != 2 || v.Adopted != 2 {
		t.Errorf("deleted %v, verdict %+v: want e2 deleted, the 2 adopted held", got.Deletes, v)
	}
	got, v = diff.Guard(deletes(3), diff.GuardInput{Events: 97, Mapped: 100, Adopted: adopted, Allow: true, Policy: policy})
	if len(got.Deletes) != 3 || v.Held != 0 || !v.Allowed {
		t.Errorf("allowed: deleted %d, verdict %+v", len(got.Deletes), v)
	}
}
