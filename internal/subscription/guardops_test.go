package subscription_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// feedOf is an ICS feed of the weekly events numbered from to from+n.
func feedOf(from, n int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//guard test//EN\r\n")
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:g%04d@example.com\r\nDTSTART;VALUE=DATE:2027%02d%02d\r\nSUMMARY:Event %d\r\nEND:VEVENT\r\n",
			i, 1+(i%300)/28, 1+(i%300)%28, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

// TestAFeedReplacedWholeIsHeldUntilConfirmed: 100 events, then a feed of
// 110 new UIDs. The first run creates the 110 and holds the 100 deletes;
// the second must not weigh them against the 210 the first run's creates
// made: the 100 go on the third run, as
// confirm_runs says.
func TestAFeedReplacedWholeIsHeldUntilConfirmed(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(feedOf(0, 100))
	h.sync()
	h.setFeed(feedOf(1000, 110))
	var deleted, held []int
	for range 3 {
		rep := h.sync()
		deleted, held = append(deleted, rep.Run.Deleted), append(held, rep.Run.HeldDeletes)
	}
	t.Logf("deleted per run %v, held per run %v", deleted, held)
	if fmt.Sprint(deleted) != "[0 0 100]" || fmt.Sprint(held) != "[100 100 0]" {
		t.Errorf("deleted %v, held %v: want [0 0 100] and [100 100 0]", deleted, held)
	}
	if n := len(live(h)); n != 110 {
		t.Errorf("calendar holds %d events, want the 110 of the new feed", n)
	}
}

// TestAFilterTypoWaitsForTheOperator: an include that matches nothing
// would delete every event after confirm_runs; the deletes follow a change
// of the configuration, so only --allow-deletes releases them, and the
// dry-run says so.
func TestAFilterTypoWaitsForTheOperator(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(feedOf(0, 50))
	h.sync()
	h.cfg.Subscriptions[0].Filters = []config.Filter{filter(false, "summary", "^nomatch$")}
	for run := 1; run <= 5; run++ {
		rep := h.sync()
		if rep.Run.Deleted != 0 || rep.Run.HeldDeletes != 50 {
			t.Fatalf("run %d: deleted %d, held %d: a filter's deletes wait for the operator", run, rep.Run.Deleted, rep.Run.HeldDeletes)
		}
	}
	if n := len(live(h)); n != 50 {
		t.Fatalf("calendar holds %d events, want 50", n)
	}
	pvs, err := h.runner.Preview(t.Context(), h.cfg.Subscriptions[0], subscription.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvs.Held) != 50 || !strings.Contains(pvs.HeldWhy, "change of the configuration") || !strings.Contains(pvs.HeldWhy, "--allow-deletes team") {
		t.Errorf("dry-run: %d held, why %q", len(pvs.Held), pvs.HeldWhy)
	}
	if rep := h.syncWith(subscription.Options{AllowDeletes: true}); rep.Run.Deleted != 50 {
		t.Errorf("--allow-deletes deleted %d, want 50", rep.Run.Deleted)
	}
}

// TestAdoptedEventsAreNeverDeletedByTheRunThatAdoptedThem: a lost
// database's reconcile finds our events in Google; those the feed no
// longer has are held — whatever the counts, and on later runs too — and
// go only with --allow-deletes.
func TestAdoptedEventsAreNeverDeletedByTheRunThatAdoptedThem(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(feedOf(0, 40))
	h.sync()
	h.store.Close()
	if err := os.RemoveAll(h.cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	h.open()
	h.setFeed(feedOf(0, 37)) // 3 fewer: under min_deletes, so no count would hold them
	rep := h.sync()
	if rep.Run.Deleted != 0 || rep.Run.HeldDeletes != 3 {
		t.Fatalf("after a lost database: deleted %d, held %d; want the 3 adopted deletes held", rep.Run.Deleted, rep.Run.HeldDeletes)
	}
	for run := 2; run <= 4; run++ {
		if rep := h.sync(); rep.Run.Deleted != 0 {
			t.Fatalf("run %d deleted %d adopted events", run, rep.Run.Deleted)
		}
	}
	if n := len(live(h)); n != 40 {
		t.Fatalf("calendar holds %d events, want all 40", n)
	}
	pv, err := h.runner.Preview(t.Context(), h.cfg.Subscriptions[0], subscription.Options{Reconcile: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Held) != 3 || pv.Held[0].Reason != subscription.ReasonAdopted || !strings.Contains(pv.HeldWhy, "does not know it wrote") {
		t.Errorf("dry-run: held %+v, why %q", pv.Held, pv.HeldWhy)
	}
	if rep := h.syncWith(subscription.Options{Reconcile: true, AllowDeletes: true}); rep.Run.Deleted != 3 {
		t.Errorf("--reconcile --allow-deletes deleted %d, want 3", rep.Run.Deleted)
	}
	if n := len(live(h)); n != 37 {
		t.Errorf("calendar holds %d events, want 37", n)
	}
}

// TestAGoogleOutageIsTransient: writes Google answers 5xx, beyond the
// writer's retries, fail the run as class transient (it once
// was "internal", see the daemon's log).
func TestAGoogleOutageIsTransient(t *testing.T) {
	h := newHarness(t, "")
	h.fake.SetFaults(gcalfake.Faults{WriteOutage: 1})
	h.setFeed(feedOf(0, 5))
	rep := h.sync()
	if rep.Run.Outcome != calsyncd.OutcomeFailed || rep.Run.ErrorClass != calsyncd.ClassTransient {
		t.Fatalf("a write outage: %s, class %q (%s)", rep.Run.Outcome, rep.Run.ErrorClass, rep.Run.Error)
	}
	if !strings.Contains(rep.Run.Error, "server errors") {
		t.Errorf("the error does not say what happened: %s", rep.Run.Error)
	}
}
