package subscription

import (
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// maxSpread bounds how far a subscription's runs are moved from the
// configured schedule: a daily "0 7 * * *" still runs around seven.
const maxSpread = time.Hour

// Cadence is the configured schedule and what spreading derives from it.
type Cadence struct {
	Base cron.Schedule
	// Interval is the gap between two consecutive ticks of Base.
	Interval time.Duration
	// Spread is the window over which subscriptions are spread:
	// min(Interval, one hour).
	Spread time.Duration
}

// NewCadence derives the interval and spread of a base schedule, measured
// from now.
func NewCadence(base cron.Schedule, now time.Time) Cadence {
	a := base.Next(now)
	b := base.Next(a)
	iv := b.Sub(a)
	if iv <= 0 {
		iv = time.Hour
	}
	return Cadence{Base: base, Interval: iv, Spread: min(iv, maxSpread)}
}

// Phase is a subscription's deterministic offset within the spread window,
// so a hundred feeds configured @hourly do not fire in the same second.
func (c Cadence) Phase(id string) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(id))
	return time.Duration(h.Sum64() % uint64(c.Spread))
}

// spreadSchedule is one subscription's schedule: the base schedule shifted
// by the subscription's phase, each run varied by up to ±25% of the spread
// (Google asks clients to vary periodic syncs by ±25%). It implements
// cron.Schedule.
type spreadSchedule struct {
	cadence Cadence
	phase   time.Duration

	mu      sync.Mutex
	rng     *rand.Rand
	pending time.Time // a one-shot earlier run (start-up catch-up)
	// lastRun, when known, is the subscription's last run before the
	// daemon (re)started: the first Next measures from it, not from the
	// time it is asked (see ranBefore).
	lastRun time.Time
}

func newSpreadSchedule(c Cadence, id string, seed uint64) *spreadSchedule {
	return &spreadSchedule{cadence: c, phase: c.Phase(id), rng: rand.New(rand.NewPCG(seed, uint64(c.Phase(id))))}
}

// Next returns the next run strictly after t, or the zero time (robfig/cron's
// "never") when the base schedule has none: a time that is not after t
// would be run at once, and again, back to back.
func (s *spreadSchedule) Next(t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cadence
	// robfig/cron answers the zero time when nothing matches within about
	// five years ("0 0 31 2 *"); shifted by the phase it would be a time
	// long past.
	b := c.Base.Next(t.Add(-s.phase))
	if b.IsZero() {
		s.pending = time.Time{}
		return time.Time{}
	}
	if !s.pending.IsZero() {
		p := s.pending
		s.pending = time.Time{}
		if p.After(t) {
			return p
		}
	}
	n := b.Add(s.phase)
	// A run that was jittered early is close to the nominal tick it
	// serves; that tick is served, so move to the following one. Asked at
	// a run, the run is at t; asked at start, the last run is lastRun.
	served, first := t, s.lastRun
	if !first.IsZero() {
		served, s.lastRun = first, time.Time{}
	}
	if n.Sub(served) < c.Spread/2 {
		b = c.Base.Next(n.Add(-s.phase))
		if b.IsZero() {
			return time.Time{}
		}
		n = b.Add(s.phase)
	}
	quarter := int64(c.Spread / 4)
	if quarter > 0 {
		n = n.Add(time.Duration(s.rng.Int64N(2*quarter+1) - quarter))
	}
	if !first.IsZero() {
		// A tick passed while the daemon was down: run no later than a
		// run after the last would have at the latest.
		// (A subscription overdue already is the catch-up's, or waits
		// for its tick when catching up is off.)
		if latest := first.Add(c.Interval + c.Spread/4); latest.After(t) && n.After(latest) {
			n = latest
		}
		// Measured from the last run, the tick may be less than the
		// jitter away: jittered early, it is due now.
		if !n.After(t) {
			n = t.Add(time.Second)
		}
	}
	if !n.After(t) {
		return time.Time{}
	}
	return n
}

// ranBefore says when the subscription last ran before the daemon
// started, so its first run keeps the cadence: not twice for the tick that
// run served (a run jittered early), and not a whole interval late for a
// tick that passed while the daemon was down.
func (s *spreadSchedule) ranBefore(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastRun = t
}

// Never reports whether the cadence's base schedule has no activation
// after now (robfig/cron looks about five years ahead).
func (c Cadence) Never(now time.Time) bool { return c.Base.Next(now).IsZero() }

// runSoon makes the next activation an earlier one-shot run at t.
func (s *spreadSchedule) runSoon(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = t
}

// errorBackoff is how long a subscription in ERROR waits between runs: the
// interval doubled for each failure beyond the threshold, capped.
func errorBackoff(interval time.Duration, consecutiveErrors, threshold int, maxWait time.Duration) time.Duration {
	d := interval
	for i := threshold; i < consecutiveErrors && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}
