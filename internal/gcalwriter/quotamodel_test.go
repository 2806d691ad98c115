package gcalwriter_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// modelQuota is a token bucket as the emulator keeps one, checked at each
// request's arrival; it can change rate mid-run.
type modelQuota struct {
	mu              sync.Mutex
	rate, burst     float64
	tokens          float64
	last            time.Time
	then            float64
	changeAt        time.Time
	requests, refus int
	accepted        int
}

func (q *modelQuota) admit(now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.then > 0 && !now.Before(q.changeAt) && q.rate != q.then {
		q.tokens = min(q.burst, q.tokens+q.changeAt.Sub(q.last).Seconds()*q.rate)
		q.last = q.changeAt
		q.rate = q.then
	}
	q.tokens = min(q.burst, q.tokens+now.Sub(q.last).Seconds()*q.rate)
	q.last = now
	q.requests++
	if q.rate > 0 && q.tokens < 1 {
		q.refus++
		return false
	}
	q.tokens--
	q.accepted++
	return true
}

type quotaModelCase struct {
	name        string
	rate, burst float64
	then        float64
	changeAt    time.Duration
	latency     time.Duration
	workers     int
}

type quotaModelResult struct {
	efficiency, rejected float64
	spacing              time.Duration
}

// runQuotaModel writes as the writer does (workers sending through one
// pacer, a refused write sent again after a backoff), a first run of 2000
// writes then 8 of 250, each by a new pacer restored from the spacing the
// last left, 10 minutes apart.
func runQuotaModel(t *testing.T, tc quotaModelCase, bound float64) quotaModelResult {
	trace := os.Getenv("QMODEL_TRACE") != ""
	var res quotaModelResult
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		q := &modelQuota{rate: tc.rate, burst: tc.burst, tokens: tc.burst, last: begin, then: tc.then, changeAt: begin.Add(tc.changeAt)}
		rng := rand.New(rand.NewPCG(1, 2))
		var rngMu sync.Mutex
		var spacing time.Duration
		capacity := 0.0
		active := time.Duration(0)
		for run := range 9 {
			if run > 0 {
				time.Sleep(10 * time.Minute)
			}
			n := 250
			if run == 0 {
				n = 2000
			}
			p := gcalwriter.NewPacer(gcalwriter.PacerOptions{})
			if spacing > 0 {
				p.SetSpacing(spacing)
			}
			var left = n
			var mu sync.Mutex
			take := func() bool {
				mu.Lock()
				defer mu.Unlock()
				if left == 0 {
					return false
				}
				left--
				return true
			}
			start := time.Now()
			var wg sync.WaitGroup
			for range max(tc.workers, 2) {
				wg.Go(func() {
					for take() {
						for attempt := 1; ; attempt++ {
							slot, err := p.Acquire(context.Background(), gcalwriter.Backfill)
							if err != nil {
								t.Error(err)
								return
							}
							time.Sleep(tc.latency)
							ok := q.admit(time.Now())
							slot.Release()
							if trace {
								t.Logf("run %d t=%7.2f ok=%v spacing=%s", run, time.Since(begin).Seconds(), ok, p.State().Spacing)
							}
							if ok {
								p.Succeeded(slot.Start)
								break
							}
							p.RateLimited(slot.Start)
							rngMu.Lock()
							j := rng.Float64()
							rngMu.Unlock()
							time.Sleep(gcalwriter.Backoff(time.Second, 30*time.Second, attempt, j, 0))
						}
					}
				})
			}
			wg.Wait()
			end := time.Now()
			capacity += fluid(tc, bound, start.Sub(begin), end.Sub(begin))
			active += end.Sub(start)
			spacing = p.State().Spacing.Truncate(time.Millisecond)
		}
		res = quotaModelResult{efficiency: float64(q.accepted) / capacity, rejected: float64(q.refus) / float64(q.requests), spacing: spacing}
		if tc.rate == 0 {
			res.efficiency = float64(q.accepted) / active.Seconds()
		}
	})
	return res
}

func fluid(tc quotaModelCase, bound float64, begin, end time.Duration) float64 {
	const dt = 10 * time.Millisecond
	r := tc.rate
	tokens := tc.burst
	acc := 0.0
	for t := begin; t < end; t += dt {
		if tc.then > 0 && t >= tc.changeAt {
			r = tc.then
		}
		step := min(dt, end-t).Seconds()
		tokens = math.Min(tc.burst, tokens+r*step)
		take := math.Min(tokens, bound*step)
		tokens -= take
		acc += take
	}
	return acc
}

// TestPacerUnderQuotaShapes is BenchmarkQuota's scenarios, in seconds:
// the pacer alone under a token bucket checked at each request's arrival
// (a constant latency after its start), two workers writing through it, a
// refused write sent again after its backoff, a first run of 2,000 writes
// then eight of 250 by pacers restored from the spacing the last left.
// Efficiency is over the fluid writer's, as BenchmarkQuota counts it.
func TestPacerUnderQuotaShapes(t *testing.T) {
	shapes := []quotaModelCase{
		{name: "2/s-burst10", rate: 2, burst: 10},
		{name: "per-second-2", rate: 2, burst: 2},
		{name: "2/s-burst1", rate: 2, burst: 1},
		{name: "per-minute-120", rate: 2, burst: 120},
		{name: "drop", rate: 3, burst: 10, then: 1.5, changeAt: 300 * time.Second},
		{name: "rise", rate: 1.5, burst: 10, then: 3, changeAt: 300 * time.Second},
		{name: "two", rate: 2, burst: 10, workers: 4},
	}
	worstE, worstR := 1.0, 0.0
	for _, s := range shapes {
		for _, lat := range []time.Duration{50, 100, 250, 400, 600} {
			tc := s
			tc.latency = lat * time.Millisecond
			t.Run(fmt.Sprintf("%s/%s", tc.name, tc.latency), func(t *testing.T) {
				free := tc
				free.rate, free.then = 0, 0
				r := runQuotaModel(t, tc, runQuotaModel(t, free, 1).efficiency)
				worstE, worstR = min(worstE, r.efficiency), max(worstR, r.rejected)
				if r.efficiency < quotaGoalEfficiency || r.rejected > quotaGoalRejected {
					t.Errorf("%.4f of what the quota could take, %.2f%% of requests refused; want at least %.2f and at most %.0f%%",
						r.efficiency, 100*r.rejected, quotaGoalEfficiency, 100*quotaGoalRejected)
				}
				t.Logf("%.4f of what the quota could take, %.2f%% refused, spacing %s", r.efficiency, 100*r.rejected, r.spacing)
			})
		}
	}
	t.Logf("worst: %.4f of what the quota could take, %.2f%% refused", worstE, 100*worstR)
}
