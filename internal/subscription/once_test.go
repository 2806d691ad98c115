package subscription_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestOnceRunsOnlyWhatItHolds: a one-shot sync takes its accounts'
// leases like a replica, runs the subscriptions of the accounts it got,
// names the holder of the others, and gives its leases back.
func TestOnceRunsOnlyWhatItHolds(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	st, err := store.Open(ctx, "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &memFetcher{bodies: map[string]string{"https://example.com/mine.ics": oneEvent, "https://example.com/theirs.ics": oneEvent}, count: map[string]int{}}
	r := &subscription.Runner{Config: cfg, Store: st, Fetcher: f, Log: log,
		Writer: func(string) (subscription.Writer, error) { return okWriter{}, nil }}
	mine, theirs := sub("mine"), sub("theirs")
	theirs.Account = "bob"

	daemon := subscription.NewLeaseKeeper(st, "daemon", time.Minute, log)
	if ok, _, err := daemon.Acquire(ctx, "bob"); !ok || err != nil {
		t.Fatalf("the daemon's lease: %v %v", ok, err)
	}
	once := subscription.Once{Runner: r, Leases: subscription.NewLeaseKeeper(st, "one-shot", time.Minute, log)}
	results, err := once.All(ctx, []config.Subscription{mine, theirs}, subscription.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res := results[0]; res.Err != nil || res.Report.Run.Outcome != calsyncd.OutcomeOK {
		t.Errorf("mine: %+v", res)
	}
	if res := results[1]; !errors.Is(res.Err, subscription.ErrLeaseHeld) || !strings.Contains(res.Err.Error(), "daemon") || res.Report.Run.ID != 0 {
		t.Errorf("theirs ran or does not name its holder: %+v", res)
	}
	if f.count["https://example.com/theirs.ics"] != 0 {
		t.Error("the feed of an account another process holds was fetched")
	}
	leases, err := st.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if l.Owner == "one-shot" {
			t.Errorf("the one-shot sync kept its lease on %s", l.Account)
		}
	}
}
