package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/store"
)

const ttl = store.DefaultLeaseTTL

// replicas opens n Stores on db, each with its own connection pool as a
// separate process would have, all reading clk.
func replicas(t *testing.T, db testDB, n int, clk *clock) []*store.Store {
	t.Helper()
	out := make([]*store.Store, n)
	for i := range out {
		out[i] = db.open(t)
		out[i].Now = clk.Now
	}
	return out
}

func TestLeaseClaimIsExclusive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		const (
			racers   = 8
			accounts = 5
		)
		clk := &clock{now: testNow}
		stores := replicas(t, db, racers, clk)
		ctx := context.Background()
		// Every racer claims every account at the same instant.
		type result struct {
			lease   calsyncd.Lease
			claimed bool
			err     error
		}
		results := make([][accounts]result, racers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for r := range racers {
			for a := range accounts {
				wg.Go(func() {
					<-start
					l, ok, err := stores[r].ClaimLease(ctx, fmt.Sprintf("acct-%d", a), fmt.Sprintf("replica-%d", r), ttl)
					results[r][a] = result{l, ok, err}
				})
			}
		}
		close(start)
		wg.Wait()
		held, err := stores[0].Leases(ctx)
		if err != nil || len(held) != accounts {
			t.Fatalf("leases = %v, %v", held, err)
		}
		for a := range accounts {
			winners := 0
			for r := range racers {
				res := results[r][a]
				if res.err != nil {
					t.Fatalf("replica-%d claiming acct-%d: %v", r, a, res.err)
				}
				if res.claimed {
					winners++
				}
				// Winner and losers all name the one holder.
				if res.lease.Owner != held[a].Owner || !res.lease.ExpiresAt.Equal(testNow.Add(ttl)) {
					t.Errorf("replica-%d sees acct-%d as %+v; table says %+v", r, a, res.lease, held[a])
				}
			}
			if winners != 1 {
				t.Errorf("acct-%d: %d replicas claimed it, want exactly 1", a, winners)
			}
		}
	})
}

func TestLeaseExpiryAndTakeover(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		clk := &clock{now: testNow}
		r := replicas(t, db, 2, clk)
		a, b := r[0], r[1]
		ctx := context.Background()
		if _, ok, err := a.ClaimLease(ctx, "work", "a", ttl); !ok || err != nil {
			t.Fatalf("a claims a free account: %v, %v", ok, err)
		}
		// One millisecond before expiry the lease still holds.
		clk.Set(testNow.Add(ttl - time.Millisecond))
		l, ok, err := b.ClaimLease(ctx, "work", "b", ttl)
		if ok || err != nil || l.Owner != "a" || !l.ExpiresAt.Equal(testNow.Add(ttl)) || !l.HeldAt(clk.Now()) {
			t.Fatalf("b claims a held lease: %+v, %v, %v", l, ok, err)
		}
		// At expiry it is free for the taking.
		clk.Set(testNow.Add(ttl))
		l, ok, err = b.ClaimLease(ctx, "work", "b", ttl)
		if !ok || err != nil || l.Owner != "b" || !l.ExpiresAt.Equal(clk.Now().Add(ttl)) {
			t.Fatalf("b takes over an expired lease: %+v, %v, %v", l, ok, err)
		}
		// The old holder learns it lost the lease, and cannot steal it back
		// or free it.
		if _, err := a.ExtendLease(ctx, "work", "a", ttl); !errors.Is(err, calsyncd.ErrLeaseLost) {
			t.Fatalf("a heartbeats a lease b took: %v", err)
		}
		if _, ok, _ := a.ClaimLease(ctx, "work", "a", ttl); ok {
			t.Fatal("a reclaimed a lease b holds")
		}
		if err := a.ReleaseLease(ctx, "work", "a"); !errors.Is(err, calsyncd.ErrLeaseLost) {
			t.Fatalf("a releases b's lease: %v", err)
		}
		if ls, _ := a.Leases(ctx); len(ls) != 1 || ls[0].Owner != "b" {
			t.Fatalf("leases = %+v, want b's", ls)
		}
	})
}

