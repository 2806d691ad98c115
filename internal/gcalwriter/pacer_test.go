package gcalwriter_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// hold acquires a slot, keeps it for d (a request in flight) and records
// when it started.
type flightLog struct {
	mu       sync.Mutex
	starts   []time.Time
	inFlight int
	maxIn    int
}

func (l *flightLog) fly(t *testing.T, p *gcalwriter.Pacer, prio gcalwriter.Priority, d time.Duration) time.Time {
	t.Helper()
	// A starved waiter fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	slot, err := p.Acquire(ctx, prio)
	if err != nil {
		t.Error(err)
		return time.Time{}
	}
	l.mu.Lock()
	l.starts = append(l.starts, time.Now())
	l.inFlight++
	l.maxIn = max(l.maxIn, l.inFlight)
	l.mu.Unlock()
	time.Sleep(d)
	l.mu.Lock()
	l.inFlight--
	l.mu.Unlock()
	slot.Release()
	return slot.Start
}

func (l *flightLog) minGap() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	gap := time.Duration(1 << 62)
	for i := 1; i < len(l.starts); i++ {
		gap = min(gap, l.starts[i].Sub(l.starts[i-1]))
	}
	return gap
}

func TestPacerBoundsInFlightAndSpacesStarts(t *testing.T) {
	for _, latency := range []time.Duration{0, 100 * time.Millisecond, 700 * time.Millisecond, 3 * time.Second} {
		t.Run(latency.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := gcalwriter.NewPacer(gcalwriter.PacerOptions{Concurrency: 2, Spacing: 250 * time.Millisecond})
				var l flightLog
				var wg sync.WaitGroup
				begin := time.Now()
				for range 20 {
					wg.Go(func() { l.fly(t, p, gcalwriter.Incremental, latency) })
				}
				wg.Wait()
				if l.maxIn > 2 {
					t.Errorf("%d requests in flight, want at most 2", l.maxIn)
				}
				if g := l.minGap(); g < 250*time.Millisecond {
					t.Errorf("starts %s apart, want at least 250ms", g)
				}
				// And it is not slower than it must be: 20 starts need 19
				// spacings, or 10 rounds of two requests when latency binds.
				bound := max(19*250*time.Millisecond, 9*latency+250*time.Millisecond)
				if took := time.Since(begin) - latency; took > bound {
					t.Errorf("20 requests took %s, want at most %s", took, bound)
				}
			})
		})
	}
}

func TestPacerPutsIncrementalBeforeBackfill(t *testing.T) {
	const spacing = 250 * time.Millisecond
	tests := []struct {
		name        string
		share       float64
		latency     time.Duration
		maxBackfill int
		maxWait     time.Duration
	}{
		// A backfill borrows the slot no incremental write is waiting for
		// (two in flight hide the latency), and an incremental write
		// arriving still starts at the next start time.
		{"share 0.75, 400ms", 0.75, 400 * time.Millisecond, 2, spacing},
		{"share 0.75, 100ms", 0.75, 100 * time.Millisecond, 1, spacing},
		// When answers take longer than two spacings, the backfill borrows
		// the slot only in the spacing before another is freed.
		{"share 0.75, 700ms", 0.75, 700 * time.Millisecond, 2, spacing},
		// Even when a backfill may hold every slot, an incremental write
		// gets the next one freed.
		{"share 1, 700ms", 1, 700 * time.Millisecond, 2, 700*time.Millisecond + spacing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := gcalwriter.NewPacer(gcalwriter.PacerOptions{Concurrency: 2, Spacing: spacing, BackfillShare: tt.share})
				var l flightLog
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				// A large first sync keeps the pacer busy...
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for ctx.Err() == nil {
							l.fly(t, p, gcalwriter.Backfill, tt.latency)
						}
					})
				}
				time.Sleep(10 * time.Second)
				l.mu.Lock()
				maxBackfill, backfills := l.maxIn, len(l.starts)
				l.mu.Unlock()
				if maxBackfill != tt.maxBackfill {
					t.Errorf("backfill held %d of 2 slots, want %d", maxBackfill, tt.maxBackfill)
				}
				// Work-conserving: the backfill starts as often as the
				// spacing and two slots allow.
				if bound := int(min(10*time.Second/spacing, 2*10*time.Second/tt.latency)); tt.share < 1 && tt.latency < 2*spacing && backfills < bound-2 {
					t.Errorf("backfill started %d requests in 10s, want about %d", backfills, bound)
				}
				// ...and an hourly change of another subscription arrives,
				// at every phase of the backfill's requests.
				for i := range 12 {
					time.Sleep(time.Duration(i) * 37 * time.Millisecond)
					asked := time.Now()
					start := l.fly(t, p, gcalwriter.Incremental, tt.latency)
					if wait := start.Sub(asked); wait > tt.maxWait {
						t.Errorf("incremental write %d waited %s behind the backfill, want at most %s", i, wait, tt.maxWait)
					}
				}
				stop()
				wg.Wait()
			})
		})
	}
}

