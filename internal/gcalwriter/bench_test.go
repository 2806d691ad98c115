package gcalwriter_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
)

// BenchmarkConverge converges a first sync against gcalfake on virtual time
// (simClock), with the writer's defaults (gcalwriter.DefaultOptions, as
// config's) and the real SQLite store as its persister, over what the world
// varies:
//
//   - lat: Google's answer latency, 100 / 250 / 400 / 600 ms;
//   - quota: the account's write quota, 2 / 5 / 10 writes/s: a token bucket
//     of 5 s of writes at 2/s (refusing with 403 rateLimitExceeded, or with
//     429 and Retry-After), of one write (2/s-burst1: no slack at all), of
//     2 s at 5 and 10/s;
//   - feed: plain (2,000 single events) or overrides (overridesFeed, 1,000
//     events: 500 series, each with a moved or cancelled occurrence that
//     Google holds as an exception), the latter against a Google that derives instance ids
//     (gcalfake.InstanceIDsDerived: an override is one update) and one
//     whose ids are opaque (overrides-opaque: the overrides that need a
//     lookup share one paged listing of the calendar's instances, then
//     each is one update).
//
// Each reports:
//
//   - writes/s: writes Google accepted per second of virtual time, from the
//     first run's start to convergence, throttle windows included;
//   - frac_of_bound: that over the best possible rate, min(quota, pacing
//     bound), the pacing bound being one start per spacing (4/s at 250 ms);
//   - rejected/req: requests the quota refused over all requests sent;
//   - reads/write: requests that were not writes per accepted write;
//   - runs: sync runs until the plan is empty (the next run starts as soon
//     as a throttle window lets it).
//
// The goals: frac_of_bound ≥ 0.95 wherever the latency is at
// most 450 ms (two requests in flight hide it), ≤ 2% rejected.
//
// Run: go test ./internal/gcalwriter -run '^$' -bench 'Converge$' -benchtime 1x
func BenchmarkConverge(b *testing.B) {
	quotas := []struct {
		name  string
		quota gcalfake.Quota
	}{
		{"2/s", gcalfake.Quota{Rate: 2, Burst: 10, Mode: gcalfake.RateLimit403}},
		{"2/s-429", gcalfake.Quota{Rate: 2, Burst: 10, Mode: gcalfake.RateLimit429, RetryAfter: true}},
		{"2/s-burst1", gcalfake.Quota{Rate: 2, Burst: 1, Mode: gcalfake.RateLimit403}},
		{"5/s", gcalfake.Quota{Rate: 5, Burst: 10, Mode: gcalfake.RateLimit403}},
		{"10/s", gcalfake.Quota{Rate: 10, Burst: 20, Mode: gcalfake.RateLimit403}},
	}
	for _, latency := range []time.Duration{100, 250, 400, 600} {
		latency *= time.Millisecond
		for _, q := range quotas {
			for _, f := range benchFeeds {
				sc := benchScenario{latency: latency, quota: q.quota, feed: f}
				if latency <= 450*time.Millisecond {
					sc.minFrac, sc.maxRejected = 0.95, 0.02
				}
				b.Run(fmt.Sprintf("lat=%s/quota=%s/%s", latency, q.name, f.name), func(b *testing.B) {
					benchConverge(b, sc)
				})
			}
		}
	}
}

// BenchmarkConvergeNaive is the seed's writer (five concurrent inserts,
// no pacing, no retries) on the plain feed, for comparison: its runs
// follow each other at once (the seed's ran hourly), which flatters its
// writes/s; its runs and rejected/req tell its story.
//
// Run: go test ./internal/gcalwriter -run '^$' -bench ConvergeNaive -benchtime 1x
func BenchmarkConvergeNaive(b *testing.B) {
	for _, q := range []gcalfake.Quota{
		{Rate: 10, Burst: 20, Mode: gcalfake.RateLimit403},
		{Rate: 2, Burst: 10, Mode: gcalfake.RateLimit403},
	} {
		sc := benchScenario{latency: 100 * time.Millisecond, quota: q, feed: benchFeeds[0], naive: true}
		b.Run(fmt.Sprintf("quota=%g/s", q.Rate), func(b *testing.B) { benchConverge(b, sc) })
	}
}

