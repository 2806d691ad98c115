package gcalwriter

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// ListOwned lists every event of the calendar that carries the
// subscription's marks, deleted ones included: one filtered, paged read
// instead of a get per event. A single privateExtendedProperty constraint is
// used because Google documents repeated ones both as AND and as OR.
func (w *Writer) ListOwned(ctx context.Context, calendarID, subscriptionID string) ([]diff.Owned, error) {
	// The pages go through the account's pacer like every request; the
	// listing is a batch of its own for the retry rules.
	br := &batchRun{Batch: diff.Batch{SubscriptionID: subscriptionID, CalendarID: calendarID}, ctx: ctx, prio: Incremental}
	br.gate, br.cancel = context.WithCancelCause(ctx)
	defer br.cancel(nil)
	var (
		out     []diff.Owned
		token   string
		foreign = map[string]int{}
	)
	for {
		var page *calendar.Events
		err := w.call(br, &budget{}, read, func(ctx context.Context) (err error) {
			call := w.svc.Events.List(calendarID).PrivateExtendedProperty(PropSubscription + "=" + subscriptionID).
				ShowDeleted(true).MaxResults(2500).Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			page, err = call.Do(w.callOpts...)
			return err
		})
		if err != nil {
			return nil, &classedError{class: w.classOf(err).Class, err: fmt.Errorf("gcalwriter: list owned events of %s: %w", subscriptionID, err)}
		}
		for _, ev := range page.Items {
			if !Owned(ev, w.o.Owner, subscriptionID) {
				if sub, owner, ok := Marks(ev); ok && sub == subscriptionID {
					foreign[owner]++
				}
				continue
			}
			p := ev.ExtendedProperties.Private
			o := diff.Owned{
				Key:       calsyncd.Key{UID: p[PropUID], RecurrenceID: p[PropRecurrenceID]},
				EventID:   ev.Id,
				Hash:      p[PropHash],
				ETag:      ev.Etag,
				Cancelled: ev.Status == "cancelled",
			}
			if t, err := time.Parse(time.RFC3339, ev.Updated); err == nil {
				o.Updated = t
			}
			if ev.RecurringEventId != "" {
				o.Instance, o.Original = true, originalID(ev.OriginalStartTime)
			}
			o.Content = googleCopy{owner: w.o.Owner.Name, sub: subscriptionID, ev: ev}
			out = append(out, o)
		}
		if page.NextPageToken == "" {
			w.foreignOwners(calendarID, subscriptionID, foreign)
			return out, nil
		}
		token = page.NextPageToken
	}
}

// classedError carries the class of an error that stops no batch (a
// listing), for the caller's logs.
type classedError struct {
	class calsyncd.ErrorClass
	err   error
}

func (e *classedError) Error() string                   { return e.err.Error() }
func (e *classedError) Unwrap() error                   { return e.err }
func (e *classedError) ErrorClass() calsyncd.ErrorClass { return e.class }

// googleCopy is Google's copy of an owned event, for reconcile's drift
// check: it shows a feed event when it holds what we would write for it
// (SameContent: our stamp and every field we write, times as instants; a
// person's reminders and colour count only where the subscription sets
// them).
type googleCopy struct {
	owner, sub string
	ev         *calendar.Event
}

func (g googleCopy) Shows(ev *feed.Event) bool {
	return SameContent(ToGoogle(g.owner, g.sub, ev), g.ev)
}

// foreignOwners says, once per writer for each calendar, subscription and
// owner, that the calendar holds events another installation wrote under
// the same subscription id: they are left alone, and when they are in
// fact this installation's (its database was lost and its owner name
// changed with it, as a container's host name does), the operator learns
// which name to set.
func (w *Writer) foreignOwners(calendarID, subscriptionID string, foreign map[string]int) {
	if len(foreign) == 0 {
		return
	}
	owners := slices.Sorted(maps.Keys(foreign))
	w.checkMu.Lock()
	if w.foreignSeen == nil {
		w.foreignSeen = map[string]bool{}
	}
	var fresh []string
	for _, o := range owners {
		k := calendarID + "\x00" + subscriptionID + "\x00" + o
		if !w.foreignSeen[k] {
			w.foreignSeen[k] = true
			fresh = append(fresh, o)
		}
	}
	w.checkMu.Unlock()
	for _, o := range fresh {
		w.log.Warn("the calendar holds events another calsyncd installation wrote for a subscription of the same id: they are left alone; if they are this installation's, set owner to their name",
			"subscription", subscriptionID, "calendar", calendarID, "owner", o, "events", foreign[o], "our_owner", w.o.Owner.Name)
	}
}

// originalID is an exception's original start as a canonical recurrence
// id ("" when Google gave none, or one we cannot read).
func originalID(t *calendar.EventDateTime) string {
	switch {
	case t == nil:
		return ""
	case t.Date != "":
		d, err := time.Parse("2006-01-02", t.Date)
		if err != nil {
			return ""
		}
		return feed.CanonicalRecurrenceID(feed.Time{T: d, AllDay: true})
	}
	at, err := time.Parse(time.RFC3339, t.DateTime)
	if err != nil {
		return ""
	}
	return feed.CanonicalRecurrenceID(feed.Time{T: at})
}
