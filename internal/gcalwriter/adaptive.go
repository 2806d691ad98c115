package gcalwriter

import "time"

// adaptive is the write spacing learnt from Google's rate limits, when its
// quota is below our pacing: AIMD on the spacing, settling just under the
// rate Google last refused instead of oscillating across it.
//
//   - A rate limit widens the spacing once per widening (answers to
//     requests sent before it say nothing about the new spacing): by 5%
//     when the quota was found near where we ran (many successes since the
//     last refusal), by 25% while refusals come thick (few successes
//     between them: the quota is still far below).
//   - A success narrows it: quickly (an eighth of the distance) down to 2%
//     above the spacing Google refused, then by a ten-thousandth of itself
//     at a time, creeping toward the refusal so that a quota that stays
//     put costs about one refusal per few hundred writes.
//   - After holdSuccesses successes without a refusal the refusal is
//     forgotten and the spacing decays toward the floor by a thirty-second
//     of the distance per success: the quota has room again.
//
// The spacing never leaves [floor, max]. Pure: no clock, no waiting; the
// Pacer calls it under its lock.
type adaptive struct {
	floor, max time.Duration
	spacing    time.Duration
	widenedAt  time.Time     // answers to requests started before it are stale
	refused    time.Duration // the spacing Google last rate-limited; 0: none remembered
	since      int           // successes since then
}

const (
	holdSuccesses   = 500
	thickRefusals   = 8 // fewer successes than this between refusals: widen more
	gentleWiden     = 1.05
	steepWiden      = 1.25
	approachDivisor = 8
	creepDivisor    = 10_000
	decayDivisor    = 32
)

// refusedAt widens the spacing after a rate limit of a request started at
// start, seen at now; it reports whether the spacing changed.
func (a *adaptive) refusedAt(start, now time.Time) bool {
	if start.Before(a.widenedAt) || a.spacing >= a.max {
		return false
	}
	factor := gentleWiden
	if a.refused > 0 && a.since < thickRefusals {
		factor = steepWiden
	}
	a.widenedAt = now
	a.refused, a.since = a.spacing, 0
	a.spacing = min(a.max, time.Duration(float64(a.spacing)*factor))
	return true
}

// succeeded narrows the spacing after a write started at start succeeded;
// it reports whether the spacing changed.
func (a *adaptive) succeeded(start time.Time) bool {
	if start.Before(a.widenedAt) {
		return false
	}
	a.since++
	if a.spacing <= a.floor {
		return false
	}
	if a.refused > 0 && a.since > holdSuccesses {
		a.refused = 0
	}
	next := a.spacing - (a.spacing-a.floor)/decayDivisor
	if a.refused > 0 {
		target := a.refused + a.refused/50
		if a.spacing > target {
			next = a.spacing - max((a.spacing-target)/approachDivisor, time.Microsecond)
		} else {
			next = a.spacing - max(a.spacing/creepDivisor, time.Microsecond)
		}
	}
	if next-a.floor < time.Millisecond {
		next = a.floor
	}
	if next == a.spacing {
		return false
	}
	a.spacing = next
	return true
}