func TestLeaseHeartbeat(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		clk := &clock{now: testNow}
		r := replicas(t, db, 2, clk)
		a, b := r[0], r[1]
		ctx := context.Background()
		if _, ok, err := a.ClaimLease(ctx, "work", "a", ttl); !ok || err != nil {
			t.Fatalf("claim: %v, %v", ok, err)
		}
		// Heartbeats keep the lease past its first expiry.
		for _, at := range []time.Duration{20 * time.Second, 40 * time.Second, 60 * time.Second, 80 * time.Second} {
			clk.Set(testNow.Add(at))
			l, err := a.ExtendLease(ctx, "work", "a", ttl)
			if err != nil || !l.ExpiresAt.Equal(testNow.Add(at+ttl)) || l.Owner != "a" {
				t.Fatalf("heartbeat at +%s: %+v, %v", at, l, err)
			}
		}
		clk.Set(testNow.Add(139 * time.Second))
		if l, ok, _ := b.ClaimLease(ctx, "work", "b", ttl); ok || l.Owner != "a" {
			t.Fatalf("b took a heartbeating lease: %+v", l)
		}
		// Only the owner can heartbeat.
		if _, err := b.ExtendLease(ctx, "work", "b", ttl); !errors.Is(err, calsyncd.ErrLeaseLost) {
			t.Fatalf("b heartbeats a's lease: %v", err)
		}
		if _, err := a.ExtendLease(ctx, "other", "a", ttl); !errors.Is(err, calsyncd.ErrLeaseLost) {
			t.Fatalf("a heartbeats a lease it never claimed: %v", err)
		}
		// A heartbeat that comes too late reports the lease lost even if
		// nobody took it; claiming again is how the owner gets it back.
		clk.Set(testNow.Add(140 * time.Second))
		if _, err := a.ExtendLease(ctx, "work", "a", ttl); !errors.Is(err, calsyncd.ErrLeaseLost) {
			t.Fatalf("late heartbeat: %v", err)
		}
		if l, ok, err := a.ClaimLease(ctx, "work", "a", ttl); !ok || err != nil || !l.ExpiresAt.Equal(clk.Now().Add(ttl)) {
			t.Fatalf("reclaim after a late heartbeat: %+v, %v, %v", l, ok, err)
		}
		// Claiming a lease one already holds renews it.
		clk.Set(testNow.Add(150 * time.Second))
		if l, ok, err := a.ClaimLease(ctx, "work", "a", ttl); !ok || err != nil || !l.ExpiresAt.Equal(clk.Now().Add(ttl)) {
			t.Fatalf("renewing claim: %+v, %v, %v", l, ok, err)
		}
	})
}

func TestLeaseRelease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		clk := &clock{now: testNow}
		r := replicas(t, db, 2, clk)
		a, b := r[0], r[1]
		ctx := context.Background()
		for _, acct := range []string{"home", "work", "club"} {
			if _, ok, err := a.ClaimLease(ctx, acct, "a", ttl); !ok || err != nil {
				t.Fatalf("claim %s: %v, %v", acct, ok, err)
			}
		}
		if _, ok, err := b.ClaimLease(ctx, "solo", "b", ttl); !ok || err != nil {
			t.Fatalf("claim solo: %v, %v", ok, err)
		}
		// A non-owner's release changes nothing.
		if err := b.ReleaseLease(ctx, "work", "b"); !errors.Is(err, calsyncd.ErrLeaseLost) {
			t.Fatalf("b releases a's lease: %v", err)
		}
		if l, ok, _ := b.ClaimLease(ctx, "work", "b", ttl); ok {
			t.Fatalf("a's lease fell to b after b's release: %+v", l)
		}
		// The owner's release frees the account at once, without waiting
		// for the expiry.
		if err := a.ReleaseLease(ctx, "work", "a"); err != nil {
			t.Fatal(err)
		}
		if l, ok, err := b.ClaimLease(ctx, "work", "b", ttl); !ok || err != nil {
			t.Fatalf("b claims a released lease: %+v, %v, %v", l, ok, err)
		}
		// Shutdown releases everything a replica holds, and nothing else.
		if n, err := a.ReleaseLeases(ctx, "a"); n != 2 || err != nil {
			t.Fatalf("release all of a: %d, %v", n, err)
		}
		ls, err := a.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []calsyncd.Lease{
			{Account: "solo", Owner: "b", ExpiresAt: testNow.Add(ttl)},
			{Account: "work", Owner: "b", ExpiresAt: testNow.Add(ttl)},
		}
		if fmt.Sprint(ls) != fmt.Sprint(want) {
			t.Fatalf("leases after a's shutdown = %+v, want %+v", ls, want)
		}
	})
}

