package gcalwriter

import (
	"context"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// verifySeries checks, after a series was updated, what became of its
// exceptions, and repairs them. Google does not document what an update of
// a series does to them: it may keep them, rewrite their fields from the
// series (as its "all events" edit does), or drop them (when the start or
// the rule changed); and an exception whose original start is no longer
// an occurrence may be hidden or still shown. So instead of assuming, one
// listing of the series' instances (deleted ones included, bounded by a
// window around the exceptions, paged, each item matched by its original
// start) shows them as Google holds them now:
//
//   - an exception of op.Exceptions that no longer shows what the feed
//     means (dropped back to the plain instance, or overwritten from the
//     series) is written again, with the etag just read;
//   - one that still does is left alone, its etag refreshed if it changed;
//   - an exception of op.Forgotten (off the new rule) still listed and not
//     cancelled is deleted, so that it does not show beside the event the
//     override became;
//   - the listing is kept for the batch, so the series' other exceptions
//     written after it need no lookup.
//
// The listing costs one read per updated series that has exceptions; the
// repairs are writes only where Google changed something. When the listing
// fails, the exceptions' mappings are marked stale, so the next run writes
// them (and checks them again).
func (w *Writer) verifySeries(br *batchRun, op diff.Op) {
	seriesID := op.Mapping.EventID
	br.mu.Lock()
	if s := br.series[op.Key]; s.id != "" {
		seriesID = s.id
	}
	br.mu.Unlock()
	lo, hi, ok := exceptionsWindow(op)
	if !ok {
		return
	}
	items, err := w.listInstances(br, &budget{}, seriesID, maxLookupPages, func(c *calendar.EventsInstancesCall) *calendar.EventsInstancesCall {
		return c.TimeMin(lo.Format(time.RFC3339)).TimeMax(hi.Format(time.RFC3339)).MaxResults(2500)
	})
	if err != nil {
		w.log.Warn("cannot check the exceptions of a series after writing it; they are written again next run",
			"subscription", br.SubscriptionID, "event", op.Key.String(), "error", err)
		for _, ex := range op.Exceptions {
			m := *ex.Mapping
			m.Hash = ""
			if perr := w.saved(br, ex, m); perr != nil {
				w.settle(br, ex, perr)
				return
			}
		}
		return
	}
	byStart := map[string]*calendar.Event{}
	for _, in := range items {
		if in.RecurringEventId == seriesID {
			if k := originalOf(in); k != "" {
				byStart[k] = in
			}
		}
	}
	br.mu.Lock()
	if br.instances == nil {
		br.instances = map[string]map[string]*calendar.Event{}
	}
	br.instances[seriesID] = byStart
	br.mu.Unlock()

	for _, ex := range op.Exceptions {
		if br.stopErr() != nil {
			return
		}
		ex.Parent = op.Event
		in := byStart[originalStart(ex.Event.Original)]
		if in == nil {
			// Not where we looked: the usual way finds it, or says it
			// is missing.
			w.settle(br, ex, w.repairException(br, ex))
			continue
		}
		want := ToGoogle(br.SubscriptionID, ex.Event)
		if SameContent(want, in) {
			if in.Etag != ex.Mapping.ETag || in.Id != ex.Mapping.EventID {
				m := *ex.Mapping
				m.EventID, m.ETag = in.Id, in.Etag
				if perr := w.saved(br, ex, m); perr != nil {
					w.settle(br, ex, perr)
					return
				}
			}
			continue
		}
		w.settle(br, ex, w.repairException(br, ex))
	}
	for _, m := range op.Forgotten {
		if br.stopErr() != nil {
			return
		}
		t, ok := feed.ParseRecurrenceID(m.Key.Start(), op.Event.Start)
		if !ok {
			continue
		}
		in := byStart[originalStart(feed.Time{AllDay: op.Event.Start.AllDay, T: t})]
		if in == nil || in.Status == feed.StatusCancelled {
			continue
		}
		fop := diff.Op{Kind: diff.Delete, Key: m.Key, Mapping: &calsyncd.Mapping{Key: m.Key, EventID: in.Id, ETag: in.Etag}}
		w.settle(br, fop, w.deleteOffRule(br, fop))
	}
}

// repairException writes an exception Google changed back to the feed's.
func (w *Writer) repairException(br *batchRun, ex diff.Op) error {
	err := w.writeInstance(br, &budget{}, ex)
	if err == nil {
		br.update(func(r *calsyncd.WriteResult) { r.ExceptionsRepaired++ })
	}
	return err
}

// deleteOffRule deletes an exception Google still shows off its series'
// rule. The mapping itself goes with the plan's Forget.
func (w *Writer) deleteOffRule(br *batchRun, op diff.Op) error {
	err := w.call(br, &budget{}, write, func(ctx context.Context) error {
		call := w.svc.Events.Delete(br.CalendarID, op.Mapping.EventID).SendUpdates("none").Context(ctx)
		call.Header().Set("If-Match", op.Mapping.ETag)
		return call.Do(w.callOpts...)
	})
	if err != nil {
		switch w.classOf(err).Class {
		case calsyncd.ClassGone:
			return nil
		case calsyncd.ClassPrecondition:
			// Changed since the listing: the next series write checks
			// again; nothing is deleted blind.
			return nil
		}
		return err
	}
	br.update(func(r *calsyncd.WriteResult) { r.ExceptionsRepaired++ })
	return nil
}

// exceptionsWindow bounds where the exceptions of op can be shown: around
// their original starts and where their overrides put them.
func exceptionsWindow(op diff.Op) (lo, hi time.Time, ok bool) {
	extend := func(a, b time.Time) {
		if !ok || a.Before(lo) {
			lo = a
		}
		if !ok || b.After(hi) {
			hi = b
		}
		ok = true
	}
	for _, ex := range op.Exceptions {
		extend(instanceWindow(ex.Event, op.Event))
	}
	const margin = 48 * time.Hour
	length := op.Event.End.T.Sub(op.Event.Start.T)
	for _, m := range op.Forgotten {
		if t, tok := feed.ParseRecurrenceID(m.Key.Start(), op.Event.Start); tok {
			// Where its override put it ends at EndsAt.
			a, b := t, t.Add(length)
			if !m.EndsAt.IsZero() {
				a, b = minTime(a, m.EndsAt), maxTime(b, m.EndsAt)
			}
			extend(a.Add(-margin).UTC(), b.Add(margin).UTC())
		}
	}
	return lo, hi, ok
}
