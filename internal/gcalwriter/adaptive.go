package gcalwriter

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// adaptive is the write rate learnt from what Google accepts and refuses,
// for a quota below our pacing. A refusal is a cost, not a probe: it
// spends a round trip, a slot and the quota's patience, so the rate is
// measured rather than found by crossing it again and again.
//
// Google's write quotas behave as buckets of tokens: a refusal says the
// bucket was empty when the request came. Between two refusals, then, the
// writes Google accepted are the tokens that refilled it, and their count
// over the time between the two is the quota's rate, within one write over
// the span, whatever was sent meanwhile; only if the writes stayed under
// the rate long enough for the bucket to fill and spill is it less, never
// more.
//
//   - A refusal sets the estimate to that measure, taken from the oldest
//     refusal among the last measureWrites accepted writes (a span long
//     enough to be precise, short enough to follow a drop), never below
//     a rate a probe has just proven, never above the rate refused.
//     Refusals that come thick (fewer than denseWrites accepted since the
//     last) cut the rate by a fifth at once: the quota is far below, as
//     after a drop. With nothing to measure from, a refusal cuts the rate
//     by 30% (nothing learnt yet) or 10% (a rate learnt before).
//   - Writes are held holdMargin under the estimate, and the first write
//     after a refusal waits one more spacing (Pacer.RateLimited) so that
//     the bucket holds a token for it.
//   - After holdWrites accepted writes in a row, a probe sends probeStep
//     above the estimate. Unchanged, the quota refuses it within the few
//     writes that the slack saved while holding lasts; accepted for
//     probeWrites, it proves the quota rose, and the next probe climbs
//     twice as far after climbWrites, until Google refuses one.
//   - A pause in the writes (idleGap) forgets the refusals: the bucket
//     refilled meanwhile. The estimate stays, and the Pacer's spacing is
//     what the store keeps across runs (SetSpacing restores it).
//
// The spacing never leaves [floor, max]. Pure: no clock, no waiting; the
// Pacer calls it under its lock with the starts of the requests answered.
type adaptive struct {
	floor, max time.Duration
	spacing    time.Duration
	// est is the quota's rate as learnt, in writes a second; 0: nothing
	// learnt (the spacing is the floor's).
	est float64
	// cutAt: refusals of requests started before it are stale (the rate
	// was cut since). movedAt: successes of requests started before it say
	// nothing of the rate since.
	cutAt, movedAt time.Time
	// accepted are the starts of the accepted writes, in order, back to
	// the oldest refusal kept; refusals the starts of the refusals that set
	// the rate; sent the starts of the last sentWindow writes, whatever
	// their answer, lastSent the latest.
	accepted, refusals, sent []time.Time
	lastSent                 time.Time
	// clean counts the accepted writes started since movedAt; step is how
	// far above the estimate a probe sends (0: holding), nextStep how far
	// the next probe will; proven the highest rate held or probed without
	// a refusal since the last.
	clean          int
	step, nextStep float64
	proven         float64
	// climbing: a probe was accepted since the last refusal.
	climbing bool
}

const (
	holdMargin    = 0.01
	holdWrites    = 150
	probeStep     = 0.10
	minStep       = 0.01
	climbWrites   = 20
	maxStep       = 1.0
	denseWrites   = 20
	denseCut      = 0.8
	firstCut      = 0.7
	blindCut      = 0.9
	measureWrites = 400
	idleGap       = 30 * time.Second
	sentWindow    = 16
)

func (a *adaptive) rate() float64 { return float64(time.Second) / float64(a.spacing) }

func (a *adaptive) setRate(r float64) {
	d := a.max
	if r > 0 {
		d = time.Duration(float64(time.Second) / r)
	}
	a.spacing = min(max(d, a.floor), a.max)
}

// hold sends holdMargin under the estimate.
func (a *adaptive) hold() { a.setRate(a.est * (1 - holdMargin)) }

// restore starts from a spacing learnt before (kept by the store): its
// rate is held under the quota's as estimated then.
func (a *adaptive) restore(d time.Duration) {
	a.spacing = min(max(d, a.floor), a.max)
	a.est = 0
	if a.spacing > a.floor {
		a.est = a.rate() / (1 - holdMargin)
	}
	a.clean, a.step, a.nextStep, a.proven, a.climbing = 0, 0, 0, 0, false
	// A run begins after a pause that refilled the quota's bucket: probe at
	// once, spending what it holds, rather than leave it unused.
	a.clean = holdWrites
}

// sentAt notes a write sent at start; after a pause the refusals are
// forgotten.
func (a *adaptive) sentAt(start time.Time) {
	if !a.lastSent.IsZero() && start.Sub(a.lastSent) > max(idleGap, 20*a.spacing) {
		a.accepted, a.refusals, a.sent = nil, nil, nil
	}
	if start.After(a.lastSent) {
		a.lastSent = start
	}
	a.sent = append(a.sent, start)
	if len(a.sent) > sentWindow {
		a.sent = slices.Delete(a.sent, 0, len(a.sent)-sentWindow)
	}
}