func TestLeaseListShowsExpiredLeases(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		clk := &clock{now: testNow}
		s := replicas(t, db, 1, clk)[0]
		ctx := context.Background()
		if ls, err := s.Leases(ctx); len(ls) != 0 || err != nil {
			t.Fatalf("leases of a new database = %v, %v", ls, err)
		}
		// Inserted out of order, listed by account (bytes: "Z" < "a").
		for _, c := range []struct {
			account, owner string
			ttl            time.Duration
		}{{"work", "host-2", ttl}, {"Zoe", "host-1", 10 * time.Second}, {"home", "host-1", ttl}} {
			if _, ok, err := s.ClaimLease(ctx, c.account, c.owner, c.ttl); !ok || err != nil {
				t.Fatalf("claim %s: %v, %v", c.account, ok, err)
			}
		}
		clk.Set(testNow.Add(30 * time.Second))
		ls, err := s.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, l := range ls {
			got += fmt.Sprintf("%s=%s@+%s held=%v ", l.Account, l.Owner, l.ExpiresAt.Sub(testNow), l.HeldAt(clk.Now()))
		}
		if want := "Zoe=host-1@+10s held=false home=host-1@+1m0s held=true work=host-2@+1m0s held=true "; got != want {
			t.Fatalf("leases:\n got %s\nwant %s", got, want)
		}
	})
}

func TestLeaseArguments(t *testing.T) {
	s := freshSQLite(t).open(t)
	ctx := context.Background()
	for name, c := range map[string]struct {
		account, owner string
		ttl            time.Duration
	}{
		"no account":   {"", "a", ttl},
		"no owner":     {"work", "", ttl},
		"zero ttl":     {"work", "a", 0},
		"sub-ms ttl":   {"work", "a", time.Microsecond},
		"negative ttl": {"work", "a", -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := s.ClaimLease(ctx, c.account, c.owner, c.ttl); err == nil {
				t.Error("claim accepted")
			}
			if _, err := s.ExtendLease(ctx, c.account, c.owner, c.ttl); err == nil || errors.Is(err, calsyncd.ErrLeaseLost) {
				t.Errorf("extend: %v, want an argument error", err)
			}
		})
	}
	if ls, _ := s.Leases(ctx); len(ls) != 0 {
		t.Fatalf("bad claims left leases: %v", ls)
	}
}

// A write one replica made must be visible to every other replica the
// moment the call returns: a replica killed right after leaves its
// successor nothing to duplicate.
func TestWritesAreVisibleToOtherReplicasAtOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		ctx := context.Background()
		clk := &clock{now: testNow}
		r := replicas(t, db, 2, clk)
		writer, reader := r[0], r[1]
		if _, err := writer.EnsureSubscription(ctx, "team", "cal", "work"); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			m := calsyncd.Mapping{Key: calsyncd.Key{UID: fmt.Sprintf("ev-%d", i)}, EventID: fmt.Sprintf("id%d", i), Hash: "h"}
			if err := writer.PutMapping(ctx, "team", m); err != nil {
				t.Fatal(err)
			}
			got, err := reader.Mappings(ctx, "team")
			if err != nil || len(got) != i+1 || got[i].EventID != m.EventID {
				t.Fatalf("after write %d the other replica sees %+v, %v", i, got, err)
			}
		}
		if err := writer.DeleteMapping(ctx, "team", calsyncd.Key{UID: "ev-0"}); err != nil {
			t.Fatal(err)
		}
		if n, err := reader.CountMappings(ctx, "team"); n != 4 || err != nil {
			t.Fatalf("after a delete the other replica counts %d, %v", n, err)
		}
		// The writer vanishes without a goodbye; a newcomer sees it all.
		writer.Close()
		if n, err := db.open(t).CountMappings(ctx, "team"); n != 4 || err != nil {
			t.Fatalf("a new replica counts %d, %v", n, err)
		}
	})
}

// clock is a settable time source for lease tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func TestLeaseTakeOverFromADeadHolder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		clk := &clock{now: testNow}
		r := replicas(t, db, 3, clk)
		ctx := context.Background()
		if _, ok, err := r[0].ClaimLease(ctx, "work", "dead", ttl); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		// Two survivors race to take over the dead holder's lease: one wins.
		var wins int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, s := range r[1:] {
			wg.Go(func() {
				if _, ok, err := s.TakeOverLease(ctx, "work", "dead", fmt.Sprint("survivor", i), ttl); err != nil {
					t.Error(err)
				} else if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d survivors took the lease over, want 1", wins)
		}
		// Taking over from someone who no longer holds it does nothing.
		if _, ok, _ := r[0].TakeOverLease(ctx, "work", "dead", "late", ttl); ok {
			t.Fatal("took over a lease its holder had already lost")
		}
		if ls, _ := r[0].Leases(ctx); len(ls) != 1 || ls[0].Owner == "dead" || !ls[0].HeldAt(testNow) {
			t.Fatalf("leases = %+v", ls)
		}
	})
}
