package subscription_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/mapping"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// ownedSnap is what Google holds of every live event marked for the
// subscription "team", by id.
type ownedSnap map[string]marked

type marked struct{ owner, etag, summary string }

func ownedAt(h *harness) ownedSnap {
	out := ownedSnap{}
	for _, ev := range h.fake.Events(testCalendar) {
		if sub, owner, ok := gcalwriter.Marks(ev); ok && sub == "team" && ev.Status != "cancelled" {
			out[ev.Id] = marked{owner, ev.Etag, ev.Summary}
		}
	}
	return out
}

// of is the part of a ownedSnap whose owner mark is owner.
func (s ownedSnap) of(owner string) ownedSnap {
	out := ownedSnap{}
	for id, v := range s {
		if v.owner == owner {
			out[id] = v
		}
	}
	return out
}

func mappedIDs(t *testing.T, h *harness) []string {
	t.Helper()
	ms, err := h.store.Mappings(context.Background(), "team")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.EventID)
	}
	slices.Sort(out)
	return out
}

func ids(s ownedSnap) []string {
	out := make([]string, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// TestTwoOwnersNeverTouchEachOther: two installations (production, and a
// test instance beside it) both name a subscription "team" and write one
// calendar. The test instance's first sync, with a feed
// of 1 of production's 8 events, once adopted all 8 and deleted 7. Now
// neither installation adopts, changes or deletes the other's events,
// whatever it runs: a first sync, a reconcile, --allow-deletes, an empty
// feed, or a lost database.
func TestTwoOwnersNeverTouchEachOther(t *testing.T) {
	prod := newHarness(t, "")
	prod.owner = calsyncd.Owner{Name: "prod"}
	prod.open()
	prod.setFeed(feedOf(0, 8))
	if rep := prod.sync(); rep.Run.Created != 8 {
		t.Fatalf("production's first sync created %d, want 8", rep.Run.Created)
	}
	theirs := ownedAt(prod).of("prod")
	if len(theirs) != 8 {
		t.Fatalf("Google holds %d events marked prod, want 8", len(theirs))
	}
	test := prod.sibling("test")
	test.setFeed(feedOf(0, 1))
	check := func(step string) {
		t.Helper()
		if got := ownedAt(prod).of("prod"); !maps.Equal(got, theirs) {
			t.Errorf("%s: production's events changed:\n got  %v\n want %v", step, got, theirs)
		}
		for _, ev := range prod.fake.Events(testCalendar) {
			if sub, owner, ok := gcalwriter.Marks(ev); ok && sub == "team" && owner == "" {
				t.Errorf("%s: an event without an owner mark: %s", step, ev.Id)
			}
		}
		if got, want := mappedIDs(t, test), ids(ownedAt(test).of("test")); !slices.Equal(got, want) {
			t.Errorf("%s: the test instance maps %v, Google holds its %v", step, got, want)
		}
		if got, want := mappedIDs(t, prod), ids(theirs); !slices.Equal(got, want) {
			t.Errorf("%s: production maps %v, Google holds its %v", step, got, want)
		}
	}
	rep := test.sync()
	if rep.Run.Created != 1 || rep.Run.Deleted != 0 {
		t.Errorf("the test instance's first sync: created %d deleted %d, want 1 and 0", rep.Run.Created, rep.Run.Deleted)
	}
	check("first sync of the test instance")
	test.syncWith(subscription.Options{Reconcile: true})
	check("reconcile of the test instance")
	test.setFeed(feedOf(100, 0))
	test.syncWith(subscription.Options{AllowDeletes: true})
	check("the test instance's feed emptied, with --allow-deletes")
	if n := len(ownedAt(test).of("test")); n != 0 {
		t.Errorf("the test instance left %d of its own events after --allow-deletes", n)
	}
	test.setFeed(feedOf(0, 3))
	test.sync()
	test.dbPath = filepath.Join(t.TempDir(), "lost.db")
	test.open()
	rep = test.sync()
	if rep.Run.Created != 0 {
		t.Errorf("the test instance recovered its lost database by creating %d events, want 0 (adopted)", rep.Run.Created)
	}
	check("the test instance's database lost")
	if n := len(ownedAt(test).of("test")); n != 3 {
		t.Errorf("the test instance holds %d of its events, want 3", n)
	}
	// And the other way round: production, with its database lost too,
	// adopts its 8 and none of the test instance's 3.
	prod.dbPath = filepath.Join(t.TempDir(), "lost.db")
	prod.open()
	mine := ownedAt(test).of("test")
	if rep := prod.syncWith(subscription.Options{Reconcile: true}); rep.Run.Created != 0 || rep.Run.Deleted != 0 {
		t.Errorf("production after a lost database: created %d deleted %d, want 0 and 0", rep.Run.Created, rep.Run.Deleted)
	}
	check("production's database lost")
	if got := ownedAt(test).of("test"); !maps.Equal(got, mine) {
		t.Errorf("production changed the test instance's events:\n got  %v\n want %v", got, mine)
	}
}

// TestEventsOfTheReleaseBeforeOwnersAreKept: a database and calendar made
// by the release before owners (no owner mark, the legacy ids, pinned here
// to that release's values) keep working after the upgrade: nothing is
// created twice or deleted, a lost database still recovers by adoption,
// and the first reconcile writes the owner mark into each event, after
// which another owner's first sync leaves them alone.
func TestEventsOfTheReleaseBeforeOwnersAreKept(t *testing.T) {
	// The legacy ids, as the release before owners derived them.
	for _, c := range []struct {
		key calsyncd.Key
		gen int
		id  string
	}{
		{calsyncd.Key{UID: "g0000@example.com"}, 0, "csq0qhiufegaikltair510gi3at30mrqd30g4id5f464b26i9g1va0"},
		{calsyncd.Key{UID: "g0003@example.com"}, 1, "csqqk2i8ts346rqcrurr07960uv9vc25tk5u0oibq2h96jp5uojoq0"},
	} {
		if got := mapping.EventID("", "team", c.key, c.gen); got != c.id {
			t.Fatalf("the legacy id of %v is %s, the release before owners derived %s", c.key, got, c.id)
		}
	}
	h := newHarness(t, "") // the zero Owner writes what that release wrote
	h.setFeed(feedOf(0, 10))
	h.sync()
	legacy := ownedAt(h).of("")
	if len(legacy) != 10 {
		t.Fatalf("the legacy installation wrote %d events, want 10", len(legacy))
	}
	if !slices.Contains(ids(legacy), "csq0qhiufegaikltair510gi3at30mrqd30g4id5f464b26i9g1va0") {
		t.Fatalf("the legacy installation's ids %v lack the pinned one", ids(legacy))
	}

	// The upgrade: the same database and calendar, now owned by "prod".
	h.owner = calsyncd.Owner{Name: "prod"}
	h.open()
	before := h.writes()
	h.sync()
	if d := totalWrites(h.writes()) - totalWrites(before); d != 0 {
		t.Errorf("the first run after the upgrade wrote %d times, want 0", d)
	}
	// A database lost right after the upgrade: the legacy events are still
	// recognised and adopted.
	h.dbPath = filepath.Join(t.TempDir(), "lost.db")
	h.open()
	before = h.writes()
	if rep := h.sync(); rep.Run.Created != 0 || rep.Run.Deleted != 0 {
		t.Errorf("a lost database after the upgrade: created %d deleted %d, want 0 and 0", rep.Run.Created, rep.Run.Deleted)
	}
	if w := h.writes(); w["insert"] != before["insert"] || w["delete"] != before["delete"] {
		t.Errorf("recovering wrote %v (before %v): want no insert and no delete", w, before)
	}
	if got := mappedIDs(t, h); !slices.Equal(got, ids(legacy)) {
		t.Errorf("after recovery the store maps %v, want the legacy events %v", got, ids(legacy))
	}
	// The first reconcile writes our name into each legacy event.
	h.syncWith(subscription.Options{Reconcile: true})
	if n := len(ownedAt(h).of("prod")); n != 10 {
		t.Errorf("after the reconcile %d of 10 events carry the owner mark", n)
	}
	if got := ids(ownedAt(h)); !slices.Equal(got, ids(legacy)) {
		t.Errorf("the reconcile changed which events exist: %v, want %v", got, ids(legacy))
	}
	// From then on another owner's first sync leaves them alone.
	mine := ownedAt(h)
	other := h.sibling("test")
	other.setFeed(feedOf(0, 2))
	if rep := other.sync(); rep.Run.Created != 2 || rep.Run.Deleted != 0 {
		t.Errorf("another owner's first sync: created %d deleted %d, want 2 and 0", rep.Run.Created, rep.Run.Deleted)
	}
	if got := ownedAt(h).of("prod"); !maps.Equal(got, mine) {
		t.Errorf("another owner changed prod's events:\n got  %v\n want %v", got, mine)
	}
}

// TestARenamedOwnerKeepsItsEvents: an owner renamed in the configuration
// (the store keeps the former name) still recognises the events written
// under the former name: no duplicate, no delete, and a reconcile moves
// them to the new name.
func TestARenamedOwnerKeepsItsEvents(t *testing.T) {
	h := newHarness(t, "")
	h.owner = calsyncd.Owner{Name: "old"}
	h.open()
	h.setFeed(feedOf(0, 6))
	h.sync()
	was := ids(ownedAt(h).of("old"))
	h.owner = calsyncd.Owner{Name: "new", Former: []string{"old"}}
	h.open()
	h.setFeed(feedOf(0, 7))
	before := h.writes()
	rep := h.syncWith(subscription.Options{Reconcile: true})
	if rep.Run.Created != 1 || rep.Run.Deleted != 0 || rep.Run.Outcome != calsyncd.OutcomeOK {
		t.Errorf("after the rename: %s, created %d deleted %d, want ok, 1 (the new event) and 0", rep.Run.Outcome, rep.Run.Created, rep.Run.Deleted)
	}
	w := h.writes()
	t.Logf("the rename's reconcile: %+v, run %+v", w, rep.Run)
	if ins, upd := w["insert"]-before["insert"], w["update"]-before["update"]; ins != 1 || upd != 6 {
		t.Errorf("the rename's reconcile inserted %d and updated %d, want 1 (the new event) and 6 (the former name's marks)", ins, upd)
	}
	now := ownedAt(h)
	if len(now.of("new")) != 7 || len(now) != 7 {
		t.Errorf("after the rename's reconcile Google holds %v, want 7 events all marked new", now)
	}
	for _, id := range was {
		if _, ok := now[id]; !ok {
			t.Errorf("event %s of the former name is gone", id)
		}
	}
}
