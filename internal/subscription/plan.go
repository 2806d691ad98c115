package subscription

import (
	"slices"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// round is one round of plan and apply.
type round struct {
	planned planned
	applied *applied // nil: the round was not applied (a dry-run)
}

// shaped is the feed as Google holds it, in round n.
type shaped struct {
	n      int
	shaped diff.Shaped
	// reach is how far past now shape wrote single events (its To).
	reach time.Duration
}

// planned is one round's plan as the guard left it, with its verdict.
type planned struct {
	shaped
	plan diff.Plan
	// kept is what the subscription's write policy (deletes: never,
	// updates: never) took out of the plan.
	kept   diff.Kept
	mapped int // mappings within the window the plan was made against
	// churn and drifted are the first round's: a feed minting new UIDs,
	// and the keys the plan writes back to the feed's version (content a
	// person edited in Google, instances of our series they edited).
	churn   *diff.UIDChurn
	drifted map[calsyncd.Key]bool
	// unguarded are the first round's deletes before the guard; filtered
	// how many of them the filters caused; cutHeld those held because the
	// body was cut before END:VCALENDAR (holdCut).
	unguarded []diff.Op
	filtered  int
	cutHeld   int
	verdict   diff.Verdict
	// peak is the guard's high-water mark of mappings, reached at peakAt.
	peak   int
	peakAt time.Time
	// creates and updates are the plan's, counted before apply took them.
	creates, updates int
}

// handedOver is the plan once apply has taken its writes: their counts,
// not their lists.
func (pl planned) handedOver() planned {
	pl.plan.Creates, pl.plan.Updates = nil, nil
	return pl
}

// shape turns the feed's events into Google's shape: overrides as
// exceptions of their series, series split at THISANDFUTURE, and series
// Google cannot hold (or refused) as single events within the window
// (bounded by a year each way when the window is open).
func shape(p pass, n int) shaped {
	win := p.cfg.EffectiveWindow(p.sub)
	now := p.parsed.now
	opts := diff.ShapeOptions{From: now.Add(-expansionReach), To: now.Add(expansionReach),
		Unsupported: p.account.writer.Unsupported, Rejected: p.known().rejections,
		MaxExpanded: p.cfg.EffectiveLimits(p.sub).MaxInstancesExpanded}
	if past := win.PastReach(); past > 0 {
		opts.From = now.Add(-past)
	}
	if win.Future > 0 {
		opts.To = now.Add(win.Future.D())
	}
	// The rendered events are let go once shaped (run), so a feed of
	// single events is shaped in their own storage, not copied beside it.
	return shaped{n: n, shaped: diff.ShapeInPlace(p.rendered.Events, opts), reach: opts.To.Sub(now)}
}

// anySeries: some of the events are recurring.
func anySeries(events []feed.Event) bool {
	for i := range events {
		if events[i].IsRecurring() {
			return true
		}
	}
	return false
}

// writesSeries: the plan writes a recurring event, which Google may
// refuse (a second round).
func writesSeries(ops []diff.Op) bool {
	return slices.ContainsFunc(ops, func(op diff.Op) bool { return op.Event != nil && op.Event.IsRecurring() })
}

// plan compares the shaped feed with what we mapped. Only the window is
// mirrored: events that aged out of it stay in Google as they are, whether
// they are still in the feed or not (with window.past: now, every event
// that ended before the pass). The write policy then takes out what the
// subscription never writes (deletes: never, updates: never), before the
// guard weighs the deletes: a kept delete is no held one. The first round
// also looks for a feed that mints new UIDs on every fetch.
func plan(p pass, sh shaped) (planned, *ending) {
	win := p.cfg.EffectiveWindow(p.sub)
	k := p.known()
	inWindow := withinWindow(k.mappings, p.parsed.cal.Outside, p.parsed.now.Add(-win.PastReach()), win.PastReach() > 0)
	pl := planned{shaped: sh}
	if sh.n == 1 {
		pl.drifted, inWindow = p.drifted(sh.shaped.Events, inWindow)
	}
	pl.plan, pl.kept = diff.Compute(sh.shaped.Events, inWindow, k.rejections).Keep(p.writes())
	pl.mapped = len(inWindow)
	if sh.n == 1 {
		churn := diff.DetectUnstableUIDs(sh.shaped.Events, inWindow)
		pl.churn = &churn
		return p.guard(pl)
	}
	return p.follow(pl)
}

// drifted finds the mapped events a person edited in Google (reconcile's
// listing against the shaped feed) and clears their hash in a copy of the
// mappings the plan is made against, so that it writes them back; with
// the instances of our series reconcile found edited, they are the keys
// the plan writes back.
func (p pass) drifted(shaped []feed.Event, inWindow []calsyncd.Mapping) (map[calsyncd.Key]bool, []calsyncd.Mapping) {
	rp := p.repaired
	if rp == nil {
		return nil, inWindow
	}
	drifted := make(map[calsyncd.Key]bool, len(rp.edited))
	for _, k := range rp.edited {
		drifted[k] = true
	}
	if rp.owned == nil {
		return drifted, inWindow
	}
	keys := diff.Drifted(shaped, inWindow, rp.owned)
	if len(keys) == 0 {
		return drifted, inWindow
	}
	for _, k := range keys {
		drifted[k] = true
	}
	out := slices.Clone(inWindow)
	for i := range out {
		if drifted[out[i].Key] {
			out[i].Hash = ""
		}
	}
	return drifted, out
}
