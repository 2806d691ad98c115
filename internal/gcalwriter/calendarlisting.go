package gcalwriter

import (
	"context"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// Where instance ids are opaque, an override whose instance is neither
// mapped nor listed needs a lookup: one read per override, and a feed of
// many series with one override each would cost two requests per
// override. Instead, such overrides are held back until the batch's other
// ops are written (their series are in Google then), and, when they are
// of several series, one paged events.list with singleEvents over a
// window holding all of them lists their instances at once
// (listCalendar); those of a single series share a listing of its own
// instances (listSeries). Each override then finds its
// instance in that listing, matched by recurringEventId and original
// start; one the listing misses is looked up as before.

// maxCalendarPages bounds the pages of that listing: it is never dearer
// than half the lookups it replaces, and at most 8 pages of 2,500.
const maxCalendarPages = 8

// holdable reports whether op is an override to hold back for the
// calendar listing: the batch writes at least two overrides that need a
// lookup, this one needs it (no mapped instance id, not listed yet, its
// series in Google), and derived ids of its kind are known not to work.
func (w *Writer) holdable(br *batchRun, op diff.Op) bool {
	if !br.holding || !needsLookup(op) {
		return false
	}
	if _, usable := w.ids.state(op.Event.Original.AllDay, w.clock.Now()); usable {
		return false
	}
	seriesID, _, refused := br.seriesOf(op)
	return !refused && seriesID != "" && br.listings.at(seriesID, op.Event.Original) == nil
}

// needsLookup: an override created or updated without the id of its
// instance.
func needsLookup(op diff.Op) bool {
	if op.Forget || op.Key.Kind() != calsyncd.Instance || op.Event == nil || op.Event.Original.IsZero() {
		return false
	}
	switch op.Kind {
	case diff.Create:
		return true
	case diff.Update:
		return op.Mapping == nil || op.Mapping.EventID == ""
	}
	return false
}

// lookups counts the batch's ops that may need a lookup of their instance.
func lookups(ops []diff.Op) int {
	n := 0
	for _, op := range ops {
		if needsLookup(op) {
			n++
		}
	}
	return n
}

// hold keeps op for after the batch's other ops.
func (br *batchRun) hold(op diff.Op) {
	br.mu.Lock()
	defer br.mu.Unlock()
	br.held = append(br.held, op)
}

func (br *batchRun) takeHeld() []diff.Op {
	br.mu.Lock()
	defer br.mu.Unlock()
	held := br.held
	br.held, br.holding = nil, false
	return held
}

// listCalendar lists, in one paged events.list with singleEvents and
// showDeleted, the instances in a window holding every held override's
// instance, and keeps those of the overrides' series for the batch, by
// series id and original start. Nothing in it is trusted beyond that: an
// item is kept only under the series its recurringEventId names, and only
// for series the batch holds, so another's event in the window (or one a
// loose filter lets through) is never matched, never written; cancelled
// items are left to each override's own lookup. Paging stops
// once every held override's instance is found. A failed listing only
// costs the lookups it would have saved.
func (w *Writer) listCalendar(br *batchRun, held []diff.Op) {
	type want struct{ series, start string }
	wanted := map[want]bool{}
	series := map[string]bool{}
	var lo, hi time.Time
	for i, op := range held {
		id, _, _ := br.seriesOf(op)
		if id == "" {
			continue
		}
		wanted[want{id, originalStart(op.Event.Original)}] = true
		series[id] = true
		a, b := instanceWindow(op.Event, op.Parent)
		if i == 0 || a.Before(lo) {
			lo = a
		}
		if i == 0 || b.After(hi) {
			hi = b
		}
	}
	if len(wanted) < 2 || len(series) < 2 {
		// The overrides of a single series share a listing of its own
		// instances (listSeries): no other series' instances to page
		// through.
		return
	}
	pages := min((len(wanted)+1)/2, maxCalendarPages)
	found := map[string][]*calendar.Event{}
	token := ""
	for range pages {
		var page *calendar.Events
		err := w.call(br, &budget{}, read, func(ctx context.Context) (err error) {
			call := w.svc.Events.List(br.CalendarID).SingleEvents(true).ShowDeleted(true).
				TimeMin(lo.Format(time.RFC3339)).TimeMax(hi.Format(time.RFC3339)).MaxResults(2500).Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			page, err = call.Do(w.callOpts...)
			return err
		})
		if err != nil {
			w.log.Debug("cannot list the calendar's instances; each override is looked up",
				"subscription", br.SubscriptionID, "error", err)
			break
		}
		for _, in := range page.Items {
			if !series[in.RecurringEventId] || in.Status == "cancelled" {
				// Not ours; or cancelled, which this listing may show
				// of a series a person deleted too ("only single deleted
				// instances are returned"): the override's own lookup
				// asks the series.
				continue
			}
			found[in.RecurringEventId] = append(found[in.RecurringEventId], in)
			delete(wanted, want{in.RecurringEventId, originalOf(in)})
		}
		if page.NextPageToken == "" || len(wanted) == 0 {
			break
		}
		token = page.NextPageToken
	}
	for id, items := range found {
		br.listings.add(id, items)
	}
}
