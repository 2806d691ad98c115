package subscription

import (
	"context"
	"fmt"
	"slices"

	calsyncd "github.com/calsyncd/calsyncd"
)

// A subscription whose calendar or account changed has moved: its events
// are in the calendar it had (the store keeps that until the move is
// made), not in the one configured. The pass then mirrors the feed into
// the new calendar from scratch, and vacates the old one once the new one
// holds the feed.
//
//	move       notice the move: plan against nothing mapped, read the feed
//	           in full, reconcile the new calendar (adopting what is ours)
//	reconcile  lets go of the old calendar's mappings first
//	vacate     after a clean run: delete our events, and only ours, from
//	           each calendar left behind, through the account that wrote
//	           them; kept while the feed is empty (the guard's rule)

// moved is the move stage's result.
type moved struct {
	// from is where the events were until this run (nil: not moved).
	from *calsyncd.Location
	// known are the event ids the store mapped in the calendar moved away
	// from, read before the move lets them go: what vacate may weigh as
	// the subscription's. Ours by mark but not here are strays.
	known map[string]bool
	// renamed: the calendar configured is the one the events are in,
	// under another of its ids ("primary" and the account's address).
	renamed bool
}

// here is where the subscription's events belong now.
func (p pass) here() calsyncd.Location {
	return calsyncd.Location{Calendar: p.sub.Calendar, Account: p.sub.AccountName()}
}

// moving reports whether the pass moves the subscription or has calendars
// left behind to vacate: the feed is read in full then.
func (p pass) moving() bool { return p.moved.from != nil || len(p.found.Vacating) > 0 }

// move notices a subscription whose calendar or account changed since its
// events were written: the mappings it has are the old calendar's, so the
// run plans against none, reads the feed without validators and
// reconciles, which adopts whatever the new calendar already holds of ours
// (the same calendar seen by another account, or a move back).
//
// Calendars are compared as Google names them, not as the configuration
// spells them: "primary" and the account's address are one calendar, and
// a subscription whose calendar: changed from one to the other has not
// moved (its events are where they were; vacating that calendar would
// empty it). When Google cannot say (rate-limited, no answer), the pass
// is deferred: nothing is moved on a guess.
func (r *Runner) move(ctx context.Context, p pass) (moved, *ending) {
	was := calsyncd.Location{Calendar: p.found.Calendar, Account: p.found.Account}
	if was.Calendar == "" || was == p.here() {
		return moved{}, nil
	}
	same, err := r.sameCalendar(ctx, p, was)
	switch {
	case err != nil:
		return moved{}, stop(calsyncd.OutcomeDeferred, err)
	case same:
		return moved{renamed: true}, nil
	}
	mappings, err := r.Store.Mappings(ctx, p.sub.ID)
	if err != nil {
		return moved{}, stop(calsyncd.OutcomeFailed, err)
	}
	m := moved{from: &was, known: make(map[string]bool, len(mappings))}
	for _, mp := range mappings {
		m.known[mp.EventID] = true
	}
	return m, nil
}

// sameCalendar: the calendar at loc, as its account sees it, is the one
// the subscription is configured to write, as its account sees it. A
// calendar Google says is not there (or an account no longer configured)
// is another calendar; no answer is an error.
func (r *Runner) sameCalendar(ctx context.Context, p pass, loc calsyncd.Location) (bool, error) {
	if loc.Calendar == p.sub.Calendar && loc.Account == p.sub.AccountName() {
		return true, nil
	}
	here, err := p.account.writer.CalendarID(ctx, p.sub.Calendar)
	if err != nil {
		return false, fmt.Errorf("subscription: cannot tell whether calendar %s is the one the events are in: %w", p.sub.Calendar, err)
	}
	w, err := r.Writer(loc.Account)
	if err != nil {
		return false, nil
	}
	there, err := w.CalendarID(ctx, loc.Calendar)
	if err != nil {
		return false, fmt.Errorf("subscription: cannot tell whether calendar %s is the one the events are in: %w", loc.Calendar, err)
	}
	return here != "" && here == there, nil
}

// letGo forgets the old calendar's mappings before the new calendar's are
// made (reconcile's adoptions, apply's writes), and reports whether it
// did: settle then records the move. A run that ends before this point
// leaves the subscription where it was, and the next run moves it again.
func (r *Runner) letGo(ctx context.Context, p pass) (bool, *ending) {
	if p.moved.from == nil || p.dryRun {
		return false, nil
	}
	if err := r.Store.DeleteMappings(context.WithoutCancel(ctx), p.sub.ID); err != nil {
		return false, stop(calsyncd.OutcomeFailed, err)
	}
	return true, nil
}

// moveApplied: the old calendar's mappings were let go this run.
func (p pass) moveApplied() bool { return p.repaired != nil && p.repaired.letGo }

// movingBack: the subscription moves to a calendar it had left and not
// yet vacated; what of ours is there, it wrote.
func (p pass) movingBack() bool {
	return p.moved.from != nil && slices.Contains(p.found.Vacating, p.here())
}

// leftBehind are the calendars the subscription has moved away from that
// may still hold its events.
func (p pass) leftBehind() []calsyncd.Location {
	here := p.here()
	var out []calsyncd.Location
	for _, l := range p.found.Vacating {
		if l != here && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	if p.moveApplied() && *p.moved.from != here && !slices.Contains(out, *p.moved.from) {
		out = append(out, *p.moved.from)
	}
	return out
}
