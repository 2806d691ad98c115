package gcalwriter_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// applier is our writer or the naive one.
type applier interface {
	Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult
}

// converge runs sync after sync as the scheduler would: plan the feed
// against what the persister saved (internal/diff), write the plan, wait
// for the next run. It returns the results of the runs that had writes;
// the calendar has converged when the next plan is empty.
func converge(t testing.TB, w applier, p *memPersister, desired []feed.Event, maxRuns int, wait func(calsyncd.WriteResult)) []calsyncd.WriteResult {
	t.Helper()
	var results []calsyncd.WriteResult
	for range maxRuns {
		plan := diff.Compute(desired, p.mappings(), p.rejections())
		if plan.Writes() == 0 {
			return results
		}
		res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: plan.Ops(), Backfill: len(results) == 0}, p)
		checkAccounted(t, res, plan.Writes())
		results = append(results, res)
		wait(res)
	}
	if plan := diff.Compute(desired, p.mappings(), p.rejections()); plan.Writes() > 0 {
		t.Errorf("not converged after %d runs: %d writes left", maxRuns, plan.Writes())
	}
	return results
}

// hourly waits for the next scheduled run (in a synctest bubble).
func hourly(calsyncd.WriteResult) { time.Sleep(time.Hour) }

// naiveWriter is the seed's gcal_writer: up to five concurrent inserts, no
// pacing, no retries. It only creates.
type naiveWriter struct {
	svc         *calendar.Service
	concurrency int
	mu          sync.Mutex
	rejected    int
}

func newNaive(t testing.TB, fake *gcalfake.Server, user string) *naiveWriter {
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client(user)))
	if err != nil {
		t.Fatal(err)
	}
	return &naiveWriter{svc: svc, concurrency: 5}
}

func (n *naiveWriter) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	var (
		res calsyncd.WriteResult
		mu  sync.Mutex
		wg  sync.WaitGroup
	)
	work := make(chan diff.Op)
	for range n.concurrency {
		wg.Go(func() {
			for op := range work {
				id := mapping.EventID("", b.SubscriptionID, op.Key, 0)
				ev := gcalwriter.ToGoogle("", b.SubscriptionID, op.Event)
				ev.Id = id
				got, err := n.svc.Events.Insert(b.CalendarID, ev).SendUpdates("none").Context(ctx).Do()
				var gerr *googleapi.Error
				mu.Lock()
				switch {
				case err == nil:
					res.Created++
					_ = p.Saved(ctx, calsyncd.Mapping{Key: op.Key, EventID: id, Hash: op.Event.Hash, ETag: got.Etag})
				case errors.As(err, &gerr) && gerr.Code == 409:
					// Created by an earlier run whose mapping was lost.
					res.Created++
					_ = p.Saved(ctx, calsyncd.Mapping{Key: op.Key, EventID: id, Hash: op.Event.Hash})
				default:
					res.Failed++
					if gcalwriter.ClassifyAt(err, time.Now()).Class == calsyncd.ClassRateLimited {
						n.rejected++
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, op := range b.Ops {
		work <- op
	}
	close(work)
	wg.Wait()
	return res
}

// The seed's production incident: a large first sync of 142 events into a
// calendar whose write quota let an unpaced five-way writer through with
// only 65 of them: 77 rejected.
var incidentQuota = gcalfake.Quota{Rate: 0.5, Burst: 64, PerCalendar: true, Mode: gcalfake.RateLimit403}

const incidentLatency = 100 * time.Millisecond

func TestSeedIncidentNaiveBaseline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Latency: incidentLatency, Quota: incidentQuota})
		naive := newNaive(t, h.fake, "alice")
		res := naive.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: creates(events(142))}, newMem())
		if naive.rejected != 77 || res.Created != 65 {
			t.Fatalf("naive writer: %d created, %d rejected; the seed saw 65 and 77", res.Created, naive.rejected)
		}
	})
}

func TestSeedIncidentReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Latency: incidentLatency, Quota: incidentQuota})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		desired := events(142)
		results := converge(t, w, p, desired, 5, hourly)
		for i, res := range results {
			if res.Err != nil || res.Failed != 0 || res.Rejected != 0 || res.Skipped != 0 {
				t.Errorf("run %d: %+v", i+1, res)
			}
			t.Logf("run %d: created %d deferred %d retries %d waited %s, rate-limited %d times",
				i+1, res.Created, res.Deferred, res.Retries, res.Waited, res.ByClass[calsyncd.ClassRateLimited])
		}
		if len(results) > 3 {
			t.Errorf("converged in %d runs, want at most 3", len(results))
		}
		checkMirrors(t, h.fake, desired)
		st := h.fake.Stats()
		t.Logf("Google refused %d of %d writes (%.1f%%)", st.RateLimited, st.AcceptedWrites+st.RateLimited,
			100*float64(st.RateLimited)/float64(st.AcceptedWrites+st.RateLimited))
	})
}

// checkMirrors asserts the calendar shows exactly the desired events, once
// each, and that no id beyond the first generation was ever used.
func checkMirrors(t *testing.T, fake *gcalfake.Server, desired []feed.Event) {
	t.Helper()
	want := map[string]string{}
	for i := range desired {
		want[mapping.EventID("", sub, desired[i].Key(), 0)] = desired[i].Summary
	}
	live := fake.Events(cal)
	if len(live) != len(desired) {
		t.Errorf("%d live events, want %d", len(live), len(desired))
	}
	seen := map[string]bool{}
	for _, ev := range live {
		if seen[ev.Id] {
			t.Errorf("event %s twice", ev.Id)
		}
		seen[ev.Id] = true
		if s, ok := want[ev.Id]; !ok || s != ev.Summary {
			t.Errorf("unexpected event %s", gcalfake.String(ev))
		}
	}
}

// Lost responses (the write happened, the answer did not arrive) and 5xx
// answers, at random: whatever happens, no event is ever duplicated, and
// the calendar converges to the feed.
func TestLostResponsesAndServerErrorsNeverDuplicate(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, gcalfake.Options{Seed: seed, Latency: 50 * time.Millisecond,
					Faults: gcalfake.Faults{LostResponse: 0.25, BackendError: 0.15, Unavailable: 0.1}})
				w := h.writer("alice", gcalwriter.Options{Seed: seed})
				p := newMem()
				desired := events(60)
				// check also counts the answers that prove the recovery paths
				// ran: 409 after a lost insert, 412 after a lost update.
				check := func(results []calsyncd.WriteResult, recovered calsyncd.ErrorClass) {
					n := 0
					for i, res := range results {
						if res.Err != nil || res.Deferred != 0 || res.Rejected != 0 {
							t.Errorf("run %d: %+v", i+1, res)
						}
						n += res.ByClass[recovered]
					}
					if n == 0 {
						t.Errorf("no %s answer: the lost-response path did not run", recovered)
					}
				}
				check(converge(t, w, p, desired, 6, hourly), calsyncd.ClassConflict)
				checkMirrors(t, h.fake, desired)

				// The feed changes: 20 events move, 10 leave.
				changed := append([]feed.Event(nil), desired[10:]...)
				for i := range 20 {
					changed[i].Summary += " (moved)"
					changed[i].Hash = changed[i].ComputeHash()
				}
				check(converge(t, w, p, changed, 6, hourly), calsyncd.ClassPrecondition)
				checkMirrors(t, h.fake, changed)
				if all := h.fake.AllEvents(cal); len(all) != 60 {
					t.Errorf("%d events ever created (live and deleted), want 60", len(all))
				}
				for _, m := range p.mappings() {
					if m.Generation != 0 {
						t.Errorf("mapping %+v moved to a new id generation", m)
					}
				}
				st := h.fake.Stats()
				if st.LostResponses == 0 || st.Faults == 0 {
					t.Fatalf("no faults were injected: %+v", st)
				}
				t.Logf("%d lost responses, %d injected 5xx", st.LostResponses, st.Faults)
			})
		})
	}
}
