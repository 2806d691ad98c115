package gcalwriter_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// The benchmarks converge a 2,000-event first sync against gcalfake under a
// per-user write quota, on virtual time (simClock), and report:
//
//   - writes/s: writes Google accepted per second of virtual time, from the
//     first run's start to convergence, waits for throttle windows included;
//   - frac_of_bound: that rate over the best possible one, min(quota,
//     pacing bound) for our writer (the pacing bound is one start per
//     spacing, 4/s at the default 250 ms), the quota for the naive one;
//   - rejected/req: requests the quota refused over all requests sent;
//   - runs: sync runs until the plan is empty (the next run starts as soon
//     as a throttle window lets it).
//
// The writer runs with gcalwriter.DefaultOptions (config's defaults).
// Google answers after benchLatency, less than the spacing, so the pacing
// bound holds with the one slot a backfill gets. Quota buckets hold 2 s (10/s) and 5 s
// (2/s) of writes.
//
// The naive writer is the seed's: five concurrent inserts, no pacing, no
// retries. Its runs follow each other at once (the seed's ran hourly), which
// flatters its writes/s: its runs and rejected/req tell its story.
//
// Run: go test ./internal/gcalwriter -run '^$' -bench Converge -benchtime 1x
const (
	benchEvents  = 2000
	benchLatency = 100 * time.Millisecond
	pacingBound  = 4.0 // starts per second at the default 250 ms spacing
)

type benchScenario struct {
	name  string
	quota gcalfake.Quota
	naive bool
	// The targets for our writer: at least minFrac of the bound,
	// at most maxRejected of the requests refused.
	minFrac, maxRejected float64
}

type convergence struct {
	runs      int
	converged bool
	elapsed   time.Duration
	accepted  int
	rejected  int
	requests  int
}

func BenchmarkConverge(b *testing.B) {
	quota10 := gcalfake.Quota{Rate: 10, Burst: 20, Mode: gcalfake.RateLimit403}
	quota2x403 := gcalfake.Quota{Rate: 2, Burst: 10, Mode: gcalfake.RateLimit403}
	quota2x429 := gcalfake.Quota{Rate: 2, Burst: 10, Mode: gcalfake.RateLimit429, RetryAfter: true}
	for _, sc := range []benchScenario{
		{name: "quota=10/s/ours", quota: quota10, minFrac: 0.95, maxRejected: 0.01},
		{name: "quota=10/s/naive", quota: quota10, naive: true},
		{name: "quota=2/s-403/ours", quota: quota2x403, minFrac: 0.85, maxRejected: 0.05},
		{name: "quota=2/s-403/naive", quota: quota2x403, naive: true},
		{name: "quota=2/s-429/ours", quota: quota2x429, minFrac: 0.85, maxRejected: 0.05},
		{name: "quota=2/s-429/naive", quota: quota2x429, naive: true},
	} {
		b.Run(sc.name, func(b *testing.B) {
			var c convergence
			for b.Loop() {
				clock := newSimClock(time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC))
				c = convergeUnderQuota(b, sc, benchEvents, clock)
				clock.Close()
			}
			if !c.converged {
				b.Errorf("not converged after %d runs", c.runs)
			}
			bound := sc.quota.Rate
			if !sc.naive {
				bound = min(bound, pacingBound)
			}
			rate := float64(c.accepted) / c.elapsed.Seconds()
			rejected := float64(c.rejected) / float64(c.requests)
			b.ReportMetric(rate, "writes/s")
			b.ReportMetric(rate/bound, "frac_of_bound")
			b.ReportMetric(rejected, "rejected/req")
			b.ReportMetric(float64(c.runs), "runs")
			b.ReportMetric(c.elapsed.Seconds(), "virtual_s")
			if !sc.naive && (rate/bound < sc.minFrac || rejected > sc.maxRejected) {
				b.Errorf("%.3f of the bound with %.2f%% rejected; the target is at least %.2f with at most %.0f%%",
					rate/bound, 100*rejected, sc.minFrac, 100*sc.maxRejected)
			}
		})
	}
}

