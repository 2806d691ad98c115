package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/store"
)

func TestMigrationsAreAppliedOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		for i := 0; i < 3; i++ {
			s, err := store.Open(context.Background(), db.driver, db.dsn)
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			if _, err := s.EnsureSubscription(context.Background(), "team", "cal", "default"); err != nil {
				t.Fatal(err)
			}
			if v, err := s.SchemaVersion(context.Background()); err != nil || v != latestMigration {
				t.Fatalf("schema version = %d, %v; want %d", v, err, latestMigration)
			}
			s.Close()
		}
	})
}

// latestMigration is the number of the newest file in migrations/<driver>.
const latestMigration = 10

// Replicas starting at once must not trip over each other's migrations.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		const replicas = 6
		var (
			wg     sync.WaitGroup
			stores = make([]*store.Store, replicas)
			errs   = make([]error, replicas)
			start  = make(chan struct{})
		)
		for i := range replicas {
			wg.Go(func() {
				<-start
				stores[i], errs[i] = store.Open(context.Background(), db.driver, db.dsn)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("replica %d: open: %v", i, err)
			}
			t.Cleanup(func() { stores[i].Close() })
		}
		for i, s := range stores {
			if v, err := s.SchemaVersion(context.Background()); err != nil || v != latestMigration {
				t.Fatalf("replica %d: schema version = %d, %v", i, v, err)
			}
			if _, err := s.EnsureSubscription(context.Background(), "team", "cal", "default"); err != nil {
				t.Fatalf("replica %d: %v", i, err)
			}
		}
	})
}

func TestUnknownDriver(t *testing.T) {
	if _, err := store.Open(context.Background(), "mysql", "x"); err == nil || !strings.Contains(err.Error(), `"mysql"`) {
		t.Fatalf("open mysql: %v", err)
	}
}

func TestSubscriptionState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		st, err := s.EnsureSubscription(ctx, "team", "team@example.com", "default")
		if err != nil {
			t.Fatal(err)
		}
		if st.State != calsyncd.StateActive || st.ConsecutiveErrors != 0 || st.CreatedAt.IsZero() {
			t.Fatalf("new subscription = %+v", st)
		}
		st.State, st.ConsecutiveErrors, st.ETag, st.Notes = calsyncd.StateError, 3, `"v1"`, []string{"expanded 2 series"}
		st.FetchNotBefore = time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
		st.GuardPeak, st.GuardPeakAt = 100, time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
		st.Vacating = []calsyncd.Location{{Calendar: "old@example.com", Account: "default"}}
		st.FeedThrottledSince = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
		st.GuardHeld, st.GuardBase, st.GuardByConfig = "d1g35t", 42, true
		st.RereadAt = time.UnixMilli(1_830_000_000_123)
		if err := s.SaveSubscription(ctx, st); err != nil {
			t.Fatal(err)
		}
		// Ensuring again keeps the state, the calendar and account
		// included: a changed calendar is a move, the runner's to make.
		got, err := s.EnsureSubscription(ctx, "team", "new@example.com", "work")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != calsyncd.StateError || got.ConsecutiveErrors != 3 || got.ETag != `"v1"` || got.Calendar != "team@example.com" ||
			got.Account != "default" || len(got.Notes) != 1 || !got.FetchNotBefore.Equal(st.FetchNotBefore) ||
			got.GuardPeak != 100 || !got.GuardPeakAt.Equal(st.GuardPeakAt) || len(got.Vacating) != 1 ||
			got.Vacating[0] != st.Vacating[0] || !got.FeedThrottledSince.Equal(st.FeedThrottledSince) ||
			got.GuardHeld != "d1g35t" || got.GuardBase != 42 || !got.GuardByConfig || !got.RereadAt.Equal(st.RereadAt) {
			t.Fatalf("reloaded = %+v", got)
		}
		if _, err := s.Subscription(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing subscription: %v", err)
		}
		if err := s.SaveSubscription(ctx, calsyncd.SubscriptionState{ID: "nope"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("save missing subscription: %v", err)
		}
	})
}

