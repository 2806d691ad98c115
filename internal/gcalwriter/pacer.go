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
	// before backfill requests waiting at the same time.
	Incremental Priority = iota
	// Backfill requests (a first sync, a large plan) hold at most a share
	// of the pacer's slots, so incremental requests always find one free.
	Backfill
)

func (p Priority) String() string {
	if p == Backfill {
		return "backfill"
	}
	return "incremental"
}

// Adaptive spacing: a rate limit widens the spacing by half (once per
// widening: the answers to requests sent before it say nothing about the
// new spacing); each success then takes 1/32 of the distance back to the
// configured floor. Near the spacing Google last refused (within 10%), and
// for the first holdSuccesses successes after that refusal, it takes only
// 1/512: the writer settles just under a quota it cannot see instead of
// oscillating across it, and still returns to the floor once the quota
// has room again.
const (
	widenNum, widenDen = 3, 2
	decayDivisor       = 32
	slowDecayDivisor   = 512
	holdSuccesses      = 100
)

// PacerOptions configure a Pacer; zero values take the defaults of
// DESIGN.md §2.
type PacerOptions struct {
	// Concurrency is how many requests may be in flight at once (2).
	Concurrency int
	// Spacing is the least time between two request starts (250 ms). It
	// is the floor adaptive spacing never goes below.
	Spacing time.Duration
	// MaxSpacing bounds adaptive spacing (5 s).
	MaxSpacing time.Duration
	// BackfillShare is the share of the slots backfill may hold (0.75);
	// at least one.
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
// most Concurrency in flight, starts at least the current spacing apart
// (a token bucket of one token, golang.org/x/time/rate), incremental
// requests first.
type Pacer struct {
	clock         Clock
	floor, max    time.Duration
	slots         int
	backfillSlots int

	mu               sync.Mutex
	lim              *rate.Limiter
	spacing          time.Duration
	widenedAt        time.Time     // answers to requests started before it are stale
	refused          time.Duration // the spacing Google last rate-limited
	sinceRefused     int           // successes since then
	inFlight         int
	backfillInFlight int
	queue            [2][]*waiter
	timer            Timer
	timerAt          time.Time
	timerGen         uint64
}

type waiter struct {
	prio  Priority
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
	p := &Pacer{
		clock: o.Clock, floor: o.Spacing, max: o.MaxSpacing, slots: o.Concurrency,
		backfillSlots: max(1, int(math.Floor(float64(o.Concurrency)*o.BackfillShare+1e-9))),
		spacing:       o.Spacing,
	}
	p.lim = rate.NewLimiter(rate.Every(o.Spacing), 1)
	return p
}

// Acquire waits until a request of the given priority may start, or until
// ctx is done (returning its cause).
func (p *Pacer) Acquire(ctx context.Context, prio Priority) (*Slot, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if prio != Backfill {
		prio = Incremental
	}
	w := &waiter{prio: prio, ready: make(chan struct{})}
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
		p.kickLocked()
	})
}

// nextLocked is the waiter that may start next if the bucket allows, or nil
// when every eligible slot is taken.
func (p *Pacer) nextLocked() *waiter {
	if p.inFlight >= p.slots {
		return nil
	}
	if len(p.queue[Incremental]) > 0 {
		return p.queue[Incremental][0]
	}
	if len(p.queue[Backfill]) > 0 && p.backfillInFlight < p.backfillSlots {
		return p.queue[Backfill][0]
	}
	return nil
}

// kickLocked starts every waiter that may start now, and arms a timer for
// the next token when one is waiting for it.
func (p *Pacer) kickLocked() {
	for {
		w := p.nextLocked()
		if w == nil {
			p.disarmLocked()
			return
		}
		now := p.clock.Now()
		if tokens := p.lim.TokensAt(now); tokens < 1 {
			wait := time.Duration(math.Ceil((1 - tokens) / float64(p.lim.Limit()) * float64(time.Second)))
			p.armLocked(now, max(wait, 1))
			return
		}
		p.lim.AllowN(now, 1)
		p.queue[w.prio] = p.queue[w.prio][1:]
		p.inFlight++
		if w.prio == Backfill {
			p.backfillInFlight++
		}
		w.slot = &Slot{Start: now, p: p, prio: w.prio}
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

// RateLimited widens the spacing after Google rate-limited a request that
// started at start.
func (p *Pacer) RateLimited(start time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if start.Before(p.widenedAt) || p.spacing >= p.max {
		return
	}
	p.widenedAt = p.clock.Now()
	p.refused, p.sinceRefused = p.spacing, 0
	p.setLocked(min(p.max, p.spacing*widenNum/widenDen))
}

// Succeeded narrows the spacing back toward the floor after a request that
// started at start succeeded.
func (p *Pacer) Succeeded(start time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.spacing <= p.floor || start.Before(p.widenedAt) {
		return
	}
	p.sinceRefused++
	next := p.spacing - (p.spacing-p.floor)/decayDivisor
	if p.sinceRefused <= holdSuccesses && next < p.refused+p.refused/10 {
		next = p.spacing - (p.spacing-p.floor)/slowDecayDivisor
	}
	if next-p.floor < time.Millisecond {
		next = p.floor
	}
	p.setLocked(next)
}

// SetSpacing restores a learned spacing (from the store), kept within the
// floor and the maximum.
func (p *Pacer) SetSpacing(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(min(max(d, p.floor), p.max))
}

func (p *Pacer) setLocked(d time.Duration) {
	if d == p.spacing {
		return
	}
	now := p.clock.Now()
	p.spacing = d
	p.lim.SetLimitAt(now, rate.Every(d))
	// A timer armed for the old rate is early or late now: re-arm it.
	p.disarmLocked()
	p.kickLocked()
}

// PacerState is a snapshot of a pacer.
type PacerState struct {
	Spacing  time.Duration
	Floor    time.Duration
	InFlight int
	Waiting  int
}

// State returns the pacer's current spacing and load.
func (p *Pacer) State() PacerState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PacerState{Spacing: p.spacing, Floor: p.floor, InFlight: p.inFlight,
		Waiting: len(p.queue[Incremental]) + len(p.queue[Backfill])}
}
