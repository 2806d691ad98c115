package subscription

import (
	"time"
)

// The window moves with time; a feed that never changes does not. What a
// render leaves out beyond the window's end (an event past it, the RDATEs
// of a second RRULE written so far, the occurrences of a series written as
// single events) is written only by a later render, so each render says
// when the next one would write more (feed.Calendar.RereadAt,
// diff.Shaped.Horizon), the subscription keeps the earliest
// (SubscriptionState.RereadAt), and the first pass after it reads the feed
// in full, whatever its validators or body hash say. An unchanged feed
// costs one render per horizon reached, not one per pass.

// rereadDue: the window has moved past what the last render wrote.
func (p pass) rereadDue() bool {
	at := p.found.RereadAt
	return !at.IsZero() && p.run.StartedAt.After(at)
}

// rereadAt is when the feed must be read in full again after this pass's
// render (zero: never), rounded up to the store's milliseconds so that
// the pass due is never one that renders the same.
func (p pass) rereadAt() time.Time {
	var at time.Time
	if p.parsed.cal != nil {
		at = p.parsed.cal.RereadAt
	}
	pl := p.lastPlan()
	if pl == nil {
		return at
	}
	if h := pl.shaped.shaped.Horizon; !h.IsZero() {
		// Shaping writes more once its To (now + reach) passes h.
		at = earliestTime(at, h.Add(-pl.reach))
	}
	if at.IsZero() {
		return at
	}
	// What is left out lies at the window's far end: it may come a little
	// late, so that a feed with a weekly series written as single events
	// renders about monthly, not weekly.
	at = latest(at, p.parsed.now.Add(min(max(pl.reach/12, time.Hour), 30*24*time.Hour)))
	if r := at.Truncate(time.Millisecond); !r.Equal(at) {
		at = r.Add(time.Millisecond)
	}
	return at
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earliestTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
