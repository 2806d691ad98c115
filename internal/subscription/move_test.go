package subscription_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

const movedCalendar = "moved@group.calendar.google.com"

// owned counts the live events of the subscription in a calendar.
func owned(h *harness, cal string) int {
	n := 0
	for _, ev := range h.fake.Events(cal) {
		if gcalwriter.Owned(ev, calsyncd.Owner{}, "team") {
			n++
		}
	}
	return n
}

func noteOf(t *testing.T, h *harness) string {
	t.Helper()
	st, err := h.store.Subscription(t.Context(), "team")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(st.Notes, "\n")
}

// TestMovedCalendarIsMirroredAndTheOldOneVacated: a subscription whose
// calendar changed mirrors the feed into the new calendar on its next run
// (though the feed is unchanged), and then deletes its events, and only
// its events, from the old one, saying so (the run was
// not_modified, the new calendar stayed empty, and the old one kept its
// events forever).
func TestMovedCalendarIsMirroredAndTheOldOneVacated(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "Europe/Berlin")
	logs := captureLog(h)
	h.setFeed(weeklyFeed(20))
	h.sync()
	mine := h.fake.Seed(testCalendar, &calendar.Event{Summary: "a person's own event",
		Start: &calendar.EventDateTime{Date: "2027-02-01"}, End: &calendar.EventDateTime{Date: "2027-02-02"}})

	h.cfg.Subscriptions[0].Calendar = movedCalendar
	rep := h.sync()
	if rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Created != 20 {
		t.Fatalf("first run after the move: %s, created %d (%s)", rep.Run.Outcome, rep.Run.Created, rep.Run.Error)
	}
	if n := owned(h, movedCalendar); n != 20 {
		t.Errorf("the new calendar holds %d of the 20 events", n)
	}
	if n := owned(h, testCalendar); n != 0 {
		t.Errorf("the old calendar still holds %d of our events", n)
	}
	left := h.fake.Events(testCalendar)
	if len(left) != 1 || left[0].Id != mine.Id {
		t.Errorf("the old calendar holds %d events, want only the person's own", len(left))
	}
	st, _ := h.store.Subscription(t.Context(), "team")
	if st.Calendar != movedCalendar || len(st.Vacating) != 0 {
		t.Errorf("state after the move: calendar %s, vacating %v", st.Calendar, st.Vacating)
	}
	if !strings.Contains(noteOf(t, h), "Moved from calendar "+testCalendar) {
		t.Errorf("no note of the move: %q", noteOf(t, h))
	}
	if !strings.Contains(logs.String(), "moved_from="+testCalendar) || !strings.Contains(logs.String(), "vacated=20") {
		t.Errorf("the run's line does not tell the move:\n%s", logs.String())
	}
	// The next run is an ordinary one.
	before := totalWrites(h.writes())
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeNotModified || totalWrites(h.writes()) != before {
		t.Errorf("the run after the move: %s, %d writes", rep.Run.Outcome, totalWrites(h.writes())-before)
	}
}

// TestMoveWaitsForTheNewCalendar: while the new calendar cannot take the
// feed (here: it does not exist), the old calendar keeps its events, and
// the move completes once the new calendar is there.
func TestMoveWaitsForTheNewCalendar(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(weeklyFeed(12))
	h.sync()
	h.cfg.Subscriptions[0].Calendar = movedCalendar // not created yet
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeFailed {
		t.Fatalf("move into a missing calendar: %s", rep.Run.Outcome)
	}
	if n := owned(h, testCalendar); n != 12 {
		t.Fatalf("the old calendar holds %d of 12 events after a failed move", n)
	}
	h.fake.AddCalendar(movedCalendar, "UTC")
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK {
		t.Fatalf("move once the calendar exists: %s %s", rep.Run.Outcome, rep.Run.Error)
	}
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 0 || n != 12 {
		t.Errorf("after the move: old holds %d, new %d, want 0 and 12", o, n)
	}
}

