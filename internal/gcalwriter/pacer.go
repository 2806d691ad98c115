package gcalwriter

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Priority orders the requests waiting for a pacer.
type Priority int

const (
	// Incremental requests (a subscription's regular changes) always start
	// before backfill requests waiting at the same time, and within one
	// spacing of arriving.
	Incremental Priority = iota
	// Backfill requests (a first sync, a large plan) hold a share of the
	// pacer's slots, and borrow the others while no incremental request
	// waits and one of them is sure to be free again within a spacing.
	Backfill
)

func (p Priority) String() string {
	if p == Backfill {
		return "backfill"
	}
	return "incremental"
}

// PacerOptions configure a Pacer; zero values take the defaults
// (calsyncd.DefaultWriterLimits).
type PacerOptions struct {
	// Concurrency is how many requests may be in flight at once (2).
	Concurrency int
	// Spacing is the least time between two request starts (250 ms). It
	// is the floor adaptive spacing never goes below.
	Spacing time.Duration
	// MaxSpacing bounds adaptive spacing (5 s).
	MaxSpacing time.Duration
	// BackfillShare is the share of the slots a backfill may hold
	// whatever the latency (0.75; at least one slot). Beyond it, it takes a
	// slot while another stays free, or is expected to be within a
	// spacing, so that an incremental request arriving still starts at
	// the next start time; 1 lets it hold every slot.
	BackfillShare float64
	Clock         Clock
}

