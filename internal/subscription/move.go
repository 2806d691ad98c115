package subscription

import (
	"context"
	"fmt"
	"slices"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// A subscription whose calendar or account changed has moved: its events
// are in the calendar it had (the store keeps that until the move is
// made), not in the one configured. The pass then mirrors the feed into
// the new calendar from scratch, and vacates the old one once the new one
// holds the feed (issue 15: a changed calendar used to orphan every event
// in the old one, and leave the new one empty until the feed changed).
//
//	move       notice the move: plan against nothing mapped, read the feed
//	           in full, reconcile the new calendar (adopting what is ours)
//	reconcile  lets go of the old calendar's mappings first
//	vacate     after a clean run: delete our events, and only ours, from
//	           each calendar left behind, through the account that wrote
//	           them; kept while the feed is empty (the guard's rule)

// vacatedCalendar is what vacate did with one calendar left behind.
type vacatedCalendar struct {
	at      calsyncd.Location
	deleted int
	// held are the deletes the guard keeps back: events with no copy in
	// the new calendar (see vacatePlan).
	held int
	err  error
}

// here is where the subscription's events belong now.
func (p pass) here() calsyncd.Location {
	return calsyncd.Location{Calendar: p.sub.Calendar, Account: p.sub.AccountName()}
}

// moving reports whether the pass moves the subscription or has calendars
// left behind to vacate: the feed is read in full then.
func (p pass) moving() bool { return p.movedFrom != nil || len(p.found.Vacating) > 0 }

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
func (r *Runner) move(ctx context.Context, p pass) pass {
	was := calsyncd.Location{Calendar: p.found.Calendar, Account: p.found.Account}
	if was.Calendar == "" || was == p.here() {
		return p
	}
	same, err := r.sameCalendar(ctx, p, was)
	switch {
	case err != nil:
		return p.stop(calsyncd.OutcomeDeferred, err)
	case same:
		p.renamed = true
		return p
	}
	p.movedFrom = &was
	p.movedKnown = make(map[string]bool, len(p.known.mappings))
	for _, m := range p.known.mappings {
		p.movedKnown[m.EventID] = true
	}
	p.known.mappings = nil
	p.firstSync, p.reconcileDue = true, true
	return p
}

// sameCalendar: the calendar at loc, as its account sees it, is the one
// the subscription is configured to write, as its account sees it. A
// calendar Google says is not there (or an account no longer configured)
// is another calendar; no answer is an error.
func (r *Runner) sameCalendar(ctx context.Context, p pass, loc calsyncd.Location) (bool, error) {
	if loc.Calendar == p.sub.Calendar && loc.Account == p.sub.AccountName() {
		return true, nil
	}
	here, err := p.writer.CalendarID(ctx, p.sub.Calendar)
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
// made (reconcile's adoptions, apply's writes). Settle then records the
// move; a run that ends before this point leaves the subscription where
// it was, and the next run moves it again.
func (r *Runner) letGo(ctx context.Context, p pass) pass {
	if p.movedFrom == nil || p.moveApplied || p.dryRun {
		return p
	}
	if err := r.Store.DeleteMappings(context.WithoutCancel(ctx), p.sub.ID); err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	p.moveApplied = true
	return p
}

// movingBack: the subscription moves to a calendar it had left and not
// yet vacated; what of ours is there, it wrote.
func (p pass) movingBack() bool {
	return p.movedFrom != nil && slices.Contains(p.found.Vacating, p.here())
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
	if p.moveApplied && *p.movedFrom != here && !slices.Contains(out, *p.movedFrom) {
		out = append(out, *p.movedFrom)
	}
	return out
}

// vacateWait says why the calendars left behind keep their events for now
// ("" when they may go): only a run that read the feed and left nothing
// behind proves the new calendar holds it, and an empty feed holds them as
// the mass-delete guard holds an empty feed's deletes.
func (p pass) vacateWait() string {
	if e := p.ending(); p.round == 0 || e.outcome != calsyncd.OutcomeOK || !e.keep {
		return "kept until a run has mirrored the whole feed into " + p.sub.Calendar
	}
	if len(p.shaped.Events) == 0 && !p.opts.AllowDeletes {
		return "kept while the feed is empty (as the mass-delete guard holds an empty feed's deletes; `calsyncd sync --allow-deletes " + p.sub.ID + "` releases them)"
	}
	return ""
}

// vacate deletes the subscription's events from the calendars it left
// behind, once the new calendar holds the feed.
func (r *Runner) vacate(ctx context.Context, p pass) pass {
	left := p.leftBehind()
	if len(left) == 0 {
		return p
	}
	if p.vacateHeld = p.vacateWait(); p.vacateHeld != "" {
		return p
	}
	for _, loc := range left {
		p.vacated = append(p.vacated, r.vacateOne(ctx, p, loc))
	}
	return p
}

// vacateOne deletes our events from one calendar left behind, as listed
// there (our marks, verified) by the account that wrote them.
func (r *Runner) vacateOne(ctx context.Context, p pass, loc calsyncd.Location) vacatedCalendar {
	v := vacatedCalendar{at: loc}
	// Never vacate the calendar being written to, under whatever id it
	// was left behind.
	if same, err := r.sameCalendar(ctx, p, loc); err != nil || same {
		v.err = err
		return v
	}
	w, err := r.Writer(loc.Account)
	if err != nil {
		v.err = err
		return v
	}
	owned, err := w.ListOwned(ctx, loc.Calendar, p.sub.ID)
	if err != nil {
		v.err = err
		return v
	}
	ops, held := p.vacatePlan(owned, loc)
	v.held = len(held)
	if len(ops) == 0 {
		return v
	}
	// The old calendar's events are no mappings of ours any more: the
	// deletes record nothing.
	res := w.Apply(ctx, diff.Batch{SubscriptionID: p.sub.ID, CalendarID: loc.Calendar, Ops: ops, Drain: p.opts.Drain}, duplicateSweeper{})
	v.deleted = res.Deleted
	switch {
	case res.Err != nil:
		v.err = res.Err
	case res.Deleted < len(ops):
		v.err = fmt.Errorf("subscription: %d of %d events not deleted yet (%d deferred, %d failed); the next run goes on",
			len(ops)-res.Deleted, len(ops), res.Deferred, res.Failed)
	}
	return v
}

// movedNotePrefix starts the notes of a move.
const movedNotePrefix = "Moved from calendar"

// vacatePlan is what vacating loc deletes and what it holds. An event of
// ours there whose event the feed still has has its copy in the new
// calendar (vacating waits for a run that mirrored the whole feed), so it
// goes. One the feed no longer has would be the only copy deleted: those
// go through the mass-delete guard's limits as any delete does, and past
// them wait for --allow-deletes (a move is the operator's change, which
// waiting never confirms): weighed against what the old calendar holds
// and against the high-water mark, and never released while the guard
// held deletes before.
func (p pass) vacatePlan(owned []diff.Owned, loc calsyncd.Location) (deletes, held []diff.Op) {
	ops := diff.Vacate(owned, p.known.mappings, loc.Calendar == p.sub.Calendar)
	inFeed := make(map[string]bool, len(p.shaped.Events))
	for i := range p.shaped.Events {
		inFeed[p.shaped.Events[i].UID] = true
	}
	var unmirrored, strays []diff.Op
	for _, op := range ops {
		switch {
		case inFeed[op.Key.UID]:
			deletes = append(deletes, op)
		case p.movedKnown[op.Mapping.EventID]:
			unmirrored = append(unmirrored, op)
		default:
			// Ours by mark, but the store did not map it there (a lost
			// database, a run that died before recording, the same
			// owner's other installation), or a calendar left in an
			// earlier run, whose mappings are gone: a stray, left alone
			// as reconcile leaves strays, until --allow-deletes.
			strays = append(strays, op)
		}
	}
	if p.writes().NeverDelete {
		// deletes: never: an event the feed no longer has would leave no
		// copy; it stays in the calendar moved away from (unmapped, its
		// mapping was the old calendar's), neither deleted nor held.
		return deletes, nil
	}
	if p.opts.AllowDeletes {
		return append(append(deletes, unmirrored...), strays...), nil
	}
	g := p.cfg.Sync.DeleteGuard
	over := func(lost, of int) bool { return lost > g.MinDeletes && float64(lost) > g.MaxFraction*float64(of) }
	switch {
	case len(unmirrored) == 0:
	case over(len(unmirrored), len(ops)),
		// The feed is down from the high-water mark by more than the
		// guard allows, or the guard held deletes before the move: a
		// move must not release what the guard holds.
		over(p.peak-len(p.shaped.Events), p.peak), p.found.HeldDeletes > 0:
		return deletes, append(unmirrored, strays...)
	}
	return append(deletes, unmirrored...), strays
}

// moveState folds the move into the subscription's next state: where its
// events are now, the calendars still to vacate, and a note for each.
func (p pass) moveState(st calsyncd.SubscriptionState) calsyncd.SubscriptionState {
	if p.moveApplied || p.renamed {
		here := p.here()
		st.Calendar, st.Account = here.Calendar, here.Account
	}
	done := map[calsyncd.Location]vacatedCalendar{}
	for _, v := range p.vacated {
		if v.err == nil && v.held == 0 {
			done[v.at] = v
		}
	}
	st.Vacating = nil
	st.Notes = withoutNotePrefix(st.Notes, movedNotePrefix)
	for _, loc := range p.leftBehind() {
		if v, ok := done[loc]; ok {
			st.Notes = append(st.Notes, fmt.Sprintf("%s %s (account %s) to %s: its %d events there were deleted on %s",
				movedNotePrefix, loc.Calendar, loc.Account, p.sub.Calendar, v.deleted, p.run.StartedAt.UTC().Format(time.RFC3339)))
			continue
		}
		st.Vacating = append(st.Vacating, loc)
		why := p.vacateHeld
		for _, v := range p.vacated {
			switch {
			case v.at == loc && v.err != nil:
				why = fmt.Sprintf("not yet (%v); tried again every run", v.err)
			case v.at == loc && v.held > 0:
				why = fmt.Sprintf("%d of them have no copy in %s (the feed no longer has them) and are held as the mass-delete guard holds deletes; `calsyncd sync --allow-deletes %s` deletes them",
					v.held, p.sub.Calendar, p.sub.ID)
			}
		}
		st.Notes = append(st.Notes, fmt.Sprintf("%s %s (account %s) to %s: its events there are deleted once %s holds the feed; %s",
			movedNotePrefix, loc.Calendar, loc.Account, p.sub.Calendar, p.sub.Calendar, why))
	}
	return st
}

// moveFindings are the run line's account of a move.
func (p pass) moveFindings(add func(warn bool, kv ...any)) {
	if p.moveApplied {
		add(true, "moved_from", p.movedFrom.Calendar, "moved_from_account", p.movedFrom.Account)
	}
	deleted, failed, held := 0, 0, 0
	for _, v := range p.vacated {
		deleted += v.deleted
		held += v.held
		if v.err != nil {
			failed++
			add(true, "vacate_error", v.err.Error(), "vacate_calendar", v.at.Calendar)
		}
	}
	if len(p.vacated) > 0 {
		add(true, "vacated", deleted)
	}
	if held > 0 {
		add(true, "vacate_held_deletes", held)
	}
	if p.vacateHeld != "" {
		add(true, "vacate_held", p.vacateHeld)
	}
}
