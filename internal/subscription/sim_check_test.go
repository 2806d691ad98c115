package subscription_test

import (
	"fmt"
	"maps"
	"testing"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
)

// check verifies the invariants after a step; it returns the first
// violation ("" none).
func (w *simWorld) check(t *testing.T, run simRun, before int, was calsyncd.SubscriptionState) string {
	h := w.h
	ctx := t.Context()
	if run.violation != "" {
		return run.violation
	}
	if why := w.policyViolation(); why != "" {
		return why
	}
	if w.neverDelete {
		w.kept = true
		// Events the feed no longer has stay in a calendar moved away
		// from, unmapped, as a lost database's would.
		for _, cal := range []string{simAddress, simMoved} {
			if cal != w.calendar() && len(w.ownedIn(cal)) > 0 {
				w.lostElsewhere, w.strays = true, true
			}
		}
	}
	// Another owner's events are never changed or deleted by our runs.
	if w.other != nil && !maps.Equal(w.marked("other"), w.theirs) {
		return "our run changed or deleted the other installation's events"
	}
	// A person's events are never changed or deleted.
	people := map[string]*calendar.Event{}
	for _, ev := range h.fake.AllEvents(simAddress) {
		people[ev.Id] = ev
	}
	for id, etag := range w.persons {
		ev := people[id]
		if ev == nil || ev.Status == "cancelled" || ev.Etag != etag {
			return fmt.Sprintf("a person's event %s was changed or deleted", id)
		}
	}
	owned := w.ownedIn(w.calendar())
	n := 0
	for _, c := range owned {
		n += c
	}
	// The guard: without --allow-deletes no run deletes more than the
	// guard lets through, weighed against what was there and against the
	// most there was, unless the same deletes were held for confirm_runs
	// runs in a row before it. Counted by event, in either calendar.
	g := h.cfg.Sync.DeleteGuard
	w.peakOwned = max(w.peakOwned, before)
	confirmed := was.GuardRuns >= g.ConfirmRuns-1 && !was.GuardByConfig
	now := w.distinct()
	if d := before - now; !run.allowed && !confirmed && d > 0 {
		if d > g.MinDeletes && float64(d) > g.MaxFraction*float64(before) {
			return fmt.Sprintf("one run deleted %d of our %d events without --allow-deletes", d, before)
		}
		if lost := w.peakOwned - now; lost > g.MinDeletes && float64(lost) > g.MaxFraction*float64(w.peakOwned) {
			return fmt.Sprintf("a run deleted %d, leaving %d of the peak of %d without --allow-deletes", d, now, w.peakOwned)
		}
	}
	if run.allowed || confirmed {
		w.peakOwned = now
	}
	st, err := h.store.Subscription(ctx, "team")
	if err != nil {
		return err.Error()
	}
	// A body cut before END:VCALENDAR never deletes (without the
	// operator's --allow-deletes), and one cut after its last event is
	// mirrored, not refused.
	if d := run.rep.Run.Deleted; run.cut && !run.allowed && d > 0 {
		return fmt.Sprintf("a body cut before END:VCALENDAR deleted %d events", d)
	}
	if run.unterminated && !run.faults && run.rep.Run.Outcome == calsyncd.OutcomeFailed && run.rep.Run.ErrorClass == calsyncd.ClassFeedInvalid {
		return "a feed without END:VCALENDAR was refused: " + run.rep.Run.Error
	}
	if c := run.rep.Run.ErrorClass; run.rateOnly && st.State == calsyncd.StateError && was.State != calsyncd.StateError &&
		(c == calsyncd.ClassRateLimited || c == calsyncd.ClassUsageLimited) {
		return "a rate or usage limit made the subscription ERROR"
	}
	if c := run.rep.Run.ErrorClass; (c == calsyncd.ClassRateLimited || c == calsyncd.ClassUsageLimited) && st.ConsecutiveErrors > was.ConsecutiveErrors {
		return fmt.Sprintf("a %s run counted toward ERROR (%d in a row)", c, st.ConsecutiveErrors)
	}
	if run.outage && run.rep.Run.ErrorClass == calsyncd.ClassInternal {
		return "a Google 5xx outage was reported as internal: " + run.rep.Run.Error
	}
	if run.shutdown && (run.rep.Run.Outcome != calsyncd.OutcomeDeferred || st.ConsecutiveErrors > was.ConsecutiveErrors) {
		return fmt.Sprintf("a shutdown counted as a failure: %s, %d errors in a row (was %d)", run.rep.Run.Outcome, st.ConsecutiveErrors, was.ConsecutiveErrors)
	}
	// After a clean run Google holds the feed's events (after the
	// filters), once each, and the store maps exactly Google's.
	r := run.rep.Run
	if r.Outcome != calsyncd.OutcomeOK || r.HeldDeletes > 0 || run.faults || run.badFeed {
		return ""
	}
	w.clean++
	if w.kept && !w.neverDelete {
		// The first clean run under mirror deleted what was kept.
		w.kept = false
	} else if w.kept {
		// What deletes: never keeps stays: only what must be there is
		// checked.
		for u, s := range w.feed {
			if (w.excluded == nil || !w.excluded.MatchString(s)) && owned[u] != 1 {
				return fmt.Sprintf("after a clean run under deletes: never, %s is in Google %d times", u, owned[u])
			}
		}
		return ""
	}
	if w.lostElsewhere {
		w.lostElsewhere = false
		for _, cal := range []string{simAddress, simMoved} {
			if cal != w.calendar() && len(w.ownedIn(cal)) > 0 {
				w.lostElsewhere = true
			}
		}
	}
	for u, s := range w.feed {
		if w.excluded != nil && w.excluded.MatchString(s) {
			if owned[u] > 0 && !w.strays {
				return fmt.Sprintf("after a clean run, excluded event %s is in Google", u)
			}
			continue
		}
		if owned[u] != 1 {
			return fmt.Sprintf("after a clean run, %s is in Google %d times", u, owned[u])
		}
	}
	mapped, err := h.store.CountMappings(ctx, "team")
	if err != nil {
		return err.Error()
	}
	if !w.strays {
		for u, c := range owned {
			if _, ok := w.feed[u]; !ok && c > 0 {
				return fmt.Sprintf("after a clean run, %s is in Google but no longer in the feed", u)
			}
		}
		if mapped != n {
			return fmt.Sprintf("after a clean run the store maps %d events, Google holds %d of ours", mapped, n)
		}
		// Once nothing is left to vacate, the calendar moved away from
		// holds none of ours.
		if len(st.Vacating) == 0 && !w.lostElsewhere {
			for _, cal := range []string{simAddress, simMoved} {
				if left := w.ownedIn(cal); cal != w.calendar() && len(left) > 0 {
					return fmt.Sprintf("after a clean run with nothing to vacate, %s still holds %d of our events", cal, len(left))
				}
			}
		}
	}
	if run.allowed && r.Repaired == 0 && mapped == n {
		w.strays = false
	}
	return ""
}
