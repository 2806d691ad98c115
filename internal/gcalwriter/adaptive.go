package gcalwriter

import (
	"math"
	"time"
)

// adaptive is the write rate learnt from what Google accepts and refuses,
// for a quota below our pacing. A refusal is a cost, not a probe: it
// spends a round trip, a slot and the quota's patience, so the rate is
// bracketed by what the answers prove and narrowed by bisection, rather
// than found by crossing it again and again.
//
// Google's write quotas behave as buckets of tokens, refilled at the
// quota's rate r and holding at most some burst: a write is accepted when
// the bucket holds a token as it arrives. Two facts hold whatever the
// burst, and the answers of a constant latency arrive as far apart as the
// requests started:
//
//   - A refusal says the bucket held less than one token. Since the last
//     accepted write left it at zero or more, the time between the two
//     refilled less than one: r < 1/gap. That is the upper bound, hi.
//   - After a refusal (the anchor) the bucket held less than one token, so
//     k writes accepted in the span d since it were refilled meanwhile:
//     r > (k-1)/d. That is the lower bound, lo, whatever the bucket held
//     before the anchor.
//
// Writes go at the middle of the bracket, which rises with lo as the
// writes are accepted, until a refusal lowers hi; once hi is within
// 3·holdMargin of lo they are held holdMargin under hi (never under lo):
// refused there, hi comes down by as much. After holdWrites accepted
// writes in a row held (twice as many bisecting: lo, an average since the
// anchor, may lag), a probe sends probeStep above lo: should the
// writes accepted since the anchor prove r above hi, the quota rose, and
// the probe climbs, twice as far every climbWrites accepted writes, until
// Google refuses one; refused before, hi stands and the writes are held
// again.
//
// A refusal of writes sent at what the quota had proven (within half a
// holdMargin of lo) says that the quota dropped: what was proven is
// forgotten and the rate is cut by a fifth (further refusals bisect from
// there). A refusal with nothing learnt cuts the rate by 30%.
//
// After a pause (idleGap, or a new writer) the bucket refilled: the writes
// go at the floor until Google refuses one, which says the bucket is spent
// and leaves the rate learnt as it was. The held spacing is what the store
// keeps across runs (SetSpacing restores it as the bracket learnt then).
//
// The spacing never leaves [floor, max]. Pure: no clock, no waiting; the
// Pacer calls it under its lock with the starts of the requests answered.
type adaptive struct {
	floor, max time.Duration
	// spacing is the spacing writes go at now; held the one learnt (the
	// floor's while nothing is).
	spacing, held time.Duration
	// lo and hi bracket the quota's rate, in writes a second (0: unknown).
	// cut, when set, is the rate a cut chose, sent until lo catches up.
	lo, hi, cut float64
	// anchor is the start of the latest refusal, k the writes accepted
	// since (started after it), lastOK the start of the latest accepted
	// write, lastSent of the latest write answered.
	anchor, lastOK, lastSent time.Time
	k                        int
	// cutAt: answers to requests started before it were sent at another
	// rate, and decide nothing but the bounds.
	cutAt time.Time
	// burst: the bucket refilled during a pause; the writes go at the
	// floor until refused.
	burst   bool
	burstOK int
	// clean counts the writes accepted since the last refusal or move;
	// probing: sending at rate above lo, to see if the quota rose beyond
	// riseFrom (the hi it had); climbing: it did.
	clean             int
	probing, climbing bool
	rate, step        float64
	riseFrom          float64
}

const (
	holdMargin  = 0.01
	holdWrites  = 150
	probeStep   = 0.20
	climbWrites = 20
	maxStep     = 1.0
	dropCut     = 0.8
	firstCut    = 0.7
	idleGap     = 30 * time.Second
	burstWrites = 600
)

func rateOf(d time.Duration) float64 { return float64(time.Second) / float64(d) }

func (a *adaptive) spacingOf(r float64) time.Duration {
	d := a.max
	if r > 0 {
		// Rounded up: never faster than the rate.
		d = time.Duration(math.Ceil(float64(time.Second) / r))
	}
	return min(max(d, a.floor), a.max)
}

