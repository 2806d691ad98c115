package gcalwriter

import (
	"errors"
	"time"

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
// them (and checks them again), and the forgotten ones are deleted.
func (w *Writer) verifySeries(br *batchRun, op diff.Op) {
	seriesID := op.Mapping.EventID
	br.mu.Lock()
	recreated := br.series[op.Key].id != "" && br.series[op.Key].id != seriesID
	br.mu.Unlock()
	if recreated {
		// Written under a new id: its exceptions stayed with the old
		// event, and the pass writes them again (RecreatedSeries).
		return
	}
	lo, hi, ok := exceptionsWindow(op)
	if !ok {
		return
	}
	items, err := w.instancesIn(br, &budget{}, seriesID, op, lo, hi, 2500, maxLookupPages)
	if err != nil {
		w.log.Warn("cannot check the exceptions of a series after writing it; they are written again next run",
			"subscription", br.SubscriptionID, "event", op.Key.String(), "error", err)
		for _, ex := range op.Exceptions {
			m := *ex.Mapping
			m.Hash = ""
			if perr := w.saved(br, ex, m); perr != nil {
				w.stopWith(br, persistError(br, ex, perr).err)
				return
			}
		}
		// Deleting one of ours off the rule is harmless where Google
		// hides it already.
		for _, f := range op.Forgotten {
			m := f.Mapping
			br.mu.Lock()
			if br.offRule == nil {
				br.offRule = map[calsyncd.Key]offRuleHit{}
			}
			br.offRule[m.Key] = offRuleHit{id: m.EventID, series: op, seriesID: seriesID}
			br.mu.Unlock()
		}
		return
	}
	byStart := br.listings.add(seriesID, items)

	for _, ex := range op.Exceptions {
		if br.stopErr() != nil {
			return
		}
		ex.Parent = op.Event
		in := byStart[originalStart(ex.Event.Original)]
		if in != nil && SameContent(ToGoogle(w.o.Owner.Name, br.SubscriptionID, ex.Event), in) {
			if in.Etag != ex.Mapping.ETag || in.Id != ex.Mapping.EventID {
				m := *ex.Mapping
				m.EventID, m.ETag = in.Id, in.Etag
				if perr := w.saved(br, ex, m); perr != nil {
					w.stopWith(br, persistError(br, ex, perr).err)
					return
				}
			}
			continue
		}
		// Changed, or not where we looked (the usual way finds it, or
		// says it is missing).
		w.repairException(br, ex)
	}
	for _, f := range op.Forgotten {
		m := f.Mapping
		in := byStart[originalStart(f.Original)]
		if in == nil || in.Status == feed.StatusCancelled {
			continue
		}
		// Its Forget op, later in this batch, deletes it.
		br.mu.Lock()
		if br.offRule == nil {
			br.offRule = map[calsyncd.Key]offRuleHit{}
		}
		br.offRule[m.Key] = offRuleHit{id: in.Id, series: op, seriesID: seriesID}
		br.mu.Unlock()
	}
}

// repairException writes an exception Google changed back to the feed's.
// It is no op of the plan: its success counts as none of the result's
// ops, and when it fails the exception's mapping is marked stale, so that the
// next run writes it as an update.
func (w *Writer) repairException(br *batchRun, ex diff.Op) {
	br.mu.Lock()
	if br.repairs == nil {
		br.repairs = map[calsyncd.Key]bool{}
	}
	br.repairs[ex.Key] = true
	br.mu.Unlock()
	err := w.writeInstance(br, &budget{}, ex)
	if err == nil {
		return
	}
	w.log.Warn("cannot repair an exception its series' write changed; it is written again next run",
		"subscription", br.SubscriptionID, "event", ex.Key.String(), "error", err)
	switch v, c := w.judge(err); v {
	case unrecorded:
		var u *unrecordedError
		errors.As(err, &u)
		w.stopWith(br, u.err)
		return
	case fatal:
		var e *Error
		errors.As(err, &e)
		w.stopWith(br, e)
	case authFailed:
		w.stopWith(br, &Error{Subscription: br.SubscriptionID, Op: "update", Class: c.Class, Code: c.Code, Reason: c.Reason, Msg: c.Message, Err: err})
	}
	m := *ex.Mapping
	m.Hash = ""
	if perr := w.saved(br, ex, m); perr != nil {
		w.stopWith(br, persistError(br, ex, perr).err)
	}
}

// offRuleHit is an exception a series' check found still shown off the
// series' rule, for its Forget op to delete.
type offRuleHit struct {
	id       string
	series   diff.Op
	seriesID string
}

func (br *batchRun) offRuleHit(k calsyncd.Key) (offRuleHit, bool) {
	br.mu.Lock()
	defer br.mu.Unlock()
	h, ok := br.offRule[k]
	return h, ok
}

// staleSeries marks a series' mapping stale, so that the next run writes
// it, and checks its exceptions, again.
func (w *Writer) staleSeries(br *batchRun, hit offRuleHit) {
	m := *hit.series.Mapping
	m.EventID, m.Hash = hit.seriesID, ""
	if perr := w.saved(br, hit.series, m); perr != nil {
		w.stopWith(br, persistError(br, hit.series, perr).err)
	}
}

// repairing reports whether an instance write is a repair (repairException).
func (br *batchRun) repairing(k calsyncd.Key) bool {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.repairs[k]
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
	for _, f := range op.Forgotten {
		// Where its override put it ends at EndsAt.
		a, b := f.Original.T, f.Original.T.Add(length)
		if !f.Mapping.EndsAt.IsZero() {
			a, b = minTime(a, f.Mapping.EndsAt), maxTime(b, f.Mapping.EndsAt)
		}
		extend(a.Add(-margin).UTC(), b.Add(margin).UTC())
	}
	return lo, hi, ok
}