func TestMappingsAndRejections(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		a := calsyncd.Mapping{Key: calsyncd.Key{UID: "a"}, EventID: "ida", Hash: "h1", ETag: `"1"`, EndsAt: time.Date(2027, 1, 11, 10, 0, 0, 0, time.UTC)}
		inst := calsyncd.Mapping{Key: calsyncd.Key{UID: "a", RecurrenceID: "20270105T090000Z"}, EventID: "ida_x", Hash: "h2"}
		for _, m := range []calsyncd.Mapping{a, inst} {
			if err := s.PutMapping(ctx, "team", m); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutRejection(ctx, "team", calsyncd.Rejection{Key: calsyncd.Key{UID: "bad"}, Hash: "h9", Reason: "HTTP 400"}); err != nil {
			t.Fatal(err)
		}
		a.Hash, a.ETag, a.Generation = "h3", `"2"`, 1
		if err := s.PutMapping(ctx, "team", a); err != nil {
			t.Fatal(err)
		}
		ms, err := s.Mappings(ctx, "team")
		if err != nil || len(ms) != 2 {
			t.Fatalf("mappings = %v, %v", ms, err)
		}
		if ms[0].Hash != "h3" || ms[0].ETag != `"2"` || ms[0].Generation != 1 || ms[1].Key.RecurrenceID == "" ||
			!ms[0].EndsAt.Equal(a.EndsAt) || !ms[1].EndsAt.IsZero() {
			t.Fatalf("mappings = %+v", ms)
		}
		if n, _ := s.CountMappings(ctx, "team"); n != 2 {
			t.Fatalf("count = %d", n)
		}
		rj, err := s.Rejections(ctx, "team")
		if err != nil || len(rj) != 1 || rj[0].Reason != "HTTP 400" {
			t.Fatalf("rejections = %v, %v", rj, err)
		}
		// Writing a rejected event clears its rejection.
		if err := s.PutMapping(ctx, "team", calsyncd.Mapping{Key: calsyncd.Key{UID: "bad"}, EventID: "idbad", Hash: "h10"}); err != nil {
			t.Fatal(err)
		}
		if rj, _ := s.Rejections(ctx, "team"); len(rj) != 0 {
			t.Fatalf("rejection survived a successful write: %v", rj)
		}
		if err := s.DeleteMapping(ctx, "team", inst.Key); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.CountMappings(ctx, "team"); n != 2 {
			t.Fatalf("count after delete = %d, want 2", n)
		}
		// A moved subscription forgets its mappings, not its rejections.
		if err := s.PutRejection(ctx, "team", calsyncd.Rejection{Key: calsyncd.Key{UID: "bad2"}, Hash: "h11", Reason: "HTTP 400"}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteMappings(ctx, "team"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.CountMappings(ctx, "team"); n != 0 {
			t.Fatalf("count after DeleteMappings = %d, want 0", n)
		}
		if rj, _ := s.Rejections(ctx, "team"); len(rj) != 1 {
			t.Fatalf("rejections after DeleteMappings = %v, want the one kept", rj)
		}
		// Forgetting a subscription cascades to what it owns.
		if err := s.DeleteSubscription(ctx, "team"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.CountMappings(ctx, "team"); n != 0 {
			t.Fatalf("mappings survived their subscription: %d", n)
		}
	})
}

func TestRuns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		for i := 0; i < 3; i++ {
			id, err := s.StartRun(ctx, "team", start.Add(time.Duration(i)*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			err = s.FinishRun(ctx, calsyncd.Run{ID: id, FinishedAt: start.Add(time.Duration(i)*time.Hour + time.Minute),
				Outcome: calsyncd.OutcomeDeferred, Created: i, Deferred: 10 - i, ErrorClass: "rate_limited"})
			if err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.Runs(ctx, "team", 2)
		if err != nil || len(runs) != 2 {
			t.Fatalf("runs = %v, %v", runs, err)
		}
		if runs[0].Created != 2 || runs[0].Deferred != 8 || runs[0].Outcome != calsyncd.OutcomeDeferred || runs[1].Created != 1 ||
			!runs[0].StartedAt.Equal(start.Add(2*time.Hour)) {
			t.Fatalf("runs newest first = %+v", runs)
		}
	})
}

func TestAccountThrottleMemory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		a, err := s.Account(ctx, "default")
		if err != nil || !a.ThrottleUntil.IsZero() || a.Name != "default" {
			t.Fatalf("unknown account = %+v, %v", a, err)
		}
		until := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
		if err := s.SaveAccount(ctx, calsyncd.AccountState{Name: "default", ThrottleUntil: until, ThrottleClass: "usage_limited", ThrottleLevel: 2, Spacing: 750 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		a, err = s.Account(ctx, "default")
		if err != nil || !a.ThrottleUntil.Equal(until) || a.ThrottleLevel != 2 || a.Spacing != 750*time.Millisecond || a.ThrottleClass != "usage_limited" {
			t.Fatalf("account = %+v, %v", a, err)
		}
		all, err := s.Accounts(ctx)
		if err != nil || len(all) != 1 {
			t.Fatalf("accounts = %v, %v", all, err)
		}
	})
}

// TestMigrationsAreNumberedOnceEach keeps two branches' "next" migrations
// from merging into a schema that silently skips one of them.
func TestMigrationsAreNumberedOnceEach(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		entries, err := os.ReadDir(filepath.Join("migrations", driver))
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			if want := fmt.Sprintf("%04d_", i+1); !strings.HasPrefix(e.Name(), want) {
				t.Errorf("%s/%s: want the prefix %s (numbered once each, no gaps)", driver, e.Name(), want)
			}
		}
	}
}

// TestAStateDirWithURICharactersIsItsOwn: a state directory named with
// "#", "?" or "%" holds its own database. The DSN is a SQLite URI, where
// "#" starts a fragment: /srv/cal#1/calsyncd.db opened /srv/cal, so two
// installations in cal#1 and cal#2 shared one database (found by the
// simulation, whose subtests' directories are named "try#01").
func TestAStateDirWithURICharactersIsItsOwn(t *testing.T) {
	base := t.TempDir()
	ctx := context.Background()
	names := []string{"cal#1", "cal#2", "cal?x=1", "cal%41", "cal%2541"}
	for i, n := range names {
		path := filepath.Join(base, n, "calsyncd.db")
		s, err := store.Open(ctx, "sqlite", path)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if _, err := s.EnsureSubscription(ctx, fmt.Sprintf("sub%d", i), "c", "default"); err != nil {
			t.Fatal(err)
		}
		states, err := s.Subscriptions(ctx)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != 1 || states[0].ID != fmt.Sprintf("sub%d", i) {
			t.Errorf("the database in %s holds %d subscriptions (%v): it is shared with another directory's", n, len(states), states)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the database of %s is not where it was asked to be: %v", n, err)
		}
	}
	if ents, _ := os.ReadDir(base); len(ents) != len(names) {
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		t.Errorf("the base directory holds %v, want only the %d state directories", got, len(names))
	}
}
