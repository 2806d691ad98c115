package subscription_test

import (
	"context"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestARunThatDiedIsReconciledAtOnce: a process killed between Google's
// answers and their commit leaves events in Google that no mapping knows.
// The next run, in a new process, sees that a run never finished and
// reconciles at once: an event the feed still has is adopted (no
// duplicate), and one the feed dropped meanwhile is reported as held
// rather than left unknown until the daily reconcile.
func TestARunThatDiedIsReconciledAtOnce(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(feedOf(0, 10))
	h.sync()
	h.setFeed(feedOf(0, 13)) // three new events
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h.runner.Store = &killStore{Store: h.store, left: 0, cancel: cancel}
	h.runner.Sync(ctx, h.cfg.Subscriptions[0], subscription.Options{})
	h.store.Close()
	h.open()
	logs := captureLog(h)
	h.setFeed(feedOf(0, 10)) // the feed dropped the new events again
	rep := h.sync()
	if !strings.Contains(logs.String(), "never finished") {
		t.Errorf("the run after the kill did not say it reconciles:\n%s", logs.String())
	}
	strays := len(live(h)) - 10
	if strays < 1 {
		t.Fatalf("the killed run wrote nothing to Google (%d events): the test kills too early", len(live(h)))
	}
	if rep.Run.HeldDeletes != strays {
		t.Errorf("the run after the kill held %d deletes, want the %d events the killed run wrote unrecorded", rep.Run.HeldDeletes, strays)
	}
	h.syncWith(subscription.Options{Reconcile: true, AllowDeletes: true})
	if n := len(live(h)); n != 10 {
		t.Errorf("after --reconcile --allow-deletes Google holds %d events, want the feed's 10", n)
	}
	mapped, err := h.store.CountMappings(t.Context(), "team")
	if err != nil || mapped != 10 {
		t.Errorf("the store maps %d events (%v), want 10", mapped, err)
	}
}