func benchConverge(b *testing.B, sc benchScenario) {
	var c convergence
	for b.Loop() {
		clock := newSimClock(time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC))
		st := openBenchStore(b)
		c = convergeUnderQuota(b, sc, sc.feed.events(), clock, st)
		st.Close()
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
	b.ReportMetric(float64(c.requests-c.writes)/float64(c.accepted), "reads/write")
	b.ReportMetric(float64(c.runs), "runs")
	b.ReportMetric(c.elapsed.Seconds(), "virtual_s")
	b.ReportMetric(float64(c.exceptions), "exceptions")
	if c.converged && c.exceptions != sc.feed.exceptions {
		b.Errorf("Google holds %d exceptions, want %d", c.exceptions, sc.feed.exceptions)
	}
	if sc.minFrac > 0 && (rate/bound < sc.minFrac || rejected > sc.maxRejected) {
		b.Errorf("%.3f of the bound with %.2f%% rejected; the goal is at least %.2f with at most %.0f%%",
			rate/bound, 100*rejected, sc.minFrac, 100*sc.maxRejected)
	}
}

const pacingBound = 4.0 // starts per second at the default 250 ms spacing

// benchFeed is a feed a first sync converges to.
type benchFeed struct {
	name     string
	events   func() []feed.Event
	readings gcalfake.Readings
	// exceptions is how many instances Google must hold as exceptions
	// once converged.
	exceptions int
}

var benchFeeds = []benchFeed{
	{"plain", func() []feed.Event { return events(2000) }, gcalfake.Readings{}, 0},
	{"overrides", func() []feed.Event { return overridesFeed(1000) }, gcalfake.Readings{}, 500},
	{"overrides-opaque", func() []feed.Event { return overridesFeed(1000) }, gcalfake.Readings{InstanceIDs: gcalfake.InstanceIDsOpaque}, 500},
}

// overridesFeed is n events: n/2 weekly series in Europe/Berlin (20
// occurrences, one excluded), each with one override of a real occurrence
// (its sixth), moved two hours or, every fourth, cancelled: every override
// is an exception Google must hold (the worst case where instance ids are
// opaque: no two overrides share a series). feedgen's recurrence shape,
// which the parser benchmark reads, puts most of its overrides off their
// series' rules, where they become single events.
func overridesFeed(n int) []feed.Event {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd//bench//EN\r\n")
	base := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	const wall = "20060102T150405"
	for i := 0; i < n/2; i++ {
		start := base.AddDate(0, 0, i%365).Add(time.Duration(i%10) * time.Hour)
		uid := fmt.Sprintf("series-%d@bench.calsyncd.example", i)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%s\r\nDTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\n"+
			"RRULE:FREQ=WEEKLY;COUNT=20\r\nEXDATE;TZID=Europe/Berlin:%s\r\nSUMMARY:Series %d\r\nEND:VEVENT\r\n",
			uid, start.Format(wall), start.Add(time.Hour).Format(wall), start.AddDate(0, 0, 14).Format(wall), i)
		orig := start.AddDate(0, 0, 35)
		status := ""
		if i%4 == 0 {
			status = "STATUS:CANCELLED\r\n"
		}
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%s\r\nRECURRENCE-ID;TZID=Europe/Berlin:%s\r\nDTSTART;TZID=Europe/Berlin:%s\r\n"+
			"DTEND;TZID=Europe/Berlin:%s\r\n%sSUMMARY:Series %d (moved)\r\nEND:VEVENT\r\n",
			uid, orig.Format(wall), orig.Add(2*time.Hour).Format(wall), orig.Add(3*time.Hour).Format(wall), status, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	c, err := feed.ParseBytes([]byte(b.String()), feed.Options{})
	if err != nil {
		panic(err)
	}
	return c.Events
}

type benchScenario struct {
	latency time.Duration
	quota   gcalfake.Quota
	feed    benchFeed
	naive   bool
	// The goals for our writer: at least minFrac of the bound, at most
	// maxRejected of the requests refused (0: none).
	minFrac, maxRejected float64
}

