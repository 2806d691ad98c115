package gcalwriter_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
)

var _ gcalwriter.AccountMemory = (*store.Store)(nil)

func TestWritesArePacedPerAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Google answers slower than the spacing, so the concurrency cap is
		// what binds half the time.
		h := newHarness(t, gcalfake.Options{Latency: 400 * time.Millisecond})
		w := h.writer("alice", gcalwriter.Options{Concurrency: 2, Spacing: 250 * time.Millisecond, BackfillThreshold: -1})
		p := newMem()
		// Two subscriptions of the same account write at once.
		var wg sync.WaitGroup
		for i, evs := range [][]int{{0, 40}, {40, 80}} {
			wg.Go(func() {
				all := events(80)
				res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: creates(all[evs[0]:evs[1]])}, p)
				if res.Created != 40 || res.Err != nil {
					t.Errorf("subscription %d: %+v", i, res)
				}
			})
		}
		wg.Wait()
		if st := h.fake.Stats(); st.MaxInFlight > 2 {
			t.Errorf("%d requests in flight at once, want at most 2", st.MaxInFlight)
		}
		reqs := h.recs["alice"].requests()
		for i := 1; i < len(reqs); i++ {
			if gap := reqs[i].at.Sub(reqs[i-1].at); gap < 250*time.Millisecond {
				t.Fatalf("requests %d and %d started %s apart, want at least 250ms", i-1, i, gap)
			}
		}
		if n := len(h.fake.Events(cal)); n != 80 {
			t.Errorf("%d events, want 80", n)
		}
	})
}

func TestRetryAfterIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One write every 5 s, answered 429 with Retry-After; our own backoff
		// would come back after about a second.
		h := newHarness(t, gcalfake.Options{Quota: gcalfake.Quota{Rate: 0.2, Burst: 1, Mode: gcalfake.RateLimit429, RetryAfter: true}})
		w := h.writer("alice", gcalwriter.Options{})
		evs := events(2)
		res := apply(t, w, newMem(), creates(evs)...)
		if res.Created != 2 || res.Retries == 0 || res.ByClass[calsyncd.ClassRateLimited] == 0 {
			t.Fatalf("result %+v", res)
		}
		writes := h.recs["alice"].writes()
		for i := 2; i < len(writes); i++ {
			// Each retry of the second insert came at least Retry-After (5 s
			// after the first success, rounded up to whole seconds) later.
			if gap := writes[i].at.Sub(writes[i-1].at); gap < 4*time.Second {
				t.Errorf("retry %d came %s after its refusal, before Retry-After", i-1, gap)
			}
		}
	})
}

// The seed's rules: at most max_attempts, at most max_retry_wait of waiting
// for a write, then it is deferred, and so is the rest of the batch —
// without calling Google.
func TestRetryBudgetThenDeferralAndBatchGate(t *testing.T) {
	for _, mode := range []gcalfake.LimitMode{gcalfake.RateLimit403, gcalfake.UserRateLimit403, gcalfake.RateLimit429} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, gcalfake.Options{Quota: gcalfake.Quota{Rate: 1e-6, Burst: 1, Mode: mode}})
				w := h.writer("alice", gcalwriter.Options{MaxAttempts: 5, MaxRetryWait: 15 * time.Second, Concurrency: 1})
				evs := events(10)
				res := apply(t, w, newMem(), creates(evs)...)
				if res.Err != nil || res.Created != 1 || res.Deferred != 9 || res.Failed != 0 {
					t.Fatalf("result %+v, want 1 created and 9 deferred, no error", res)
				}
				writes := h.recs["alice"].writes()
				// The first insert, then the second one's attempts.
				attempts := writes[1:]
				if len(attempts) < 2 || len(attempts) > 5 {
					t.Fatalf("%d attempts for the throttled write, want 2..5", len(attempts))
				}
				if waited := attempts[len(attempts)-1].at.Sub(attempts[0].at); waited > 15*time.Second {
					t.Errorf("the write waited %s in backoff, want at most 15s", waited)
				}
				if res.Waited > 15*time.Second || res.Retries != len(attempts)-1 {
					t.Errorf("Waited %s Retries %d for %d attempts", res.Waited, res.Retries, len(attempts))
				}
				// The batch gate: nothing after the throttled write reached Google.
				if n := h.fake.Stats().ByOp["insert"]; n != len(writes) {
					t.Errorf("Google saw %d inserts, we sent %d", n, len(writes))
				}
				if !strings.Contains(h.logs.String(), "deferred 9 writes") {
					t.Errorf("no \"deferred 9 writes\" log line:\n%s", h.logs)
				}
				st := w.State()
				if st.ThrottleClass != calsyncd.ClassRateLimited || st.ThrottleLevel != 1 || st.Spacing <= 250*time.Millisecond {
					t.Errorf("state %+v, want a rate-limit window and a widened spacing", st)
				}
				if res.ThrottleUntil != st.ThrottleUntil || res.ThrottleClass != calsyncd.ClassRateLimited {
					t.Errorf("Result.ThrottleUntil %s (%s), State %s", res.ThrottleUntil, res.ThrottleClass, st.ThrottleUntil)
				}
			})
		})
	}
}