// virtualTime is what a convergence waits on: simClock in benchmarks, the
// time package inside a synctest bubble.
type virtualTime interface {
	Now() time.Time
	Sleep(time.Duration)
}

// bubbleTime is the time package, fake inside a synctest bubble.
type bubbleTime struct{}

func (bubbleTime) Now() time.Time        { return time.Now() }
func (bubbleTime) Sleep(d time.Duration) { time.Sleep(d) }

// convergeUnderQuota writes a first sync of n events against a quota, run
// after run, the next one as soon as a throttle window lets it.
func convergeUnderQuota(tb testing.TB, sc benchScenario, n int, clock virtualTime) convergence {
	fake := gcalfake.New(gcalfake.Options{Seed: 7, Now: clock.Now, Sleep: clock.Sleep, Latency: benchLatency, Quota: sc.quota})
	fake.AddCalendar(cal, "UTC")
	var w applier
	if sc.naive {
		w = newNaive(tb, fake, "alice")
	} else {
		svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client("alice")))
		if err != nil {
			tb.Fatal(err)
		}
		o := gcalwriter.DefaultOptions()
		o.Account, o.Seed, o.Logger = "alice", 1, slog.New(slog.NewTextHandler(io.Discard, nil))
		if c, ok := clock.(gcalwriter.Clock); ok {
			o.Clock = c
		}
		w = gcalwriter.New(svc, o)
	}
	p := newMem()
	desired := events(n)
	start := clock.Now()
	var c convergence
	for c.runs < 500 {
		plan := diff.Compute(desired, p.mappings(), p.rejections())
		if plan.Writes() == 0 {
			c.converged = true
			break
		}
		res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: plan.Ops(), Backfill: c.runs == 0}, p)
		c.runs++
		if res.Err != nil {
			tb.Fatalf("run %d: %v", c.runs, res.Err)
		}
		if wait := res.ThrottleUntil.Sub(clock.Now()); wait > 0 {
			clock.Sleep(wait)
		}
	}
	c.elapsed = clock.Now().Sub(start)
	st := fake.Stats()
	c.accepted, c.rejected, c.requests = st.AcceptedWrites, st.Rejected(), st.Requests
	return c
}

// The benchmarks' clock must measure what synctest measures: the same
// convergence on both gives the same virtual time and the same refusals.
func TestSimClockAgreesWithSynctest(t *testing.T) {
	for _, sc := range []benchScenario{
		{name: "ours", quota: gcalfake.Quota{Rate: 2, Burst: 5, Mode: gcalfake.RateLimit429, RetryAfter: true}},
		{name: "naive", quota: gcalfake.Quota{Rate: 10, Burst: 20}, naive: true},
	} {
		t.Run(sc.name, func(t *testing.T) {
			var inBubble convergence
			synctest.Test(t, func(t *testing.T) {
				inBubble = convergeUnderQuota(t, sc, 200, bubbleTime{})
			})
			clock := newSimClock(time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC))
			defer clock.Close()
			simulated := convergeUnderQuota(t, sc, 200, clock)
			if !inBubble.converged || !simulated.converged {
				t.Fatalf("not converged: synctest %+v, simClock %+v", inBubble, simulated)
			}
			d := inBubble.elapsed - simulated.elapsed
			if d < -inBubble.elapsed/50 || d > inBubble.elapsed/50 || inBubble.runs != simulated.runs ||
				inBubble.accepted != simulated.accepted || abs(inBubble.rejected-simulated.rejected) > 2 {
				t.Errorf("synctest %+v\nsimClock %+v", inBubble, simulated)
			}
			t.Logf("synctest %+v\nsimClock %+v", inBubble, simulated)
		})
	}
}

func abs(n int) int { return max(n, -n) }