// wholeMs rounds d up to whole milliseconds, as the store keeps it (less
// than a microsecond over is rounding).
func (a *adaptive) wholeMs(d time.Duration) time.Duration {
	d = (d - time.Microsecond).Truncate(time.Millisecond) + time.Millisecond
	return min(max(d, a.floor), a.max)
}

// target is the rate writes go at now (0: the floor's).
func (a *adaptive) target() float64 {
	switch {
	case a.burst:
		return 0
	case a.probing || a.climbing:
		return a.rate
	case a.lo == 0 && a.hi == 0 && a.cut == 0:
		return 0
	case a.hi == 0, a.lo == 0:
		// No bracket yet: what is proven, or what a cut chose.
		return max(a.lo, a.cut)
	case a.converged():
		return a.hold()
	}
	return max((a.lo+a.hi)/2, a.cut)
}

// hold is the rate held once converged: holdMargin under what Google
// refused, never under what it proved.
func (a *adaptive) hold() float64 { return max(a.lo, a.hi*(1-holdMargin)) }

func (a *adaptive) converged() bool { return a.lo > 0 && a.hi > 0 && a.hi <= a.lo*(1+3*holdMargin) }

// update sets the spacing from the bracket; it reports whether it moved.
func (a *adaptive) update() bool {
	old := a.spacing
	r := a.target()
	a.spacing = a.floor
	if r > 0 {
		a.spacing = a.spacingOf(r)
	}
	switch {
	case a.lo >= rateOf(a.floor)/(1+2*holdMargin):
		// Proven as near the floor as writes at the floor can prove.
		a.held = a.floor
	case a.converged():
		a.held = a.wholeMs(a.spacingOf(a.hold()))
	case a.lo > 0:
		a.held = a.wholeMs(a.spacingOf(a.lo))
	case a.cut > 0:
		a.held = a.wholeMs(a.spacingOf(a.cut))
	default:
		a.held = a.floor
	}
	if a.converged() && !a.burst && !a.probing && !a.climbing {
		a.spacing = a.held
	}
	return a.spacing != old
}

// restore starts from a spacing held before (kept by the store), as the
// bracket it was held in, after a pause that refilled the bucket.
func (a *adaptive) restore(d time.Duration) {
	d = min(max(d, a.floor), a.max)
	*a = adaptive{floor: a.floor, max: a.max, spacing: a.spacing}
	if d > a.floor {
		a.hi = rateOf(d) / (1 - holdMargin)
		a.lo = a.hi / (1 + 2*holdMargin)
	}
	a.burst, a.burstOK = true, 0
	a.update()
}

// sentAt notes a write answered, started at start; after a pause the
// bucket refilled.
func (a *adaptive) sentAt(start time.Time) {
	if !a.lastSent.IsZero() && start.Sub(a.lastSent) > max(idleGap, 20*a.held) {
		a.burst, a.burstOK, a.probing, a.climbing, a.clean = true, 0, false, false, 0
		a.anchor, a.k = time.Time{}, 0
	}
	if start.After(a.lastSent) {
		a.lastSent = start
	}
}