func TestAccountWindowDefersAndClearsExactlyWhenItElapses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Quota: gcalfake.Quota{Rate: 1e-6, Burst: 1}})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		evs := events(12)
		apply(t, w, p, creates(evs[:4])...)
		until := w.State().ThrottleUntil
		if wait := time.Until(until); wait < 15*time.Second || wait > 30*time.Second {
			t.Fatalf("first rate-limit window closes in %s, want 15..30s", wait)
		}
		h.fake.SetQuota(gcalfake.Quota{}) // Google would take writes again...
		time.Sleep(time.Until(until) - time.Millisecond)
		before := len(h.recs["alice"].requests())
		res := apply(t, w, p, creates(evs[4:8])...)
		if res.Deferred != 4 || res.Created != 0 {
			t.Fatalf("inside the window: %+v, want everything deferred", res)
		}
		if n := len(h.recs["alice"].requests()) - before; n != 0 {
			t.Fatalf("%d requests inside the window, want none", n)
		}
		if !strings.Contains(h.logs.String(), "deferred 4 writes") {
			t.Errorf("no deferral log line")
		}
		time.Sleep(time.Millisecond) // ...and the window has just closed.
		res = apply(t, w, p, creates(evs[8:])...)
		if res.Created != 4 || res.Deferred != 0 {
			t.Fatalf("when the window closed: %+v", res)
		}
		if st := w.State(); st.ThrottleLevel != 0 || !st.ThrottleUntil.IsZero() {
			t.Errorf("a success did not reset the throttle memory: %+v", st)
		}
	})
}

func TestRepeatedThrottlingEscalatesTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Quota: gcalfake.Quota{Rate: 1e-6, Burst: 1}})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		evs := events(40)
		apply(t, w, p, creates(evs[:2])...)
		var last time.Duration
		for level := 1; level <= 7; level++ {
			st := w.State()
			if st.ThrottleLevel != level {
				t.Fatalf("level %d, want %d", st.ThrottleLevel, level)
			}
			window := time.Until(st.ThrottleUntil) + 15*time.Second // the retries before it opened
			if level > 1 && window < last {
				t.Errorf("level %d window %s shorter than level %d's %s", level, window, level-1, last)
			}
			if window > 15*time.Minute+15*time.Second {
				t.Errorf("level %d window %s above the 15 min cap", level, window)
			}
			last = window
			time.Sleep(time.Until(st.ThrottleUntil))
			apply(t, w, p, creates(evs[level*2:level*2+2])...)
		}
	})
}

func TestUsageLimitOpensAnHourWindowWithoutRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{UsageLimit: gcalfake.UsageLimit{Creates: 3, Window: time.Minute, Lockout: 3 * time.Hour}})
		w := h.writer("alice", gcalwriter.Options{Concurrency: 1})
		p := newMem()
		res := apply(t, w, p, creates(events(10))...)
		if res.Created != 3 || res.Deferred != 7 || res.Retries != 0 || res.ByClass[calsyncd.ClassUsageLimited] != 1 || res.Err != nil {
			t.Fatalf("result %+v", res)
		}
		st := w.State()
		if st.ThrottleClass != calsyncd.ClassUsageLimited || time.Until(st.ThrottleUntil) != time.Hour {
			t.Fatalf("state %+v, want an hour's usage-limit window", st)
		}
		if res.ThrottleClass != calsyncd.ClassUsageLimited || !res.ThrottleUntil.Equal(st.ThrottleUntil) {
			t.Errorf("the batch reports window %s (%s), want the account's %s (usage_limited)", res.ThrottleUntil, res.ThrottleClass, st.ThrottleUntil)
		}
		// Probing hourly: the next probe meets the lockout again, the window
		// doubles.
		time.Sleep(time.Hour)
		res = apply(t, w, p, creates(events(10))...)
		if res.Created != 0 || res.Deferred != 10 {
			t.Fatalf("second probe: %+v", res)
		}
		if res.ThrottleClass != calsyncd.ClassUsageLimited {
			t.Errorf("a batch deferred by the open window reports class %q, want usage_limited", res.ThrottleClass)
		}
		if st := w.State(); st.ThrottleLevel != 2 || time.Until(st.ThrottleUntil) < time.Hour {
			t.Fatalf("state %+v, want level 2 and at least an hour", st)
		}
		if n := h.fake.Stats().UsageLimited; n != 2 {
			t.Errorf("Google refused %d writes, want 2 (one per probe)", n)
		}
	})
}

func TestOneThrottledAccountNeverStallsAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Quota: gcalfake.Quota{Rate: 1e-6, Burst: 1}})
		alice := h.writer("alice", gcalwriter.Options{})
		bob := h.writer("bob", gcalwriter.Options{})
		evs := events(20)
		var wg sync.WaitGroup
		var aliceRes calsyncd.WriteResult
		wg.Go(func() { aliceRes = apply(t, alice, newMem(), creates(evs[:10])...) })
		// While alice backs off, bob's writes go at bob's own pace.
		begin := time.Now()
		bobRes := bob.Apply(context.Background(), diff.Batch{SubscriptionID: "bobs", CalendarID: cal, Ops: creates(evs[10:11])}, newMem())
		if bobRes.Created != 1 || time.Since(begin) > time.Second {
			t.Fatalf("bob: %+v after %s", bobRes, time.Since(begin))
		}
		wg.Wait()
		if aliceRes.Deferred == 0 {
			t.Fatalf("alice was not throttled: %+v", aliceRes)
		}
		// Inside alice's window bob still writes (his bucket refills slowly,
		// so one write).
		if st := alice.State(); st.ThrottleUntil.IsZero() {
			t.Fatal("alice has no window")
		}
		if st := bob.State(); !st.ThrottleUntil.IsZero() || st.Spacing != 250*time.Millisecond {
			t.Errorf("bob caught alice's throttling: %+v", st)
		}
		h.fake.SetQuota(gcalfake.Quota{})
		res := bob.Apply(context.Background(), diff.Batch{SubscriptionID: "bobs", CalendarID: cal, Ops: creates(evs[11:])}, newMem())
		if res.Created != 9 {
			t.Errorf("bob inside alice's window: %+v", res)
		}
	})
}

func TestThrottleMemorySurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st, err := store.Open(context.Background(), "sqlite", filepath.Join(dir, "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		h := newHarness(t, gcalfake.Options{Quota: gcalfake.Quota{Rate: 1e-6, Burst: 1}})
		first := h.writer("alice", gcalwriter.Options{Memory: st})
		p := newMem()
		evs := events(10)
		apply(t, first, p, creates(evs[:5])...)
		was := first.State()
		if was.ThrottleUntil.IsZero() || was.Spacing == was.SpacingFloor {
			t.Fatalf("no window or no learned spacing to remember: %+v", was)
		}
		saved, err := st.Account(context.Background(), "alice")
		if err != nil || !saved.ThrottleUntil.Equal(was.ThrottleUntil) || saved.ThrottleClass != "rate_limited" || saved.ThrottleLevel != 1 {
			t.Fatalf("stored %+v (%v), want the window %+v", saved, err, was)
		}

		// The daemon restarts: a new writer on the same store.
		time.Sleep(5 * time.Second)
		second := h.writer("alice", gcalwriter.Options{Memory: st})
		res := apply(t, second, p, creates(evs[5:])...)
		if res.Deferred != 5 || len(h.recs["alice"].requests()) != 0 {
			t.Fatalf("after the restart: %+v with %d requests, want everything deferred without asking Google",
				res, len(h.recs["alice"].requests()))
		}
		now := second.State()
		if !now.ThrottleUntil.Equal(was.ThrottleUntil) || now.Spacing != was.Spacing.Truncate(time.Millisecond) || now.ThrottleLevel != 1 {
			t.Errorf("restarted state %+v, want %+v", now, was)
		}
		// Other accounts start fresh.
		if a, _ := st.Account(context.Background(), "bob"); !a.ThrottleUntil.IsZero() {
			t.Errorf("bob has a window: %+v", a)
		}
	})
}