func (o PacerOptions) withDefaults() PacerOptions {
	if o.Concurrency < 1 {
		o.Concurrency = 2
	}
	if o.Spacing <= 0 {
		o.Spacing = 250 * time.Millisecond
	}
	if o.MaxSpacing < o.Spacing {
		o.MaxSpacing = max(o.Spacing, 5*time.Second)
	}
	if o.BackfillShare <= 0 || o.BackfillShare > 1 {
		o.BackfillShare = 0.75
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	return o
}

// Pacer paces the requests of one Google account, shared by every
// subscription writing as that account (Google's quotas are per user): at
// most Concurrency in flight, every start at least the floor spacing after
// the last (a token bucket of one token, golang.org/x/time/rate), and
// every write at least the adaptive spacing after the last write
// (Adaptive), incremental requests first.
//
// It is work-conserving: a backfill may use every slot no incremental
// request is waiting for, so that two requests in flight hide Google's
// latency (a first sync at 400 ms runs at the spacing's 4/s, not at
// 1/latency). It takes the last free slot only while a request in flight
// is expected (from the latency of recent answers) to end within one
// spacing, so an incremental request arriving meanwhile still starts at
// the next start time. A read waits only for the floor: the quotas Google
// enforces below our pacing are on writes, and a read should not wait for
// a spacing learnt from them (nor make the writes wait).
type Pacer struct {
	clock         Clock
	floor         time.Duration
	slots         int
	backfillSlots int

	mu sync.Mutex
	// starts paces every request at the floor; writes paces writes at the
	// adaptive spacing.
	starts, writes   *rate.Limiter
	adapt            adaptive
	inFlight         int
	backfillInFlight int
	flying           map[*Slot]struct{}
	// latency is how long recent requests took (rising at once to a slower
	// answer, falling slowly); zero until one has been answered.
	latency  time.Duration
	queue    [2][]*waiter
	timer    Timer
	timerAt  time.Time
	timerGen uint64
}

type waiter struct {
	prio  Priority
	write bool
	ready chan struct{}
	slot  *Slot
}

// Slot is the right to have one request in flight. Release it when the
// answer has arrived.
type Slot struct {
	// Start is when the request was allowed to start.
	Start time.Time
	p     *Pacer
	prio  Priority
	once  sync.Once
}

// NewPacer returns a pacer at its floor spacing.
func NewPacer(o PacerOptions) *Pacer {
	o = o.withDefaults()
	return &Pacer{
		clock: o.Clock, floor: o.Spacing, slots: o.Concurrency,
		backfillSlots: max(1, int(math.Floor(float64(o.Concurrency)*o.BackfillShare+1e-9))),
		starts:        rate.NewLimiter(rate.Every(o.Spacing), 1),
		writes:        rate.NewLimiter(rate.Every(o.Spacing), 1),
		adapt:         adaptive{floor: o.Spacing, max: o.MaxSpacing, spacing: o.Spacing, held: o.Spacing},
		flying:        map[*Slot]struct{}{},
	}
}

// Acquire waits until a write of the given priority may start, or until
// ctx is done (returning its cause).
func (p *Pacer) Acquire(ctx context.Context, prio Priority) (*Slot, error) {
	return p.acquire(ctx, prio, true)
}

// AcquireRead is Acquire for a read: it waits for a slot and the floor
// spacing, not for the spacing learnt from rate-limited writes.
func (p *Pacer) AcquireRead(ctx context.Context, prio Priority) (*Slot, error) {
	return p.acquire(ctx, prio, false)
}

func (p *Pacer) acquire(ctx context.Context, prio Priority, write bool) (*Slot, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if prio != Backfill {
		prio = Incremental
	}
	w := &waiter{prio: prio, write: write, ready: make(chan struct{})}
	p.mu.Lock()
	p.queue[prio] = append(p.queue[prio], w)
	p.kickLocked()
	p.mu.Unlock()
	select {
	case <-w.ready:
		return w.slot, nil
	case <-ctx.Done():
		p.mu.Lock()
		granted := w.slot != nil
		if !granted {
			p.queue[prio] = slices.DeleteFunc(p.queue[prio], func(x *waiter) bool { return x == w })
			p.kickLocked()
		}
		p.mu.Unlock()
		if granted {
			w.slot.Release()
		}
		return nil, context.Cause(ctx)
	}
}

// Release gives the slot back. It is safe to call more than once.
func (s *Slot) Release() {
	s.once.Do(func() {
		p := s.p
		p.mu.Lock()
		defer p.mu.Unlock()
		p.inFlight--
		if s.prio == Backfill {
			p.backfillInFlight--
		}
		delete(p.flying, s)
		p.observeLocked(p.clock.Now().Sub(s.Start))
		p.kickLocked()
	})
}

// observeLocked notes how long a request took (a slot given back at once
// sent none).
func (p *Pacer) observeLocked(d time.Duration) {
	if d <= 0 {
		return
	}
	if d > p.latency {
		p.latency = d
		return
	}
	p.latency -= (p.latency - d) / 8
}

// slotFor says whether a request of prio may take a slot now; when it may
// not, at (if not zero) is when a backfill may borrow one (a release also
// looks again).
func (p *Pacer) slotFor(prio Priority, now time.Time) (ok bool, at time.Time) {
	switch {
	case p.inFlight >= p.slots:
		return false, time.Time{}
	case prio == Incremental, p.backfillInFlight < p.backfillSlots, p.inFlight+1 < p.slots:
		return true, time.Time{}
	case p.latency == 0:
		// Nothing answered yet: no telling when a slot frees.
		return false, time.Time{}
	}
	// The last free slot: borrowed once a request in flight is expected to
	// be done within a spacing of now.
	var soonest time.Time
	for s := range p.flying {
		if end := s.Start.Add(p.latency); soonest.IsZero() || end.Before(soonest) {
			soonest = end
		}
	}
	if free := soonest.Add(-p.floor); free.After(now) {
		return false, free
	}
	return true, time.Time{}
}

// readyAt is when lim has a token.
func readyAt(lim *rate.Limiter, now time.Time) time.Time {
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return now
	}
	wait := time.Duration(math.Ceil((1 - tokens) / float64(lim.Limit()) * float64(time.Second)))
	return now.Add(max(wait, 1))
}

