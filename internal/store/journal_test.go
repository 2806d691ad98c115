package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/store"
)

func mappingOf(uid string) calsyncd.Mapping {
	return calsyncd.Mapping{Key: calsyncd.Key{UID: uid}, EventID: "ev" + uid, Hash: "h"}
}

// A thousand queued mappings cost a handful of commits, not a thousand,
// and are all there after Flush.
func TestQueuedChangesAreGroupCommitted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		before := s.Commits()
		for i := range 1000 {
			if err := s.Queue("team", calsyncd.MappingSaved(mappingOf(fmt.Sprint(i)))); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(ctx, "team"); err != nil {
			t.Fatal(err)
		}
		commits := s.Commits() - before
		if n, _ := s.CountMappings(ctx, "team"); n != 1000 {
			t.Fatalf("%d mappings after Flush, want 1000", n)
		}
		// At most one commit per full batch, and one for the rest.
		if limit := int64(1000/store.DefaultCommitBatch + 1); commits > limit {
			t.Errorf("%d commits for 1,000 changes, want at most %d", commits, limit)
		}
		t.Logf("%d commits for 1,000 changes", commits)
	})
}

// A group that cannot be committed (its subscription does not exist) is
// reported to its own subscription, by Queue and once by Flush, and costs
// the other subscriptions nothing.
func TestAFailedGroupCostsOthersNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := s.Queue("team", calsyncd.MappingSaved(mappingOf(fmt.Sprint(i)))); err != nil {
				t.Fatal(err)
			}
			if err := s.Queue("ghost", calsyncd.MappingSaved(mappingOf(fmt.Sprint(i)))); err != nil && i == 0 {
				t.Fatal(err)
			}
		}
		if err := s.Flush(ctx, "ghost"); err == nil {
			t.Fatal("Flush of a subscription whose changes failed: no error")
		}
		if err := s.Flush(ctx, "ghost"); err != nil {
			t.Fatalf("the failure was reported twice: %v", err)
		}
		if err := s.Flush(ctx, "team"); err != nil {
			t.Fatalf("team: %v", err)
		}
		if n, _ := s.CountMappings(ctx, "team"); n != 10 {
			t.Errorf("team has %d mappings, want 10", n)
		}
		// Record reports its own group's failure, and commits nothing of it.
		err := s.Record(ctx, "team", calsyncd.MappingSaved(mappingOf("moved")), calsyncd.Change{Kind: 99, Key: calsyncd.Key{UID: "0"}})
		if err == nil {
			t.Fatal("Record of a bad change: no error")
		}
		ms, _ := s.Mappings(ctx, "team")
		for _, m := range ms {
			if m.Key.UID == "moved" {
				t.Errorf("half of a failed Record was committed")
			}
		}
	})
}

// Record is a rekey's transaction: the save and the delete land together.
func TestRecordMovesAMappingInOneCommit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		var moves []calsyncd.Change
		for i := range 500 {
			moves = append(moves, calsyncd.MappingSaved(mappingOf(fmt.Sprint("old", i))))
		}
		if err := s.Record(ctx, "team", moves...); err != nil {
			t.Fatal(err)
		}
		moves = moves[:0]
		for i := range 500 {
			m := mappingOf(fmt.Sprint("new", i))
			moves = append(moves, calsyncd.MappingSaved(m), calsyncd.MappingDeleted(calsyncd.Key{UID: fmt.Sprint("old", i)}))
		}
		before := s.Commits()
		if err := s.Record(ctx, "team", moves...); err != nil {
			t.Fatal(err)
		}
		if c := s.Commits() - before; c != 1 {
			t.Errorf("500 rekeys took %d commits, want 1", c)
		}
		ms, _ := s.Mappings(ctx, "team")
		if len(ms) != 500 || ms[0].Key.UID[:3] != "new" {
			t.Errorf("after the rekey: %d mappings, first %v", len(ms), ms[0].Key)
		}
	})
}

// Queued changes reach the disk within the commit window without anyone
// asking (virtual time: the committer's timer), and Close commits the
// rest.
func TestQueuedChangesLandWithinTheWindowAndOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dsn := filepath.Join(t.TempDir(), "calsyncd.db")
		ctx := context.Background()
		s, err := store.Open(ctx, "sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnsureSubscription(ctx, "team", "cal", "default"); err != nil {
			t.Fatal(err)
		}
		if err := s.Queue("team", calsyncd.MappingSaved(mappingOf("a"))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(store.DefaultCommitWindow + time.Millisecond)
		if n, _ := s.CountMappings(ctx, "team"); n != 1 {
			t.Errorf("%d mappings one window after queueing, want 1", n)
		}
		if err := s.Queue("team", calsyncd.MappingSaved(mappingOf("b"))); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Queue("team", calsyncd.MappingSaved(mappingOf("c"))); err == nil {
			t.Error("Queue after Close: no error")
		}
		s, err = store.Open(ctx, "sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if n, _ := s.CountMappings(ctx, "team"); n != 2 {
			t.Errorf("%d mappings after Close and reopen, want 2", n)
		}
	})
}

// However many goroutines write at once, through every kind of write, none
// meets "database is locked": the process has one writer connection.
func TestConcurrentWritersNeverMeetALockedDatabase(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 200*10)
		for g := range 200 {
			wg.Go(func() {
				id := fmt.Sprintf("s%03d", g)
				if _, err := s.EnsureSubscription(ctx, id, "cal", "default"); err != nil {
					errs <- err
					return
				}
				run, err := s.StartRun(ctx, id, testNow)
				if err != nil {
					errs <- err
					return
				}
				for i := range 5 {
					if err := s.Queue(id, calsyncd.MappingSaved(mappingOf(fmt.Sprint(i)))); err != nil {
						errs <- err
					}
				}
				if _, _, err := s.ClaimLease(ctx, id, "me", time.Minute); err != nil {
					errs <- err
				}
				if err := s.Flush(ctx, id); err != nil {
					errs <- err
				}
				if err := s.FinishRun(ctx, calsyncd.Run{ID: run, SubscriptionID: id, FinishedAt: testNow, Outcome: calsyncd.OutcomeOK}); err != nil {
					errs <- err
				}
				if _, err := s.Mappings(ctx, id); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
