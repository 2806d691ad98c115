package diff_test

import (
	"testing"

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
