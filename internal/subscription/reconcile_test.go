package subscription_test

import (
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// byTitle finds one of the calendar's stored events.
func byTitle(t *testing.T, h *harness, summary string) *calendar.Event {
	t.Helper()
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.Summary == summary {
			return ev
		}
	}
	t.Fatalf("no event %q", summary)
	return nil
}

func TestReconcileRestoresEventsDeletedByHand(t *testing.T) {
	for _, title := range []string{"Quarterly planning", "Team sync"} {
		t.Run(title, func(t *testing.T) {
			h := newHarness(t, teamFeed)
			h.sync()
			seen := len(h.agenda())
			victim := byTitle(t, h, title)
			h.fake.Delete(testCalendar, victim.Id)
			// An ordinary run trusts the database: nothing is due.
			h.sync()
			if len(h.agenda()) == seen {
				t.Fatal("expected the deletion to stand until a reconcile")
			}
			before := h.writes()
			h.syncWith(subscription.Options{Reconcile: true})
			// A series comes back with its exceptions.
			if got := len(h.agenda()); got != seen {
				t.Fatalf("after reconcile a person sees %d occurrences, want %d", got, seen)
			}
			if after := h.writes(); totalWrites(after)-totalWrites(before) != 1 {
				t.Errorf("restoring one event took writes %v → %v, want exactly one", before, after)
			}
			restored := false
			for _, ev := range h.fake.Events(testCalendar) {
				restored = restored || ev.Id == victim.Id
			}
			if !restored {
				t.Error("the event was recreated under a new id instead of restored")
			}
		})
	}
}

func TestReconcileRemovesDuplicates(t *testing.T) {
	h := newHarness(t, teamFeed)
	h.sync()
	stored := len(h.fake.Events(testCalendar))
	orig := byTitle(t, h, "Quarterly planning")
	// A copy of one of our events under another id (say, from an older
	// version that generated ids differently).
	dup := *orig
	dup.Id = "abcdefghij0123456789"
	h.fake.Seed(testCalendar, &dup)
	if len(h.fake.Events(testCalendar)) != stored+1 {
		t.Fatal("seeding the duplicate failed")
	}
	h.syncWith(subscription.Options{Reconcile: true})
	evs := h.fake.Events(testCalendar)
	if len(evs) != stored {
		t.Fatalf("after reconcile the calendar holds %d events, want %d", len(evs), stored)
	}
	for _, ev := range evs {
		if ev.Id == dup.Id {
			t.Fatal("the duplicate survived; the original was deleted instead")
		}
	}
}

func TestReconcileRunsDailyOnItsOwn(t *testing.T) {
	h := newHarness(t, teamFeed)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h.runner.Now = func() time.Time { return now }
	h.sync()
	stored := len(h.fake.Events(testCalendar))
	victim := byTitle(t, h, "Release 4.2 go/no-go")
	h.fake.Delete(testCalendar, victim.Id)
	now = now.Add(23 * time.Hour)
	h.sync()
	if len(h.fake.Events(testCalendar)) != stored-1 {
		t.Fatal("reconciled before a day had passed")
	}
	now = now.Add(2 * time.Hour)
	h.sync()
	if len(h.fake.Events(testCalendar)) != stored {
		t.Fatal("no reconcile after a day")
	}
}

func TestReconcileNeverTouchesEventsOfOtherSubscriptions(t *testing.T) {
	h := newHarness(t, teamFeed)
	other := h.fake.Seed(testCalendar, &calendar.Event{Summary: "Other subscription's",
		Start: &calendar.EventDateTime{Date: "2027-01-20"}, End: &calendar.EventDateTime{Date: "2027-01-21"},
		ExtendedProperties: &calendar.EventExtendedProperties{Private: map[string]string{
			gcalwriter.PropSubscription: "holidays", gcalwriter.PropUID: "x@example.com"}}})
	h.syncWith(subscription.Options{Reconcile: true})
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.Id == other.Id && ev.Etag == other.Etag {
			return
		}
	}
	t.Fatal("another subscription's event was modified or deleted")
}
