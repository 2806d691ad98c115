package subscription

import (
	"context"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// renderEvents is the render stage: the subscription's filters and
// presentation (internal/render) applied to the parsed events, so that
// shape, plan and the hash see what Google should show. Events the
// filters take out are planned like events that left the feed. It runs
// for every subscription, a policy or none: it also holds what Google
// shows to Google's caps.
//
// Its filters may spend limits.filter_time matching: past it the pass
// fails (class feed_over_limit) naming the filter, and writes and deletes
// nothing.
func (r *Runner) renderEvents(ctx context.Context, p pass) pass {
	var err error
	p.rendered, err = render.Render(p.cal.Events, p.policy, render.Context{Subscription: p.sub.ID, CalendarName: p.cal.Name,
		FilterBudget: p.cfg.EffectiveLimits(p.sub).FilterTime.D(), Clock: r.FilterClock})
	if err != nil {
		return p.failed(ctx, fmt.Errorf("render: %w", err))
	}
	cal := *p.cal
	cal.Events = p.rendered.Events
	p.cal = &cal
	return p
}

// excludedUIDs are the UIDs of the events the filters took out: every
// event shaped from them has one.
func excludedUIDs(excluded []feed.Event) map[string]bool {
	if len(excluded) == 0 {
		return nil
	}
	out := make(map[string]bool, len(excluded))
	for i := range excluded {
		out[excluded[i].UID] = true
	}
	return out
}

// filteredDeletes counts the deletes of events the filters took out (a
// filter change rather than a feed that lost them).
func filteredDeletes(deletes []diff.Op, excluded []feed.Event) int {
	uids := excludedUIDs(excluded)
	n := 0
	for _, op := range deletes {
		if uids[op.Key.UID] {
			n++
		}
	}
	return n
}

// filterNotePrefix starts the note on deletes held because of filters.
const filterNotePrefix = "filters: "

// renderNotes are the standing notes the render stage leaves: the feed's
// alarms that reminders: feed could not mirror, and held deletes that a
// filter change caused.
func (p pass) renderNotes(st *calsyncd.SubscriptionState) {
	st.Notes = withoutNotePrefix(st.Notes, render.NotePrefix)
	if note := p.rendered.Skipped.Note(); note != "" {
		st.Notes = append(st.Notes, note)
	}
	st.Notes = withoutNotePrefix(st.Notes, filterNotePrefix)
	if p.verdict.Held > 0 && p.filtered > 0 {
		st.Notes = append(st.Notes, p.filterHeldNote())
	}
}

func (p pass) filterHeldNote() string {
	return fmt.Sprintf("%s%d of the %d deletes the mass-delete guard holds are events the subscription's filters now exclude (a filter change, not a broken feed): run `calsyncd sync --dry-run %s` to see them and `calsyncd sync --allow-deletes %s` if the filters are meant",
		filterNotePrefix, min(p.filtered, p.verdict.Held), p.verdict.Held, p.sub.ID, p.sub.ID)
}

// FilterObserver is an Observer that also counts the events filters
// excluded (the metrics).
type FilterObserver interface {
	EventsFiltered(subscription string, n int)
}

func (r *Runner) observeFiltered(id string, n int) {
	if o, ok := r.Observer.(FilterObserver); ok && n > 0 {
		o.EventsFiltered(id, n)
	}
}

// RepairObserver is an Observer that also counts the events a reconcile
// wrote back after a person edited them in Google (the metrics).
type RepairObserver interface {
	EventsRepaired(subscription string, n int)
}

func (r *Runner) observeRepaired(id string, n int) {
	if o, ok := r.Observer.(RepairObserver); ok && n > 0 {
		o.EventsRepaired(id, n)
	}
}