// sending is the rate writes went at lately: the spacing's, or less where
// the latency and the slots hold them back.
func (a *adaptive) sending() float64 {
	r := a.rate()
	if n := len(a.sent); n >= 4 {
		if span := slices.MaxFunc(a.sent, time.Time.Compare).Sub(slices.MinFunc(a.sent, time.Time.Compare)); span > 0 {
			r = min(r, float64(n-1)/span.Seconds())
		}
	}
	return r
}

// acceptedSince counts the accepted writes started after t.
func (a *adaptive) acceptedSince(t time.Time) int {
	i, _ := slices.BinarySearchFunc(a.accepted, t, func(e, t time.Time) int {
		if e.After(t) {
			return 1
		}
		return -1
	})
	return len(a.accepted) - i
}

// acceptedRate is the rate of the last n accepted writes (0 when there
// are not n).
func (a *adaptive) acceptedRate(n int) float64 {
	if n < 2 || len(a.accepted) < n {
		return 0
	}
	span := a.accepted[len(a.accepted)-1].Sub(a.accepted[len(a.accepted)-n])
	if span <= 0 {
		return 0
	}
	return float64(n-1) / span.Seconds()
}

// refusedAt learns from a rate limit of a write started at start, seen at
// now; it reports whether the rate was cut (the Pacer then pauses the
// writes one spacing).
func (a *adaptive) refusedAt(start, now time.Time) bool {
	a.sentAt(start)
	if start.Before(a.cutAt) {
		return false
	}
	send := a.sending()
	var next float64
	switch n := len(a.refusals); {
	case n == 0 && a.est == 0:
		next = send * firstCut
	case n == 0:
		next = send * blindCut
	case a.acceptedSince(a.refusals[n-1]) < denseWrites:
		next = send * denseCut
		a.proven = 0
	default:
		from := a.refusals[n-1]
		for _, t := range a.refusals {
			if a.acceptedSince(t) <= measureWrites {
				from = t
				break
			}
		}
		measured := float64(a.acceptedSince(from)-a.acceptedSince(start)) / start.Sub(from).Seconds()
		next = measured
	}
	// Not below what was held or probed without a refusal: held at it.
	next = min(send, max(next, a.proven/(1-holdMargin)))
	if a.step > 0 {
		// The probe went too far: the next goes half as far.
		a.nextStep = max(minStep, a.step/2)
	}
	a.est = next
	a.hold()
	a.refusals = append(a.refusals, start)
	a.refusals = slices.DeleteFunc(a.refusals, func(t time.Time) bool { return a.acceptedSince(t) > measureWrites })
	a.accepted = slices.DeleteFunc(a.accepted, func(t time.Time) bool { return !t.After(a.refusals[0]) })
	a.cutAt, a.movedAt = now, now
	a.clean, a.step, a.proven, a.climbing = 0, 0, 0, false
	return true
}

// probeNeeds is how many accepted writes prove a probe step above the
// estimate: more than the slack saved while holding could pay for, were
// the quota unchanged.
func probeNeeds(step float64) int {
	return max(climbWrites, int(math.Ceil((holdMargin*holdWrites+2)*(1+step)/step)))
}

// succeeded learns from a write started at start that Google accepted,
// seen at now; it reports whether the rate changed.
func (a *adaptive) succeeded(start, now time.Time) bool {
	a.sentAt(start)
	i, _ := slices.BinarySearchFunc(a.accepted, start, time.Time.Compare)
	a.accepted = slices.Insert(a.accepted, i, start)
	if n := len(a.refusals); n > 0 && a.acceptedSince(a.refusals[n-1]) > 4*measureWrites {
		// Too long ago to measure from: spilt tokens would dilute it.
		a.refusals = nil
	}
	if len(a.refusals) == 0 && len(a.accepted) > measureWrites {
		a.accepted = slices.Delete(a.accepted, 0, len(a.accepted)-measureWrites)
	}
	if a.est == 0 || start.Before(a.movedAt) {
		return false
	}
	a.clean++
	if a.step == 0 {
		if a.clean < holdWrites || a.spacing <= a.floor {
			return false
		}
		a.proven = max(a.proven, min(a.rate(), a.acceptedRate(holdWrites)))
		a.step = cmp.Or(a.nextStep, probeStep)
	} else {
		need := probeNeeds(a.step)
		if a.climbing {
			need = climbWrites
		}
		if a.clean < need {
			return false
		}
		// The probe held: the quota is above the estimate, at least at
		// the rate the probe's writes were accepted; the next climbs
		// twice as far, and sooner.
		a.proven = max(a.proven, min(a.rate(), a.acceptedRate(need)))
		a.est = max(a.est, a.proven)
		a.step = min(2*a.step, maxStep)
		a.nextStep, a.climbing = a.step, true
	}
	a.setRate(a.est * (1 + a.step))
	a.movedAt, a.clean = now, 0
	return true
}
