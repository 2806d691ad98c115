package subscription_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

func TestLeaseKeeperGivesUpBeforeAnotherReplicaMayStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		const ttl = time.Minute
		// Owners not in host/pid/random form: never presumed dead, only
		// their lease's expiry frees their accounts (as across hosts).
		a := subscription.NewLeaseKeeper(st, "replica-a", ttl, log)
		b := subscription.NewLeaseKeeper(st, "replica-b", ttl, log)
		ctx := context.Background()
		if ok, _, err := a.Acquire(ctx, "work"); !ok || err != nil {
			t.Fatalf("a: %v %v", ok, err)
		}
		runCtx := a.Context("work")
		if ok, holder, _ := b.Acquire(ctx, "work"); ok || holder.Owner != "replica-a" {
			t.Fatalf("b took a held lease (holder %q)", holder.Owner)
		}
		// a stops heartbeating (it hangs, or its database link is down).
		// It gives up a quarter of the lease before expiry...
		time.Sleep(ttl - ttl/4 + time.Second)
		if a.Holds("work") || runCtx.Err() == nil {
			t.Fatal("a still believes it holds a lease it could not renew")
		}
		// ...while b must still wait for the expiry.
		if ok, _, _ := b.Acquire(ctx, "work"); ok {
			t.Fatal("b took the lease before it expired")
		}
		time.Sleep(ttl / 4)
		if ok, _, err := b.Acquire(ctx, "work"); !ok || err != nil {
			t.Fatalf("b after expiry: %v %v", ok, err)
		}
	})
}

func TestLeaseKeeperKeepsWhatItRenews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		a := subscription.NewLeaseKeeper(st, "replica-a", time.Minute, log)
		b := subscription.NewLeaseKeeper(st, "replica-b", time.Minute, log)
		actx, stopA := context.WithCancel(context.Background())
		bctx, stopB := context.WithCancel(context.Background())
		defer stopA()
		defer stopB()
		accounts := func() []string { return []string{"work", "home"} }
		go a.Keep(actx, accounts)
		time.Sleep(30 * time.Second) // a's first renewal claims both
		go b.Keep(bctx, accounts)
		time.Sleep(10 * time.Minute)
		if !a.Holds("work") || !a.Holds("home") || b.Holds("work") || b.Holds("home") {
			t.Fatalf("after 10 min: a holds %v/%v, b holds %v/%v", a.Holds("work"), a.Holds("home"), b.Holds("work"), b.Holds("home"))
		}
		// a shuts down cleanly: b takes over within a renewal period.
		stopA()
		a.Release(context.Background())
		time.Sleep(21 * time.Second)
		if !b.Holds("work") || !b.Holds("home") {
			t.Fatal("b did not take over released leases")
		}
	})
}

func TestReplicasTakeTurnsPerAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		cfg := config.Default()
		cfg.StateDir = dir
		cfg.Accounts = []config.Account{{Name: "work"}}
		s1, s2 := sub("good"), sub("new")
		s2.Account = "work"
		cfg.Subscriptions = []config.Subscription{s1, s2}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		replica := func(owner string) (*subscription.Daemon, *memFetcher) {
			st, err := store.Open(context.Background(), "sqlite", filepath.Join(dir, "calsyncd.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			f := &memFetcher{bodies: map[string]string{"https://example.com/good.ics": oneEvent, "https://example.com/new.ics": oneEvent}, count: map[string]int{}}
			r := &subscription.Runner{Config: cfg, Store: st, Fetcher: f, Log: log,
				Writer: func(string) (subscription.Writer, error) { return okWriter{}, nil }}
			d := subscription.NewDaemon(cfg, r, st, log, 1)
			d.UseLeases(subscription.NewLeaseKeeper(st, owner, time.Minute, log))
			return d, f
		}
		ctx := context.Background()
		a, fa := replica("replica-a")
		b, fb := replica("replica-b")
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Hour)
		total := func(f *memFetcher) int {
			return f.fetches("https://example.com/good.ics") + f.fetches("https://example.com/new.ics")
		}
		if total(fb) != 0 || total(fa) < 9 {
			t.Fatalf("while a holds every account: a fetched %d, b %d", total(fa), total(fb))
		}
		var held *subscription.LeaseHeldError
		if _, err := b.Trigger("good", subscription.Options{}); !errors.As(err, &held) || held.Holder != "replica-a" || held.Account != "default" {
			t.Fatalf("b asked to run a subscription whose account a holds: %v, want a LeaseHeldError naming replica-a", err)
		}
		a.Shutdown(ctx)
		before := total(fa)
		time.Sleep(5 * time.Hour)
		if total(fa) != before || total(fb) < 9 {
			t.Fatalf("after a stopped: a fetched %d more, b %d", total(fa)-before, total(fb))
		}
		b.Shutdown(ctx)
	})
}
