package subscription_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/mapping"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

const oneEvent = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nUID:a@example.com\r\n" +
	"DTSTART:20270111T090000Z\r\nDTEND:20270111T100000Z\r\nSUMMARY:A\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// memFetcher serves feeds from memory and counts fetches per URL.
type memFetcher struct {
	mu     sync.Mutex
	bodies map[string]string // url → body; missing ⇒ unreachable
	count  map[string]int
}

func (f *memFetcher) Open(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count[req.URL]++
	body, ok := f.bodies[req.URL]
	if !ok {
		return nil, &fetch.Error{Kind: fetch.Unreachable, Msg: "cannot reach the feed server"}
	}
	return &fetch.Response{Body: []byte(body), BodyHash: body}, nil
}

func (f *memFetcher) fetches(url string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[url]
}

// okWriter accepts every write.
type okWriter struct{}

func (okWriter) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	var res calsyncd.WriteResult
	for _, op := range b.Ops {
		switch op.Kind {
		case diff.Create, diff.Update:
			m := op.Key
			_ = p.Saved(ctx, mappingFor(m, op.Event.Hash))
			res.Created++
		case diff.Delete:
			_ = p.Deleted(ctx, op.Key)
			res.Deleted++
		}
	}
	return res
}

func (okWriter) ListOwned(context.Context, string, string) ([]diff.Owned, error) { return nil, nil }
func (okWriter) Unsupported(*feed.Event) string                                  { return "" }
func (okWriter) CheckAccount(context.Context, string, string) (bool, error)      { return true, nil }
func (okWriter) CalendarID(_ context.Context, id string) (string, error)         { return id, nil }

func newDaemon(t *testing.T, subs ...config.Subscription) (*subscription.Daemon, *memFetcher, *store.Store) {
	t.Helper()
	return newDaemonWith(t, okWriter{}, nil, io.Discard, subs...)
}

// newDaemonWith is newDaemon with the writer w for every account, the
// configuration changed by set (when not nil) and the log written to logs.
func newDaemonWith(t *testing.T, w subscription.Writer, set func(*config.Config), logs io.Writer, subs ...config.Subscription) (*subscription.Daemon, *memFetcher, *store.Store) {
	t.Helper()
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	cfg.Subscriptions = subs
	if set != nil {
		set(cfg)
	}
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &memFetcher{bodies: map[string]string{"https://example.com/good.ics": oneEvent, "https://example.com/new.ics": oneEvent}, count: map[string]int{}}
	log := slog.New(slog.NewTextHandler(logs, nil))
	r := &subscription.Runner{Config: cfg, Store: st, Fetcher: f, Log: log,
		Writer: func(string) (subscription.Writer, error) { return w, nil }}
	return subscription.NewDaemon(cfg, r, st, log, 7), f, st
}

func sub(id string) config.Subscription {
	return config.Subscription{ID: id, URL: "https://example.com/" + id + ".ics", Calendar: id + "@example.com"}
}

func TestDaemonBacksOffSubscriptionsInError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, f, st := newDaemon(t, sub("good"), sub("bad"))
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Hour)
		if err := d.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		good, bad := f.fetches("https://example.com/good.ics"), f.fetches("https://example.com/bad.ics")
		if good < 29 || good > 32 {
			t.Errorf("good subscription fetched %d times in 30 h, want about 30", good)
		}
		// 3 failures make ERROR; then waits of 1, 2, 4, 8, 16 h.
		if bad < 6 || bad > 9 {
			t.Errorf("bad subscription fetched %d times in 30 h, want 6-9 (backing off)", bad)
		}
		s, err := st.Subscription(ctx, "bad")
		if err != nil || s.State != calsyncd.StateError || s.LastErrorClass != "feed_unreachable" {
			t.Errorf("bad = %+v, %v", s, err)
		}
		if s, _ := st.Subscription(ctx, "good"); s.State != calsyncd.StateActive || s.NextRunAt.IsZero() {
			t.Errorf("good = %+v", s)
		}
	})
}