// TestMoveKeepsTheOldCalendarWhileTheFeedIsEmpty: the guard's empty-feed
// rule holds the old calendar's deletes too.
func TestMoveKeepsTheOldCalendarWhileTheFeedIsEmpty(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(weeklyFeed(12))
	h.sync()
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	h.setFeed([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n"))
	h.sync()
	if n := owned(h, testCalendar); n != 12 {
		t.Fatalf("an empty feed emptied the old calendar: %d of 12 left", n)
	}
	if !strings.Contains(noteOf(t, h), "empty") {
		t.Errorf("the note does not say why the old calendar is kept: %q", noteOf(t, h))
	}
	h.setFeed(weeklyFeed(12))
	h.sync()
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 0 || n != 12 {
		t.Errorf("once the feed is back: old holds %d, new %d, want 0 and 12", o, n)
	}
}

// TestChangedAccountOnTheSameCalendar: a subscription now written by
// another account that can write the same calendar adopts what is there
// and deletes nothing (the calendar is the same); one whose calendar and
// account both change moves, the old account vacating the old calendar.
func TestChangedAccountOnTheSameCalendar(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	writers := map[string]subscription.Writer{}
	for _, user := range []string{"default", "work"} {
		svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(h.fake.Client(user)))
		if err != nil {
			t.Fatal(err)
		}
		writers[user] = gcalwriter.New(svc, gcalwriter.Options{Logger: log, Spacing: time.Millisecond})
	}
	h.runner.Writer = func(account string) (subscription.Writer, error) { return writers[account], nil }
	h.cfg.Accounts = []config.Account{{Name: "work"}}
	h.setFeed(weeklyFeed(15))
	h.sync()

	h.cfg.Subscriptions[0].Account = "work"
	before := h.writes()
	// The same calendar, as both accounts see it: no move, nothing to
	// write, the feed unchanged.
	rep := h.sync()
	if (rep.Run.Outcome != calsyncd.OutcomeOK && rep.Run.Outcome != calsyncd.OutcomeNotModified) || owned(h, testCalendar) != 15 {
		t.Fatalf("account changed: %s, the calendar holds %d of 15 (%s)", rep.Run.Outcome, owned(h, testCalendar), rep.Run.Error)
	}
	if w := totalWrites(h.writes()) - totalWrites(before); w != 0 {
		t.Errorf("%d writes for an account change on the same calendar, want none", w)
	}
	if st, _ := h.store.Subscription(t.Context(), "team"); st.Account != "work" || len(st.Vacating) != 0 {
		t.Errorf("state: account %s, vacating %v", st.Account, st.Vacating)
	}

	h.cfg.Subscriptions[0].Account, h.cfg.Subscriptions[0].Calendar = "default", movedCalendar
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK {
		t.Fatalf("account and calendar changed: %s %s", rep.Run.Outcome, rep.Run.Error)
	}
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 0 || n != 15 {
		t.Errorf("after the move: old holds %d, new %d, want 0 and 15", o, n)
	}
}

// TestPruneVacatesTheCalendarsLeftBehind: a subscription removed (with
// prune_on_remove) before its move was complete has its events deleted
// from the calendar it left behind too.
func TestPruneVacatesTheCalendarsLeftBehind(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(weeklyFeed(12))
	h.sync()
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	h.setFeed(weeklyFeed(0)) // empty: the old calendar is kept
	h.sync()
	st, _ := h.store.Subscription(t.Context(), "team")
	if len(st.Vacating) != 1 || owned(h, testCalendar) != 12 {
		t.Fatalf("before the prune: vacating %v, old calendar holds %d", st.Vacating, owned(h, testCalendar))
	}
	if err := h.runner.Prune(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if n := owned(h, testCalendar); n != 0 {
		t.Errorf("the calendar left behind still holds %d of our events after the prune", n)
	}
}

// TestDryRunOfAMoveWritesNothing: a dry-run of a moved subscription shows
// the mirror it would write into the new calendar and changes nothing.
func TestDryRunOfAMoveWritesNothing(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(weeklyFeed(8))
	h.sync()
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	before := totalWrites(h.writes())
	pv, err := h.runner.Preview(t.Context(), h.cfg.Subscriptions[0], subscription.Options{})
	if err != nil || pv.Err != nil {
		t.Fatalf("Preview: %v %v", err, pv.Err)
	}
	if len(pv.Creates) != 8 || len(pv.Deletes) != 0 {
		t.Errorf("the dry-run would create %d and delete %d, want the 8 events created in the new calendar", len(pv.Creates), len(pv.Deletes))
	}
	// It says what vacating the old calendar would delete.
	if len(pv.Vacate) != 1 || pv.Vacate[0].At.Calendar != testCalendar || pv.Vacate[0].Deletes != 8 || pv.Vacate[0].Err != nil {
		t.Errorf("the dry-run's vacate: %+v, want the 8 events of %s", pv.Vacate, testCalendar)
	}
	if n, _ := h.store.CountMappings(t.Context(), "team"); n != 8 || totalWrites(h.writes()) != before {
		t.Errorf("the dry-run changed something: %d mappings, %d writes", n, totalWrites(h.writes())-before)
	}
	if st, _ := h.store.Subscription(t.Context(), "team"); st.Calendar != testCalendar {
		t.Errorf("the dry-run recorded the move: calendar %s", st.Calendar)
	}
}

// TestAnotherIdOfTheSameCalendarIsNoMove: a subscription mirrored into
// `primary`, whose calendar: is then written as the account's address,
// has not moved: its events stay, none is written again and nothing is
// vacated, in either direction (the calendar was
// emptied, 12 of 12 events deleted, while status said MAPPED 12).
func TestAnotherIdOfTheSameCalendarIsNoMove(t *testing.T) {
	const address = "alice@example.com"
	for _, ids := range [][2]string{{"primary", address}, {address, "primary"}} {
		t.Run(ids[0]+" to "+ids[1], func(t *testing.T) {
			h := newHarness(t, "")
			h.fake.AddCalendar(address, "Europe/Berlin")
			h.fake.SetPrimary("", address)
			h.cfg.Subscriptions[0].Calendar = ids[0]
			h.setFeed(weeklyFeed(12))
			if rep := h.sync(); rep.Run.Created != 12 {
				t.Fatalf("first sync created %d", rep.Run.Created)
			}
			before := h.writes()
			h.cfg.Subscriptions[0].Calendar = ids[1]
			pv, err := h.runner.Preview(t.Context(), h.cfg.Subscriptions[0], subscription.Options{})
			if err != nil || len(pv.Deletes)+len(pv.Held)+len(pv.Creates) != 0 {
				t.Fatalf("dry-run: %d deletes, %d held, %d creates (%v)", len(pv.Deletes), len(pv.Held), len(pv.Creates), err)
			}
			for run := 1; run <= 2; run++ {
				rep := h.sync()
				if rep.Run.Outcome != calsyncd.OutcomeOK && rep.Run.Outcome != calsyncd.OutcomeNotModified {
					t.Fatalf("run %d: %s (%v)", run, rep.Run.Outcome, rep.Err)
				}
			}
			if n := owned(h, address); n != 12 {
				t.Fatalf("the calendar holds %d of our 12 events", n)
			}
			if after := h.writes(); totalWrites(after) != totalWrites(before) {
				t.Errorf("a rename wrote to Google: before %v after %v", before, after)
			}
			st, _ := h.store.Subscription(t.Context(), "team")
			if st.Calendar != ids[1] || len(st.Vacating) != 0 || strings.Contains(noteOf(t, h), "Moved from calendar") {
				t.Errorf("state after the rename: calendar %q, vacating %v, notes %q", st.Calendar, st.Vacating, st.Notes)
			}
			// The feed changes: the subscription writes where it always did.
			h.setFeed(weeklyFeed(13))
			if rep := h.sync(); rep.Run.Created != 1 || owned(h, address) != 13 {
				t.Errorf("after the rename a new event: created %d, calendar holds %d", rep.Run.Created, owned(h, address))
			}
		})
	}
}

// TestVacateNeverEmptiesTheCalendarWrittenTo: a calendar left behind
// under another id of the calendar being written to is never vacated.
func TestVacateNeverEmptiesTheCalendarWrittenTo(t *testing.T) {
	const address = "alice@example.com"
	h := newHarness(t, "")
	h.fake.AddCalendar(address, "Europe/Berlin")
	h.fake.SetPrimary("", address)
	h.cfg.Subscriptions[0].Calendar = address
	h.setFeed(weeklyFeed(12))
	h.sync()
	st, _ := h.store.Subscription(t.Context(), "team")
	st.Vacating = []calsyncd.Location{{Calendar: "primary", Account: st.Account}}
	if err := h.store.SaveSubscription(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	h.setFeed(weeklyFeed(13))
	h.sync()
	if n := owned(h, address); n != 13 {
		t.Fatalf("the calendar holds %d of our 13 events", n)
	}
}

// TestVacateGoesThroughTheGuard: a subscription moved while its feed lost
// 70 of its 100 events would have deleted all 100 from the old calendar,
// 70 of them the only copy left, with no guard asked:
// a move's plan in the new calendar has no deletes. Those without a copy
// in the new calendar are now held past the guard's limits, say so in the
// note and the dry-run, and go with --allow-deletes.
func TestVacateGoesThroughTheGuard(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(feedOf(0, 100))
	h.sync()
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	h.setFeed(feedOf(0, 30))
	pv, err := h.runner.Preview(t.Context(), h.cfg.Subscriptions[0], subscription.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := h.sync()
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 70 || n != 30 {
		t.Fatalf("after the move (%s): old holds %d, new %d; want 70 (held) and 30", rep.Run.Outcome, o, n)
	}
	if note := noteOf(t, h); !strings.Contains(note, "70 of them have no copy") || !strings.Contains(note, "--allow-deletes") {
		t.Errorf("the note does not say what is held and how to release it: %q", note)
	}
	if len(pv.Vacate) != 1 || pv.Vacate[0].Deletes != 30 || pv.Vacate[0].Held != 70 {
		t.Errorf("the dry-run's vacate = %+v, want 30 deletes and 70 held", pv.Vacate)
	}
	h.sync()
	if o := owned(h, testCalendar); o != 70 {
		t.Errorf("waiting released the held vacate: old holds %d, want 70", o)
	}
	h.syncWith(allowDeletes)
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 0 || n != 30 {
		t.Errorf("with --allow-deletes: old holds %d, new %d; want 0 and 30", o, n)
	}
	if note := noteOf(t, h); !strings.Contains(note, "were deleted") {
		t.Errorf("the note does not say the old calendar was vacated: %q", note)
	}
}

// TestAMoveNeverReleasesWhatTheGuardHolds: a feed shrinking 40 → 28 → 20
// → 14 has its last 6 deletes held (26 below the high-water mark of 40).
// Moving the subscription then deleted those 6 from the old calendar, the
// only copies, since 6 is under min_deletes (found by the simulation).
// They stay until --allow-deletes.
func TestAMoveNeverReleasesWhatTheGuardHolds(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	for _, n := range []int{40, 28, 20} {
		h.setFeed(feedOf(0, n))
		if rep := h.sync(); rep.Run.HeldDeletes != 0 {
			t.Fatalf("a feed of %d: %d deletes held, want none", n, rep.Run.HeldDeletes)
		}
	}
	h.setFeed(feedOf(0, 14))
	if rep := h.sync(); rep.Run.HeldDeletes != 6 {
		t.Fatalf("a feed of 14 after 40: %d deletes held, want 6", rep.Run.HeldDeletes)
	}
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	h.sync()
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 6 || n != 14 {
		t.Errorf("after the move: old holds %d, new %d; want 6 (held) and 14", o, n)
	}
	h.syncWith(allowDeletes)
	if o := owned(h, testCalendar); o != 0 {
		t.Errorf("with --allow-deletes the old calendar still holds %d", o)
	}
}

// TestAMoveLeavesStraysAlone: events ours by mark that the store did not
// map in the calendar moved away from (a lost database's strays) are left
// there, as reconcile leaves strays, until --allow-deletes. The simulation
// found a move deleting 40 such events, held before the database was lost.
func TestAMoveLeavesStraysAlone(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(feedOf(0, 40))
	h.sync()
	h.setFeed(feedOf(100, 45)) // replaced whole: the 40 deletes are held
	if rep := h.sync(); rep.Run.HeldDeletes != 40 {
		t.Fatalf("replaced feed: %d held, want 40", rep.Run.HeldDeletes)
	}
	h.store.Close()
	if err := os.RemoveAll(h.cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	h.open()
	for range 3 { // the lost database adopts, holds, then lets the 40 go as strays
		h.sync()
	}
	if o := owned(h, testCalendar); o != 85 {
		t.Fatalf("before the move the calendar holds %d of ours, want 85", o)
	}
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	rep := h.sync()
	// 40 of 85 is under the guard's half: only knowing them for strays
	// keeps them.
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 40 || n != 45 {
		t.Errorf("after the move: old holds %d, new %d; want the 40 strays left and the 45", o, n)
	}
	if rep.Run.Deleted > 45 {
		t.Errorf("the move deleted %d: more than the 45 it mirrored", rep.Run.Deleted)
	}
	h.syncWith(allowDeletes)
	if o := owned(h, testCalendar); o != 0 {
		t.Errorf("with --allow-deletes the old calendar still holds %d", o)
	}
}

// TestAMoveBackLeavesNoOrphans: moved away while the guard held deletes,
// then back before the old calendar was vacated: the events left there
// are the subscription's, not strays; their deletes wait for the guard as
// before, and --allow-deletes makes them. (Found by the simulation: they
// were forgotten as strays, and stayed for good.)
func TestAMoveBackLeavesNoOrphans(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(feedOf(0, 40))
	h.sync()
	h.setFeed(feedOf(100, 12))
	if rep := h.sync(); rep.Run.HeldDeletes != 40 {
		t.Fatalf("replaced: %d held, want 40", rep.Run.HeldDeletes)
	}
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	h.sync()
	h.cfg.Subscriptions[0].Calendar = testCalendar
	rep := h.sync()
	if rep.Run.HeldDeletes != 40 || owned(h, testCalendar) != 52 {
		t.Errorf("moved back: %d held, the calendar holds %d; want the 40 held and 52", rep.Run.HeldDeletes, owned(h, testCalendar))
	}
	h.syncWith(allowDeletes)
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 12 || n != 0 {
		t.Errorf("after --allow-deletes: %d here, %d in the calendar moved away from; want 12 and 0", o, n)
	}
}

// TestAMoveDeletesWhatTheFeedLostWithinTheGuard: a subscription moved
// while its feed lost 3 of its 100 events deletes those 3 from the old
// calendar too: the store mapped them there, so they are the
// subscription's (not strays), and 3 is within the mass-delete guard's
// limits. (The move once read the old calendar's mappings after letting
// them go, so it knew none, took them for strays and left them behind.)
func TestAMoveDeletesWhatTheFeedLostWithinTheGuard(t *testing.T) {
	h := newHarness(t, "")
	h.fake.AddCalendar(movedCalendar, "UTC")
	h.setFeed(feedOf(0, 100))
	h.sync()
	h.cfg.Subscriptions[0].Calendar = movedCalendar
	h.setFeed(feedOf(0, 97))
	rep := h.sync()
	if o, n := owned(h, testCalendar), owned(h, movedCalendar); o != 0 || n != 97 {
		t.Fatalf("after the move (%s): old holds %d, new %d; want 0 and 97", rep.Run.Outcome, o, n)
	}
	if note := noteOf(t, h); !strings.Contains(note, "were deleted") {
		t.Errorf("the note does not say the old calendar was vacated: %q", note)
	}
}
