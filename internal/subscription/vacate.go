package subscription

import (
	"context"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// vacated is the vacate stage's result: what became of each calendar left
// behind, or why they all keep their events for now.
type vacated struct {
	calendars []vacatedCalendar
	held      string
}

// vacatedCalendar is what vacate did with one calendar left behind.
type vacatedCalendar struct {
	at      calsyncd.Location
	deleted int
	// held are the deletes the guard keeps back: events with no copy in
	// the new calendar (see vacatePlan).
	held int
	err  error
}

// vacate deletes the subscription's events from the calendars it left
// behind, once the new calendar holds the feed.
func (r *Runner) vacate(ctx context.Context, p pass) vacated {
	left := p.leftBehind()
	if len(left) == 0 {
		return vacated{}
	}
	if why := p.vacateWait(); why != "" {
		return vacated{held: why}
	}
	var v vacated
	for _, loc := range left {
		v.calendars = append(v.calendars, r.vacateOne(ctx, p, loc))
	}
	return v
}

// vacateWait says why the calendars left behind keep their events for now
// ("" when they may go): only a run that read the feed and left nothing
// behind proves the new calendar holds it, and an empty feed holds them as
// the mass-delete guard holds an empty feed's deletes.
func (p pass) vacateWait() string {
	if e := p.ending(); len(p.rounds) == 0 || e.outcome != calsyncd.OutcomeOK || !e.keep {
		return "kept until a run has mirrored the whole feed into " + p.sub.Calendar
	}
	if len(p.shapedEvents()) == 0 && !p.opts.AllowDeletes {
		return "kept while the feed is empty (as the mass-delete guard holds an empty feed's deletes; `calsyncd sync --allow-deletes " + p.sub.ID + "` releases them)"
	}
	return ""
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
	ops := diff.Vacate(owned, p.known().mappings, loc.Calendar == p.sub.Calendar)
	shaped := p.shapedEvents()
	inFeed := make(map[string]bool, len(shaped))
	for i := range shaped {
		inFeed[shaped[i].UID] = true
	}
	var unmirrored, strays []diff.Op
	for _, op := range ops {
		switch {
		case inFeed[op.Key.UID]:
			deletes = append(deletes, op)
		case p.moved.known[op.Mapping.EventID]:
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
	peak := p.guardPeak()
	switch {
	case len(unmirrored) == 0:
	case over(len(unmirrored), len(ops)),
		// The feed is down from the high-water mark by more than the
		// guard allows, or the guard held deletes before the move: a
		// move must not release what the guard holds.
		over(peak-len(shaped), peak), p.found.HeldDeletes > 0:
		return deletes, append(unmirrored, strays...)
	}
	return append(deletes, unmirrored...), strays
}

// movedKind starts the notes of a move.
const movedKind noteKind = "Moved from calendar"

// settle folds the move and what vacate did into the next state: where
// the events are now, the calendars still to vacate, and a note for each.
func (v vacated) settle(p pass, s *settling) {
	if p.moveApplied() || p.moved.renamed {
		here := p.here()
		s.state.Calendar, s.state.Account = here.Calendar, here.Account
	}
	done := map[calsyncd.Location]vacatedCalendar{}
	for _, c := range v.calendars {
		if c.err == nil && c.held == 0 {
			done[c.at] = c
		}
	}
	s.state.Vacating = nil
	var notes []string
	for _, loc := range p.leftBehind() {
		if c, ok := done[loc]; ok {
			notes = append(notes, fmt.Sprintf("%s %s (account %s) to %s: its %d events there were deleted on %s",
				movedKind, loc.Calendar, loc.Account, p.sub.Calendar, c.deleted, p.run.StartedAt.UTC().Format(time.RFC3339)))
			continue
		}
		s.state.Vacating = append(s.state.Vacating, loc)
		notes = append(notes, fmt.Sprintf("%s %s (account %s) to %s: its events there are deleted once %s holds the feed; %s",
			movedKind, loc.Calendar, loc.Account, p.sub.Calendar, p.sub.Calendar, v.why(p, loc)))
	}
	s.note(movedKind, notes...)
	v.findings(p, s)
}

// why a calendar left behind still holds the subscription's events.
func (v vacated) why(p pass, loc calsyncd.Location) string {
	why := v.held
	for _, c := range v.calendars {
		switch {
		case c.at == loc && c.err != nil:
			why = fmt.Sprintf("not yet (%v); tried again every run", c.err)
		case c.at == loc && c.held > 0:
			why = fmt.Sprintf("%d of them have no copy in %s (the feed no longer has them) and are held as the mass-delete guard holds deletes; `calsyncd sync --allow-deletes %s` deletes them",
				c.held, p.sub.Calendar, p.sub.ID)
		}
	}
	return why
}

// findings are the run line's account of a move.
func (v vacated) findings(p pass, s *settling) {
	if p.moveApplied() {
		s.find(true, "moved_from", p.moved.from.Calendar, "moved_from_account", p.moved.from.Account)
	}
	deleted, held := 0, 0
	for _, c := range v.calendars {
		deleted += c.deleted
		held += c.held
		if c.err != nil {
			s.find(true, "vacate_error", c.err.Error(), "vacate_calendar", c.at.Calendar)
		}
	}
	if len(v.calendars) > 0 {
		s.find(true, "vacated", deleted)
	}
	if held > 0 {
		s.find(true, "vacate_held_deletes", held)
	}
	if v.held != "" {
		s.find(true, "vacate_held", v.held)
	}
}
