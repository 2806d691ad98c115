package subscription_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// gauge counts what is going on at once, and the most there ever was.
type gauge struct {
	mu       sync.Mutex
	now, top map[string]int
}

func newGauge() *gauge { return &gauge{now: map[string]int{}, top: map[string]int{}} }

func (g *gauge) in(k string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now[k]++
	g.top[k] = max(g.top[k], g.now[k])
}

func (g *gauge) out(k string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now[k]--
}

func (g *gauge) most(k string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.top[k]
}

// slowFetcher takes a second per feed.
type slowFetcher struct{ g *gauge }

func (f slowFetcher) Open(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	f.g.in("fetch")
	defer f.g.out("fetch")
	time.Sleep(time.Second)
	return &fetch.Response{Body: []byte(oneEvent), BodyHash: req.URL}, nil
}

// slowWriter takes a minute per batch and counts the batches of each
// account at once.
type slowWriter struct {
	okWriter
	g       *gauge
	account string
}

func (w slowWriter) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	w.g.in(w.account)
	defer w.g.out(w.account)
	time.Sleep(time.Minute)
	return w.okWriter.Apply(ctx, b, p)
}

// Fifty subscriptions over two accounts, synced at once: no account has
// more passes writing than Workers allows, no more feeds are fetched at
// once than its prepare bound, and every subscription runs.
func TestWorkersBoundWhatRunsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		st, err := store.Open(ctx, "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		g := newGauge()
		r := &subscription.Runner{Config: cfg, Store: st, Fetcher: slowFetcher{g}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Writer:  func(account string) (subscription.Writer, error) { return slowWriter{g: g, account: account}, nil },
			Workers: subscription.NewWorkers(2, 3)}
		var subs []config.Subscription
		for i := range 50 {
			s := sub(fmt.Sprintf("s%02d", i))
			s.Account = []string{"alice", "bob"}[i%2]
			subs = append(subs, s)
		}
		results, err := subscription.Once{Runner: r}.All(ctx, subs, subscription.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range results {
			if res.Err != nil || res.Report.Run.Outcome != calsyncd.OutcomeOK {
				t.Errorf("%s: %v %+v", res.Report.Subscription, res.Err, res.Report.Run)
			}
		}
		if n := g.most("fetch"); n != 3 {
			t.Errorf("%d feeds fetched at once, want the prepare bound 3", n)
		}
		for _, a := range []string{"alice", "bob"} {
			if n := g.most(a); n != 2 {
				t.Errorf("%s had %d batches at once, want the per-account bound 2", a, n)
			}
		}
	})
}

// A pass still waiting for its account's turn when shutdown begins ends
// deferred, having done nothing.
func TestAPassWaitingForItsTurnIsDeferredByShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		st, err := store.Open(ctx, "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		g := newGauge()
		r := &subscription.Runner{Config: cfg, Store: st, Fetcher: slowFetcher{g}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Writer:  func(account string) (subscription.Writer, error) { return slowWriter{g: g, account: account}, nil },
			Workers: subscription.NewWorkers(1, 1)}
		drain := make(chan struct{})
		results := make([]subscription.Report, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				results[i], _ = r.Sync(ctx, sub(fmt.Sprint("s", i)), subscription.Options{Drain: drain})
			})
			synctest.Wait()
		}
		close(drain)
		wg.Wait()
		if results[0].Run.Outcome != calsyncd.OutcomeOK || results[1].Run.Outcome != calsyncd.OutcomeDeferred || results[1].Run.ID == 0 {
			t.Errorf("outcomes %s and %s (run %d), want ok and a recorded deferred run", results[0].Run.Outcome, results[1].Run.Outcome, results[1].Run.ID)
		}
		if n := g.most("fetch"); n != 1 {
			t.Errorf("%d fetches at once", n)
		}
	})
}

// goroutineFetcher notes the most goroutines alive while feeds are
// fetched.
type goroutineFetcher struct {
	mu  *sync.Mutex
	top *int
}

func (f goroutineFetcher) Open(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	f.mu.Lock()
	*f.top = max(*f.top, runtime.NumGoroutine())
	f.mu.Unlock()
	time.Sleep(time.Second)
	return &fetch.Response{Body: []byte(oneEvent), BodyHash: req.URL}, nil
}

// A sync of 300 subscriptions of one account holds them as work, not as
// goroutines: what runs at once is the account's Workers bound, and the
// rest wait as entries of a list (a goroutine per subscription, each with
// its grown stack, took 427 MB at 10,000).
func TestAllHoldsWorkNotGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		st, err := store.Open(ctx, "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var (
			mu  sync.Mutex
			top int
		)
		r := &subscription.Runner{Config: cfg, Store: st, Fetcher: goroutineFetcher{&mu, &top}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Writer:  func(string) (subscription.Writer, error) { return okWriter{}, nil },
			Workers: subscription.NewWorkers(2, 2)}
		var subs []config.Subscription
		for i := range 300 {
			subs = append(subs, sub(fmt.Sprintf("s%03d", i)))
		}
		before := runtime.NumGoroutine()
		results, err := subscription.Once{Runner: r}.All(ctx, subs, subscription.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range results {
			if res.Err != nil || res.Report.Run.Outcome != calsyncd.OutcomeOK {
				t.Fatalf("%s: %v %+v", res.Report.Subscription, res.Err, res.Report.Run)
			}
		}
		if grew := top - before; grew > 10 {
			t.Errorf("%d more goroutines while syncing 300 subscriptions of one account with 2 at a time, want a handful", grew)
		}
	})
}