// refusedAt learns from a rate limit of a write started at start, seen at
// now; it reports whether the spacing changed (the Pacer then pauses the
// writes one spacing, so that the bucket holds a token for the next).
func (a *adaptive) refusedAt(start, now time.Time) bool {
	a.sentAt(start)
	var bound float64
	if !a.lastOK.IsZero() && start.After(a.lastOK) {
		bound = 1 / start.Sub(a.lastOK).Seconds()
	}
	stale := start.Before(a.cutAt)
	sending := rateOf(a.spacing)
	wasBurst := a.burst
	a.anchor, a.k = start, 0
	a.clean = 0
	if stale && !wasBurst {
		if bound > 0 && (a.hi == 0 || bound < a.hi) && !a.probing && !a.climbing {
			a.hi = bound
		}
		return a.update()
	}
	a.cutAt = now
	a.burst = false
	switch {
	case wasBurst:
		// The bucket the pause refilled is spent: the rate is as learnt.
		if bound > 0 && a.hi > 0 {
			a.hi = min(a.hi, bound)
		}
		if a.lo == 0 && a.hi == 0 {
			a.cut = sending * firstCut
			a.hi = bound
		}
	case a.probing || a.climbing:
		// The probe went beyond the quota: it is below what was refused.
		hi := bound
		if a.probing && a.riseFrom > 0 && (hi == 0 || a.riseFrom < hi) {
			hi = a.riseFrom
		}
		a.hi = hi
		if a.climbing {
			a.step = probeStep
		}
		a.probing, a.climbing = false, false
	case a.lo > 0 && sending <= a.lo*(1+holdMargin/2):
		// Refused at a rate the quota had proven: it dropped.
		a.lo, a.cut = 0, sending*dropCut
		if bound > 0 {
			a.hi = bound
		}
	case a.lo == 0 && a.hi == 0:
		a.cut = sending * firstCut
		a.hi = bound
	default:
		if bound > 0 && (a.hi == 0 || bound < a.hi) {
			a.hi = bound
		}
		if a.lo == 0 {
			// Nothing proven yet: a fifth slower each time.
			a.cut = sending * dropCut
		} else {
			a.cut = 0
		}
	}
	a.update()
	return true
}

// succeeded learns from a write started at start that Google accepted,
// seen at now; it reports whether the spacing changed.
func (a *adaptive) succeeded(start, now time.Time) bool {
	a.sentAt(start)
	if start.After(a.lastOK) {
		a.lastOK = start
	}
	if a.burst {
		if a.burstOK++; a.burstOK >= burstWrites {
			// More than a minute of Google's published quota accepted at
			// the floor: the quota is above it.
			*a = adaptive{floor: a.floor, max: a.max, spacing: a.spacing, lastOK: a.lastOK, lastSent: a.lastSent}
		}
	}
	if a.anchor.IsZero() || !start.After(a.anchor) {
		return a.update()
	}
	a.k++
	if d := start.Sub(a.anchor).Seconds(); a.k >= 2 && d > 0 {
		if lo := float64(a.k-1) / d; lo > a.lo {
			a.lo = lo
			if a.cut > 0 && a.lo >= a.cut {
				a.cut = 0
			}
			if a.hi > 0 && a.lo > a.hi {
				// The quota rose beyond what was refused.
				a.hi = 0
			}
		}
	}
	if a.burst || start.Before(a.cutAt) {
		return a.update()
	}
	a.clean++
	switch {
	case a.probing && a.riseFrom > 0 && a.lo > a.riseFrom:
		// Proven: the quota rose; climb.
		a.probing, a.climbing = false, true
		a.hi, a.clean = 0, 0
		a.step = min(2*a.step, maxStep)
		a.rate = max(a.rate, a.lo) * (1 + a.step)
		a.cutAt = now
	case a.climbing && a.clean >= climbWrites:
		a.step = min(2*a.step, maxStep)
		a.rate *= 1 + a.step
		a.clean = 0
		a.cutAt = now
	case !a.probing && !a.climbing && a.hi == 0 && a.lo > 0 && a.clean >= climbWrites && a.spacing > a.floor:
		// Nothing refused that still stands: climb from what is proven.
		a.climbing, a.step = true, probeStep
		a.rate = max(a.lo, a.cut) * (1 + a.step)
		a.clean = 0
		a.cutAt = now
	case !a.probing && !a.climbing && a.hi > 0 && a.lo > 0 && a.spacing > a.floor &&
		(a.clean >= holdWrites && a.converged() || a.clean >= 2*holdWrites):
		// Held, or bisecting for twice as long without a refusal: the
		// quota may have risen beyond what was refused.
		a.probing, a.riseFrom = true, a.hi
		a.step = probeStep
		a.rate = a.lo * (1 + a.step)
		a.hi, a.clean = 0, 0
		a.cutAt = now
	}
	return a.update()
}
