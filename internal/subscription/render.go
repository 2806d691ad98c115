package subscription

import (
	"context"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// rendered is the render stage's result: the events as Google should show
// them, what the filters took out (and why), and the alarms left behind.
type rendered struct {
	render.Result
	// count is how many events the feed has within the window, kept when
	// the events themselves are let go (released); inFeed the keys of the
	// rejections among them, for forgetRejections.
	count  int
	gone   bool
	inFeed map[calsyncd.Key]bool
}

// render is the render stage: the subscription's filters and presentation
// (internal/render) applied to the parsed events, so that shape, plan and
// the hash see what Google should show. Events the filters take out are
// planned like events that left the feed. It runs for every subscription,
// a policy or none: it also holds what Google shows to Google's caps.
//
// Its filters may spend limits.filter_time matching: past it the pass
// fails (class feed_over_limit) naming the filter, and writes and deletes
// nothing.
func (r *Runner) render(ctx context.Context, p pass) (rendered, *ending) {
	cal := p.parsed.cal
	res, err := render.Render(cal.Events, p.policy, render.Context{Subscription: p.sub.ID, CalendarName: cal.Name,
		FilterBudget: p.cfg.EffectiveLimits(p.sub).FilterTime.D(), Clock: r.FilterClock})
	if err != nil {
		return rendered{}, failed(ctx, fmt.Errorf("render: %w", err))
	}
	return rendered{Result: res, count: len(res.Events)}, nil
}

// released lets go of the feed's events once the first round has shaped
// them and no second round can need them (Google refuses only series):
// the shaped events are what plan, apply and vacate read, so a huge feed
// is not held twice while it is written. What the later stages read of
// the feed itself is kept: its size, and which of the rejections it still
// has.
func (rd rendered) released(k known) rendered {
	if rd.gone {
		return rd
	}
	if len(k.rejections) > 0 {
		rejected := make(map[calsyncd.Key]bool, len(k.rejections))
		for _, rj := range k.rejections {
			rejected[rj.Key] = true
		}
		rd.inFeed = map[calsyncd.Key]bool{}
		for i := range rd.Events {
			if key := rd.Events[i].Key(); rejected[key] {
				rd.inFeed[key] = true
			}
		}
	}
	rd.Events, rd.gone = nil, true
	return rd
}

// alarmsKind starts the note on the feed's alarms that reminders: feed
// could not mirror.
const alarmsKind noteKind = noteKind(render.NotePrefix)

// settle counts what the filters excluded, and leaves the note on alarms
// that could not be mirrored once the run planned.
func (rd rendered) settle(p pass, s *settling) {
	s.run.Filtered = len(rd.Excluded)
	if p.parsed.cal != nil {
		s.state.Filtered = len(rd.Excluded)
	}
	if len(p.rounds) > 0 {
		s.note(alarmsKind, rd.Skipped.Note())
	}
	if n := len(rd.Excluded); n > 0 {
		s.find(false, "filtered", n)
	}
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