// nextLocked is the waiter that may start now, or nil; then at (if not
// zero) is when one may. Incremental requests go first; within a
// priority, the first read may pass a write that waits for its spacing.
func (p *Pacer) nextLocked(now time.Time) (next *waiter, at time.Time) {
	later := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for _, prio := range []Priority{Incremental, Backfill} {
		q := p.queue[prio]
		if len(q) == 0 {
			continue
		}
		ok, borrowAt := p.slotFor(prio, now)
		if !ok {
			later(borrowAt)
			return nil, at
		}
		start := readyAt(p.starts, now)
		firstWrite, firstRead := slices.IndexFunc(q, func(w *waiter) bool { return w.write }), slices.IndexFunc(q, func(w *waiter) bool { return !w.write })
		for _, i := range []int{min(firstWrite, firstRead), max(firstWrite, firstRead)} {
			if i < 0 {
				continue
			}
			t := start
			if q[i].write {
				t = maxTime(t, readyAt(p.writes, now))
			}
			if !t.After(now) {
				return q[i], time.Time{}
			}
			later(t)
		}
		// Incremental requests wait for their turn before any backfill.
		return nil, at
	}
	return nil, at
}

// kickLocked starts every waiter that may start now, and arms a timer for
// when the next one may.
func (p *Pacer) kickLocked() {
	for {
		now := p.clock.Now()
		w, at := p.nextLocked(now)
		if w == nil {
			if at.IsZero() {
				p.disarmLocked()
			} else {
				p.armLocked(now, max(at.Sub(now), 1))
			}
			return
		}
		p.starts.AllowN(now, 1)
		if w.write {
			p.writes.AllowN(now, 1)
		}
		q := p.queue[w.prio]
		p.queue[w.prio] = slices.DeleteFunc(q, func(x *waiter) bool { return x == w })
		p.inFlight++
		if w.prio == Backfill {
			p.backfillInFlight++
		}
		w.slot = &Slot{Start: now, p: p, prio: w.prio}
		p.flying[w.slot] = struct{}{}
		close(w.ready)
	}
}

func (p *Pacer) armLocked(now time.Time, wait time.Duration) {
	at := now.Add(wait)
	if p.timer != nil && !p.timerAt.After(at) {
		return
	}
	p.disarmLocked()
	p.timerGen++
	gen := p.timerGen
	p.timerAt = at
	p.timer = p.clock.AfterFunc(wait, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if gen == p.timerGen {
			p.timer = nil
		}
		p.kickLocked()
	})
}

func (p *Pacer) disarmLocked() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
		p.timerGen++
	}
}

// RateLimited learns from Google's rate limit of a write that started at
// start (adaptive): the write spacing widens to the quota's rate as
// measured, and the next write waits one spacing more, so that the quota
// holds a token for it.
func (p *Pacer) RateLimited(start time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	if p.adapt.refusedAt(start, now) {
		p.setLocked(p.adapt.spacing)
		p.writes.ReserveN(now, 1)
		p.disarmLocked()
		p.kickLocked()
	}
}

// Succeeded learns from a write that started at start and that Google
// accepted: after a long clean stretch the spacing probes a little
// narrower, and climbs while the probes are accepted.
func (p *Pacer) Succeeded(start time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.adapt.succeeded(start, p.clock.Now()) {
		p.setLocked(p.adapt.spacing)
	}
}

// SetSpacing restores a learned spacing (from the store), kept within the
// floor and the maximum: it is held as the quota's rate learnt then.
func (p *Pacer) SetSpacing(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.adapt.restore(d)
	p.setLocked(p.adapt.spacing)
}

func (p *Pacer) setLocked(d time.Duration) {
	now := p.clock.Now()
	if rate.Every(d) == p.writes.Limit() {
		return
	}
	p.writes.SetLimitAt(now, rate.Every(d))
	// A timer armed for the old rate is early or late now: re-arm it.
	p.disarmLocked()
	p.kickLocked()
}

// PacerState is a snapshot of a pacer.
type PacerState struct {
	// Spacing is the least time between two writes as learnt (the
	// adaptive spacing; after a pause the writes go at the floor until
	// Google refuses one); Floor the least between any two requests.
	Spacing  time.Duration
	Floor    time.Duration
	InFlight int
	Waiting  int
}

// State returns the pacer's current spacing and load.
func (p *Pacer) State() PacerState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PacerState{Spacing: p.adapt.held, Floor: p.floor, InFlight: p.inFlight,
		Waiting: len(p.queue[Incremental]) + len(p.queue[Backfill])}
}