type convergence struct {
	runs      int
	converged bool
	elapsed   time.Duration
	accepted  int // writes Google accepted
	writes    int // write requests sent
	rejected  int
	requests  int
	// exceptions are the instances Google holds as exceptions at the end.
	exceptions int
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

// benchState is where a convergence keeps its mappings: the SQLite store
// or memory.
type benchState interface {
	calsyncd.Persister
	flush() error
	mappings() []calsyncd.Mapping
	rejections() []calsyncd.Rejection
}

// convergeUnderQuota writes a first sync of desired against a quota, run
// after run as a pass would (shape, plan, apply), the next run as soon as
// a throttle window lets it.
func convergeUnderQuota(tb testing.TB, sc benchScenario, desired []feed.Event, clock virtualTime, st benchState) convergence {
	fake := gcalfake.New(gcalfake.Options{Seed: 7, Now: clock.Now, Sleep: clock.Sleep, Latency: sc.latency, Quota: sc.quota,
		Readings: sc.feed.readings})
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
	start := clock.Now()
	var c convergence
	for c.runs < 500 {
		shaped := diff.Shape(desired, diff.ShapeOptions{From: start.AddDate(-2, 0, 0), To: start.AddDate(2, 0, 0),
			Unsupported: gcalwriter.UnsupportedRecurrence, Rejected: st.rejections()})
		plan := diff.Compute(shaped.Events, st.mappings(), st.rejections())
		if plan.Writes() == 0 {
			c.converged = true
			break
		}
		res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: plan.Ops(), Backfill: c.runs == 0}, st)
		c.runs++
		if err := st.flush(); err != nil {
			tb.Fatalf("run %d: %v", c.runs, err)
		}
		if res.Err != nil {
			tb.Fatalf("run %d: %v", c.runs, res.Err)
		}
		if wait := res.ThrottleUntil.Sub(clock.Now()); wait > 0 {
			clock.Sleep(wait)
		}
	}
	c.elapsed = clock.Now().Sub(start)
	s := fake.Stats()
	c.accepted, c.rejected, c.requests = s.AcceptedWrites, s.Rejected(), s.Requests
	c.writes = s.ByOp["insert"] + s.ByOp["update"] + s.ByOp["patch"] + s.ByOp["delete"]
	for _, ev := range fake.AllEvents(cal) {
		if ev.RecurringEventId != "" {
			c.exceptions++
		}
	}
	return c
}

// storeState persists into the real SQLite store, as a pass does.
type storeState struct {
	st *store.Store
}

func openBenchStore(tb testing.TB) *storeState {
	tb.Helper()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(tb.TempDir(), "calsyncd.db"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.EnsureSubscription(context.Background(), sub, cal, "alice"); err != nil {
		tb.Fatal(err)
	}
	return &storeState{st: st}
}

func (s *storeState) Close() { s.st.Close() }

// Saved, Deleted and Rejected queue for the store's group commit, as the
// pass's persister does; the convergence flushes after each batch.
func (s *storeState) Saved(_ context.Context, m calsyncd.Mapping) error {
	return s.st.Queue(sub, calsyncd.MappingSaved(m))
}

func (s *storeState) Deleted(_ context.Context, k calsyncd.Key) error {
	return s.st.Queue(sub, calsyncd.MappingDeleted(k))
}

func (s *storeState) Rejected(_ context.Context, r calsyncd.Rejection) error {
	return s.st.Queue(sub, calsyncd.RejectionSaved(r))
}

func (s *storeState) flush() error { return s.st.Flush(context.Background(), sub) }

func (s *storeState) mappings() []calsyncd.Mapping {
	ms, err := s.st.Mappings(context.Background(), sub)
	if err != nil {
		panic(err)
	}
	return ms
}

func (s *storeState) rejections() []calsyncd.Rejection {
	rs, err := s.st.Rejections(context.Background(), sub)
	if err != nil {
		panic(err)
	}
	return rs
}

// The benchmarks' clock must measure what synctest measures: the same
// convergence on both gives the same virtual time and the same refusals.
func TestSimClockAgreesWithSynctest(t *testing.T) {
	for name, sc := range map[string]benchScenario{
		"ours":  {latency: 100 * time.Millisecond, quota: gcalfake.Quota{Rate: 2, Burst: 5, Mode: gcalfake.RateLimit429, RetryAfter: true}},
		"naive": {latency: 100 * time.Millisecond, quota: gcalfake.Quota{Rate: 10, Burst: 20}, naive: true},
	} {
		t.Run(name, func(t *testing.T) {
			var inBubble convergence
			synctest.Test(t, func(t *testing.T) {
				inBubble = convergeUnderQuota(t, sc, events(200), bubbleTime{}, newMem())
			})
			clock := newSimClock(time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC))
			defer clock.Close()
			simulated := convergeUnderQuota(t, sc, events(200), clock, newMem())
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
