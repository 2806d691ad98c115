package subscription_test

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// gateWriter accepts every write and counts them (opsWriter); its first
// batch waits for the gate to open, so a test can act while a run is in
// the middle of writing.
type gateWriter struct {
	opsWriter
	entered, gate chan struct{}
	once          sync.Once
}

func newGateWriter() *gateWriter {
	return &gateWriter{entered: make(chan struct{}), gate: make(chan struct{})}
}

func (w *gateWriter) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	w.once.Do(func() {
		close(w.entered)
		<-w.gate
	})
	return w.opsWriter.Apply(ctx, b, p)
}

func (w *gateWriter) deleted() int { return w.count(diff.Delete) }

// lockedBuffer is a log sink safe for the daemon's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPruneWaitsForTheRunningSync: a subscription removed with
// prune_on_remove while it syncs is pruned as soon as that run ends
// (the prune failed "already running", the run wrote all
// its events, and no later reload pruned them).
func TestPruneWaitsForTheRunningSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.Subscriptions = []config.Subscription{sub("good")}
		st, err := store.Open(context.Background(), "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		logs := &lockedBuffer{}
		log := slog.New(slog.NewTextHandler(logs, nil))
		w := newGateWriter()
		f := &memFetcher{bodies: map[string]string{"https://example.com/good.ics": oneEvent}, count: map[string]int{}}
		r := &subscription.Runner{Config: cfg, Store: st, Fetcher: f, Log: log,
			Writer: func(string) (subscription.Writer, error) { return w, nil }}
		d := subscription.NewDaemon(cfg, r, st, log, 7)
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-w.entered // the catch-up run is writing

		removed := config.Default()
		removed.StateDir = cfg.StateDir
		removed.Sync.PruneOnRemove = true
		if err := d.Reload(ctx, removed); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if strings.Contains(logs.String(), "failed") {
			t.Errorf("the prune failed instead of waiting:\n%s", logs.String())
		}
		if _, err := st.Subscription(ctx, "good"); err != nil {
			t.Fatalf("pruned while its run was still writing: %v", err)
		}

		close(w.gate) // the run ends
		synctest.Wait()
		if _, err := st.Subscription(ctx, "good"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the removed subscription was not pruned when its run ended: %v\n%s", err, logs.String())
		}
		if n := w.deleted(); n != 1 {
			t.Errorf("the prune deleted %d events, want the 1 the run wrote", n)
		}
		if err := d.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour) // nothing left to do: no retry fires
	})
}

// busyLocker says another process holds every subscription until freed.
type busyLocker struct {
	mu   sync.Mutex
	busy bool
}

func (l *busyLocker) TryLock(string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy {
		return nil, subscription.ErrBusy
	}
	return func() {}, nil
}

func (l *busyLocker) set(busy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy = busy
}

// TestPruneWaitsForAnotherProcess: while a `calsyncd sync` elsewhere holds
// the removed subscription's lock, the daemon tries the prune again every
// minute until it can.
func TestPruneWaitsForAnotherProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.Subscriptions = []config.Subscription{sub("good")}
		st, err := store.Open(context.Background(), "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		log := slog.New(slog.DiscardHandler)
		lock := &busyLocker{}
		f := &memFetcher{bodies: map[string]string{"https://example.com/good.ics": oneEvent}, count: map[string]int{}}
		r := &subscription.Runner{Config: cfg, Store: st, Fetcher: f, Log: log, Locker: lock,
			Writer: func(string) (subscription.Writer, error) { return okWriter{}, nil }}
		d := subscription.NewDaemon(cfg, r, st, log, 7)
		ctx := context.Background()
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		if n, _ := st.CountMappings(ctx, "good"); n != 1 {
			t.Fatalf("mappings = %d", n)
		}
		lock.set(true) // a calsyncd sync elsewhere
		removed := config.Default()
		removed.StateDir = t.TempDir()
		removed.Sync.PruneOnRemove = true
		if err := d.Reload(ctx, removed); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		if _, err := st.Subscription(ctx, "good"); err != nil {
			t.Fatalf("pruned through another process's lock: %v", err)
		}
		lock.set(false)
		time.Sleep(pruneRetryForTest)
		synctest.Wait()
		if _, err := st.Subscription(ctx, "good"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("not pruned a minute after the lock was freed: %v", err)
		}
		d.Shutdown(ctx)
	})
}

const pruneRetryForTest = time.Minute + time.Second