func TestDaemonTriggerForcesARunEvenInError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, f, st := newDaemon(t, sub("bad"))
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * time.Hour)
		if s, _ := st.Subscription(ctx, "bad"); s.State != calsyncd.StateError {
			t.Fatalf("state = %s, want ERROR after 4 hours of failures", s.State)
		}
		before := f.fetches("https://example.com/bad.ics")
		f.mu.Lock()
		f.bodies["https://example.com/bad.ics"] = oneEvent // the feed is back
		f.mu.Unlock()
		runID, err := d.Trigger("bad", subscription.Options{})
		if err != nil || runID == 0 {
			t.Fatalf("Trigger = %d, %v", runID, err)
		}
		synctest.Wait()
		if f.fetches("https://example.com/bad.ics") != before+1 {
			t.Fatal("Trigger did not run the subscription")
		}
		if s, _ := st.Subscription(ctx, "bad"); s.State != calsyncd.StateActive || s.ConsecutiveErrors != 0 {
			t.Fatalf("after a clean forced run: %s/%d, want ACTIVE/0", s.State, s.ConsecutiveErrors)
		}
		if _, err := d.Trigger("nosuch", subscription.Options{}); err != subscription.ErrUnknownSubscription {
			t.Fatalf("Trigger(unknown) = %v", err)
		}
		d.Shutdown(ctx)
		if _, err := d.Trigger("bad", subscription.Options{}); err != subscription.ErrStopping {
			t.Fatalf("Trigger after shutdown = %v", err)
		}
	})
}

func TestDaemonReloadAddsAndRemovesSubscriptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, f, st := newDaemon(t, sub("good"), sub("bad"))
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(90 * time.Minute)
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.Subscriptions = []config.Subscription{sub("good"), sub("new")}
		if err := d.Reload(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		badBefore := f.fetches("https://example.com/bad.ics")
		time.Sleep(5 * time.Hour)
		d.Shutdown(ctx)
		if n := f.fetches("https://example.com/bad.ics"); n != badBefore {
			t.Errorf("removed subscription ran %d more times", n-badBefore)
		}
		if n := f.fetches("https://example.com/new.ics"); n < 4 {
			t.Errorf("added subscription ran %d times in 5 h", n)
		}
		// Without prune_on_remove the removed subscription's state stays.
		if _, err := st.Subscription(ctx, "bad"); err != nil {
			t.Errorf("removed subscription forgotten without prune_on_remove: %v", err)
		}
		ids := d.Subscriptions()
		if len(ids) != 2 || ids[0].ID != "good" || ids[1].ID != "new" {
			t.Errorf("subscriptions after reload = %v", ids)
		}
	})
}

func TestDaemonPrunesRemovedSubscriptionsWhenAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _, st := newDaemon(t, sub("good"))
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		if n, _ := st.CountMappings(ctx, "good"); n != 1 {
			t.Fatalf("mappings = %d", n)
		}
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.Sync.PruneOnRemove = true
		if err := d.Reload(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		d.Shutdown(ctx)
		if _, err := st.Subscription(ctx, "good"); err == nil {
			t.Error("pruned subscription still in the database")
		}
	})
}

func mappingFor(k calsyncd.Key, hash string) calsyncd.Mapping {
	return calsyncd.Mapping{Key: k, EventID: mapping.EventID("", "t", k, 0), Hash: hash}
}

