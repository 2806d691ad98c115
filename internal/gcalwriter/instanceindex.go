package gcalwriter

import (
	"context"
	"sync"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// instanceIndex is what a batch has listed of its series' instances, by
// series id and original start (originalStart's form): the listing taken
// after a series' write (verifySeries), the one a series' overrides share
// (listSeries) and the calendar's listing of held overrides
// (listCalendar). It has one way in, add, and one way out, at.
//
// Only the series' own instances are kept (matched by recurringEventId: a
// loose answer may hold others), and a later listing's item replaces an
// earlier one's at the same original start. What an item says is never
// taken on trust beyond that: every write to a listed instance is sent
// with the etag it was listed with, so an item that went stale in the
// meantime fails the condition and is read afresh (updateInstance).
type instanceIndex struct {
	mu       sync.Mutex
	bySeries map[string]map[string]*calendar.Event
}

// add indexes a listing of the series' instances and returns what this
// listing alone shows, by original start.
func (x *instanceIndex) add(seriesID string, items []*calendar.Event) map[string]*calendar.Event {
	listed := map[string]*calendar.Event{}
	for _, in := range items {
		if in.RecurringEventId != seriesID {
			continue
		}
		if k := originalOf(in); k != "" {
			listed[k] = in
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.bySeries == nil {
		x.bySeries = map[string]map[string]*calendar.Event{}
	}
	kept := x.bySeries[seriesID]
	if kept == nil {
		kept = make(map[string]*calendar.Event, len(listed))
		x.bySeries[seriesID] = kept
	}
	for k, in := range listed {
		kept[k] = in
	}
	return listed
}

// at is the series' instance at orig as last listed in the batch, or nil.
func (x *instanceIndex) at(seriesID string, orig feed.Time) *calendar.Event {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.bySeries[seriesID][originalStart(orig)]
}

// instancesIn lists the series' instances (deleted ones included) shown
// between lo and hi, per items a page, up to pages pages. When Google no
// longer has the series (deleted by hand), the error says so (seriesGone)
// and the next reconcile restores it.
func (w *Writer) instancesIn(br *batchRun, bud *budget, seriesID string, op diff.Op, lo, hi time.Time, per int64, pages int) ([]*calendar.Event, error) {
	items, err := w.listInstances(br, bud, seriesID, pages, func(c *calendar.EventsInstancesCall) *calendar.EventsInstancesCall {
		return c.TimeMin(lo.Format(time.RFC3339)).TimeMax(hi.Format(time.RFC3339)).MaxResults(per)
	})
	if err != nil && w.classOf(err).Class == calsyncd.ClassGone {
		return nil, seriesGone(op, err)
	}
	return items, err
}

// listInstances reads events.instances of a series, deleted ones included,
// up to pages pages.
func (w *Writer) listInstances(br *batchRun, bud *budget, seriesID string, pages int,
	filter func(*calendar.EventsInstancesCall) *calendar.EventsInstancesCall) ([]*calendar.Event, error) {
	var (
		out   []*calendar.Event
		token string
	)
	for range pages {
		var page *calendar.Events
		err := w.call(br, bud, read, func(ctx context.Context) (err error) {
			call := filter(w.svc.Events.Instances(br.CalendarID, seriesID).ShowDeleted(true)).Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			page, err = call.Do(w.callOpts...)
			return err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.NextPageToken == "" {
			break
		}
		token = page.NextPageToken
	}
	return out, nil
}

// instanceAt is the item that is the series' instance at orig, or nil.
func instanceAt(items []*calendar.Event, seriesID string, orig feed.Time) *calendar.Event {
	for _, in := range items {
		if isInstanceAt(in, seriesID, orig) {
			return in
		}
	}
	return nil
}

// isInstanceAt reports whether ev is the series' instance whose original
// start is orig: the date for an all-day instance, the instant for a timed
// one.
func isInstanceAt(ev *calendar.Event, seriesID string, orig feed.Time) bool {
	return ev != nil && ev.RecurringEventId == seriesID && ev.OriginalStartTime != nil &&
		originalOf(ev) == originalStart(orig)
}

// originalOf renders an instance's originalStartTime as originalStart
// renders a feed's: the date, or the instant in UTC ("" when unreadable).
func originalOf(ev *calendar.Event) string {
	o := ev.OriginalStartTime
	switch {
	case o == nil:
		return ""
	case o.Date != "":
		return o.Date
	}
	t, err := time.Parse(time.RFC3339, o.DateTime)
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// originalStart renders an instance's original start as events.instances'
// originalStart takes it and as instances are matched: RFC 3339 in UTC for
// a timed instance, the date for an all-day one. The discovery document
// only says "the original start time of the instance"; Google may honour,
// ignore or reject the date form (gcalfake's AllDayOriginalStart), so no
// answer to it is trusted: findInstance checks every item, and falls back
// to a time window when the filter does not find the instance.
func originalStart(o feed.Time) string {
	if o.AllDay {
		return o.Date()
	}
	return o.T.UTC().Format(time.RFC3339)
}
