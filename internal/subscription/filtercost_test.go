package subscription_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/render"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestACostlyFilterFailsThePassNamingIt: a filter whose matching takes
// longer than limits.filter_time (here each match "takes" 1s on the
// test's clock) fails the pass with feed_over_limit and an error naming
// it, and writes and deletes nothing — in the sync and in the dry-run.
func TestACostlyFilterFailsThePassNamingIt(t *testing.T) {
	h := newHarness(t, "")
	h.setFeed(feedOf(0, 50))
	if rep := h.sync(); rep.Run.Created != 50 {
		t.Fatalf("first sync created %d", rep.Run.Created)
	}
	var ticks atomic.Int64
	base := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	h.runner.FilterClock = func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * 500 * time.Millisecond) }
	h.cfg.Limits.FilterTime = config.Duration(10 * time.Second)
	h.cfg.Subscriptions[0].Filters = []config.Filter{
		filter(false, "summary", "Event"),
		filter(true, "description", `[\p{L}\p{N}]{1000}Z`),
	}
	writes := h.fake.Stats().AcceptedWrites
	rep := h.sync()
	var be *render.FilterBudgetError
	if rep.Run.Outcome != calsyncd.OutcomeFailed || !errors.As(rep.Err, &be) || be.Filter != 0 && be.Filter != 1 {
		t.Fatalf("outcome %s, err %v: want a failed run naming the filter", rep.Run.Outcome, rep.Err)
	}
	if rep.Run.ErrorClass != calsyncd.ClassFeedOverLimit {
		t.Errorf("class %q, want feed_over_limit", rep.Run.ErrorClass)
	}
	if msg := rep.Err.Error(); !strings.Contains(msg, "limits.filter_time") || !strings.Contains(msg, "filters[") {
		t.Errorf("error does not say which filter and which limit: %s", msg)
	}
	if be.Done >= 50 || be.Done == 0 {
		t.Errorf("the budget ran out after %d of 50 events, want it to stop early", be.Done)
	}
	if h.fake.Stats().AcceptedWrites != writes || len(live(h)) != 50 {
		t.Errorf("a failed render wrote %d times; the calendar holds %d of 50", h.fake.Stats().AcceptedWrites-writes, len(live(h)))
	}
	pv, err := h.runner.Preview(t.Context(), h.cfg.Subscriptions[0], subscription.Options{})
	if err == nil && pv.Err == nil || !errors.As(errors.Join(err, pv.Err), &be) {
		t.Errorf("dry-run: %v / %v, want the filter budget's error", err, pv.Err)
	}
	// A generous budget lets the same filters through.
	h.cfg.Limits.FilterTime = config.Duration(time.Hour)
	if rep := h.sync(); rep.Run.Outcome == calsyncd.OutcomeFailed {
		t.Errorf("within the budget: %v", rep.Err)
	}
}