// Until an answer says how long requests take, a backfill holds its share
// of the slots, and beyond it only slots that leave one free.
func TestPacerBackfillShareOfSlots(t *testing.T) {
	tests := []struct {
		concurrency int
		share       float64
		want        int
	}{
		{2, 0.75, 1}, {4, 0.75, 3}, {4, 0.5, 3}, {4, 0.25, 3}, {1, 0.75, 1}, {3, 1, 3},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			p := gcalwriter.NewPacer(gcalwriter.PacerOptions{Concurrency: tt.concurrency, Spacing: time.Millisecond, BackfillShare: tt.share})
			var wg sync.WaitGroup
			var l flightLog
			for range 12 {
				wg.Go(func() { l.fly(t, p, gcalwriter.Backfill, time.Second) })
			}
			time.Sleep(500 * time.Millisecond)
			if got := p.State().InFlight; got != tt.want {
				t.Errorf("concurrency %d share %v: backfill held %d slots, want %d", tt.concurrency, tt.share, got, tt.want)
			}
			wg.Wait()
		})
	}
}

func TestPacerAdaptsSpacingWithinBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const floor, ceiling = 250 * time.Millisecond, 2 * time.Second
		p := gcalwriter.NewPacer(gcalwriter.PacerOptions{Spacing: floor, MaxSpacing: ceiling})
		spacing := func() time.Duration { return p.State().Spacing }
		sent := time.Now()
		time.Sleep(time.Millisecond)
		p.RateLimited(sent)
		// The first refusal, with nothing learnt: 30% slower, in whole
		// milliseconds (as the store keeps it), rounded up.
		first := 358 * time.Millisecond // 1s / 2.8 = 357.14 ms
		if got, want := spacing(), first; got != want {
			t.Fatalf("after a rate limit spacing = %s, want %s", got, want)
		}
		// Answers to requests sent before the cut say nothing new.
		p.RateLimited(sent)
		p.Succeeded(sent)
		if got := spacing(); got != first {
			t.Fatalf("a stale answer moved the spacing to %s", got)
		}
		time.Sleep(time.Millisecond)
		for range 20 {
			p.RateLimited(time.Now())
			time.Sleep(time.Millisecond)
		}
		if got := spacing(); got != ceiling {
			t.Fatalf("spacing = %s after many rate limits, want the maximum %s", got, ceiling)
		}
		// Accepted writes and no refusal: probes climb back to the floor,
		// never leaving the bounds.
		prev := spacing()
		for i := range 1000 {
			slot, err := p.Acquire(context.Background(), gcalwriter.Backfill)
			if err != nil {
				t.Fatal(err)
			}
			p.Succeeded(slot.Start)
			slot.Release()
			got := spacing()
			if got > prev || got < floor {
				t.Fatalf("success %d: spacing %s after %s (floor %s)", i, got, prev, floor)
			}
			prev = got
		}
		if prev != floor {
			t.Fatalf("spacing = %s after 1000 successes, want back at the floor %s", prev, floor)
		}
		p.SetSpacing(time.Millisecond)
		if got := spacing(); got != floor {
			t.Errorf("SetSpacing below the floor gave %s", got)
		}
		p.SetSpacing(time.Hour)
		if got := spacing(); got != ceiling {
			t.Errorf("SetSpacing above the maximum gave %s", got)
		}
	})
}

func TestPacerWidenedSpacingSpacesStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := gcalwriter.NewPacer(gcalwriter.PacerOptions{Spacing: 250 * time.Millisecond, MaxSpacing: 5 * time.Second})
		p.SetSpacing(time.Second)
		// A restored spacing follows a pause, which refilled the quota's
		// bucket: the writes go at the floor until Google refuses one.
		var burst flightLog
		burst.fly(t, p, gcalwriter.Incremental, 0)
		refused := burst.fly(t, p, gcalwriter.Incremental, 0)
		if g := burst.minGap(); g != 250*time.Millisecond {
			t.Errorf("after a restore, starts %s apart, want the floor's 250ms", g)
		}
		p.RateLimited(refused)
		var l flightLog
		for range 5 {
			l.fly(t, p, gcalwriter.Incremental, 0)
		}
		if g := l.minGap(); g < time.Second {
			t.Errorf("starts %s apart at a learned spacing of 1s", g)
		}
	})
}

func TestPacerAcquireGivesUpWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := gcalwriter.NewPacer(gcalwriter.PacerOptions{Concurrency: 1, Spacing: time.Second})
		held, err := p.Acquire(context.Background(), gcalwriter.Incremental)
		if err != nil {
			t.Fatal(err)
		}
		cause := errors.New("batch deferred")
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error)
		go func() {
			_, err := p.Acquire(ctx, gcalwriter.Incremental)
			done <- err
		}()
		synctest.Wait()
		if st := p.State(); st.Waiting != 1 || st.InFlight != 1 {
			t.Fatalf("state %+v, want 1 waiting and 1 in flight", st)
		}
		cancel(cause)
		if err := <-done; !errors.Is(err, cause) {
			t.Fatalf("Acquire = %v, want the context's cause", err)
		}
		held.Release()
		held.Release() // twice is harmless
		if st := p.State(); st.Waiting != 0 || st.InFlight != 0 {
			t.Fatalf("state %+v after release, want idle", st)
		}
		if _, err := p.Acquire(context.Background(), gcalwriter.Incremental); err != nil {
			t.Fatal(err)
		}
	})
}

// A quota below the pacing, simulated request by request (one request in
// flight, answered at once; a refused write is not sent again): whatever
// the quota's rate, its bucket and its changes, the writes reach at least
// 0.94 of what the quota could accept with at most 1.2% refused, and the
// spacing settles near the quota's rate (a probe may be above it).
func TestPacerSettlesUnderAQuota(t *testing.T) {
	tests := []struct {
		name        string
		rate, burst float64
		// from halfway on, the quota's rate is then (0: unchanged)
		then float64
	}{
		{"one write per 300ms", 1 / 0.3, 1, 0},
		{"one write per 500ms", 2, 1, 0},
		{"one write per 2s", 0.5, 1, 0},
		{"2/s holding 5s", 2, 10, 0},
		{"2/s holding a minute", 2, 120, 0},
		{"3/s halving", 3, 10, 1.5},
		{"1.5/s doubling", 1.5, 10, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := gcalwriter.NewPacer(gcalwriter.PacerOptions{})
				const writes = 3000
				rate := tt.rate
				tokens, capacity := tt.burst, tt.burst
				last := time.Now()
				refused, sent := 0, 0
				begin := time.Now()
				for sent < writes {
					if tt.then > 0 && sent == writes/2 {
						rate = tt.then
					}
					slot, err := p.Acquire(context.Background(), gcalwriter.Backfill)
					if err != nil {
						t.Fatal(err)
					}
					sent++
					now := time.Now()
					tokens = min(tt.burst, tokens+now.Sub(last).Seconds()*rate)
					capacity += now.Sub(last).Seconds() * rate
					last = now
					if tokens < 1 {
						refused++
						p.RateLimited(slot.Start)
					} else {
						tokens--
						p.Succeeded(slot.Start)
					}
					slot.Release()
				}
				capacity = min(capacity, 4*time.Since(begin).Seconds())
				efficiency := float64(sent-refused) / capacity
				if efficiency < quotaGoalEfficiency || float64(refused) > quotaGoalRejected*float64(sent) {
					t.Errorf("%d of %d refused, %.3f of what the quota could take; want at most %.0f%% and at least %.2f", refused, sent, efficiency,
						100*quotaGoalRejected, quotaGoalEfficiency)
				}
				if got, want := float64(time.Second)/float64(p.State().Spacing), rate; got > 1.15*want || got < 0.9*want {
					t.Errorf("spacing settled at %s (%.3f/s) for a quota of %.3f/s", p.State().Spacing, got, want)
				}
				t.Logf("%d of %d refused, %.3f of what the quota could take, spacing %s", refused, sent, efficiency, p.State().Spacing)
			})
		})
	}
}