// The daemon prunes the run history to its retention at start and every
// hour after.
func TestDaemonPrunesTheRunHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _, st := newDaemon(t, sub("good"))
		d.SkipCatchUp()
		ctx := context.Background()
		if _, err := st.EnsureSubscription(ctx, "good", "good@example.com", "default"); err != nil {
			t.Fatal(err)
		}
		old := func(n int) {
			for range n {
				id, err := st.StartRun(ctx, "good", time.Now().Add(-200*24*time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if err := st.FinishRun(ctx, calsyncd.Run{ID: id, SubscriptionID: "good", Outcome: calsyncd.OutcomeOK, FinishedAt: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
		}
		runs := func() int {
			rs, err := st.Runs(ctx, "good", 1000)
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		old(50)
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// Older than the default 90 days: only the newest (also the newest
		// successful) run is kept.
		if n := runs(); n != 1 {
			t.Errorf("%d runs after start, want 1", n)
		}
		old(20)
		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		if n := runs(); n != 1 {
			t.Errorf("%d runs an hour later, want 1", n)
		}
		if err := d.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDaemonNeverRunsAScheduleThatNeverFires: a schedule with no
// activation that got past validation (276 runs in 20 s) is
// logged and nothing is scheduled: no run back to back, no catch-up, no
// next run recorded; the subscription can still be run by hand.
func TestDaemonNeverRunsAScheduleThatNeverFires(t *testing.T) {
	tests := map[string]string{
		"31 February":            "0 0 31 2 *",
		"30 February, in a zone": "CRON_TZ=Europe/Berlin 0 7 30 2 *",
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &lockedBuffer{}
				d, f, st := newDaemonWith(t, okWriter{}, func(c *config.Config) { c.Schedule = spec }, logs, sub("good"))
				ctx := context.Background()
				if err := d.Start(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(48 * time.Hour)
				if n := f.fetches("https://example.com/good.ics"); n != 0 {
					t.Errorf("a schedule that never fires ran the subscription %d times in 48 h", n)
				}
				if next := d.NextRun("good"); !next.IsZero() {
					t.Errorf("NextRun = %s, want none", next)
				}
				if !strings.Contains(logs.String(), "never fires") {
					t.Errorf("nothing logged about the schedule; log:\n%s", logs.String())
				}
				// By hand it runs, once.
				if _, err := d.Trigger("good", subscription.Options{}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Hour)
				if n := f.fetches("https://example.com/good.ics"); n != 1 {
					t.Errorf("a triggered run fetched %d times, want 1", n)
				}
				if s, err := st.Subscription(ctx, "good"); err != nil || !s.NextRunAt.IsZero() {
					t.Errorf("good = %+v, %v; want no next run recorded", s, err)
				}
				if err := d.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestADaemonRestartedKeepsEachSubscriptionsCadence: stopped for 40
// minutes and started again, the daemon runs every subscription next at
// most 90 minutes after its last run (or catches it up within two minutes
// when the stop made it overdue), as it would have without the stop.
func TestADaemonRestartedKeepsEachSubscriptionsCadence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var subs []config.Subscription
		for i := range 30 {
			subs = append(subs, sub(fmt.Sprintf("feed-%02d", i)))
		}
		d, f, st := newDaemon(t, subs...)
		for _, s := range subs {
			f.bodies[s.URL] = oneEvent
		}
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Hour)
		if err := d.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Minute)
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.Subscriptions = subs
		r := &subscription.Runner{Config: cfg, Store: st, Fetcher: f, Log: slog.New(slog.DiscardHandler),
			Writer: func(string) (subscription.Writer, error) { return okWriter{}, nil }}
		again := subscription.NewDaemon(cfg, r, st, slog.New(slog.DiscardHandler), 8)
		restart := time.Now()
		if err := again.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer again.Shutdown(ctx)
		for _, s := range subs {
			state, err := st.Subscription(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			last, next := state.UpdatedAt, again.NextRun(s.ID)
			latest := last.Add(90 * time.Minute)
			if catchUp := restart.Add(2*time.Minute + time.Second); catchUp.After(latest) {
				latest = catchUp
			}
			if !next.After(restart) || next.After(latest) {
				t.Errorf("%s last ran %v before the restart; its next run is %v after it, want after the restart and by %v",
					s.ID, restart.Sub(last).Round(time.Second), next.Sub(restart).Round(time.Second), latest.Sub(restart).Round(time.Second))
			}
		}
	})
}
