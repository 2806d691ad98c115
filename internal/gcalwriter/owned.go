package gcalwriter

import (
	"context"
	"fmt"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// ListOwned lists every event of the calendar that carries the
// subscription's marks, deleted ones included: one filtered, paged read
// instead of a get per event. A single privateExtendedProperty constraint is
// used because Google documents repeated ones both as AND and as OR.
func (w *Writer) ListOwned(ctx context.Context, calendarID, subscriptionID string) ([]diff.Owned, error) {
	var out []diff.Owned
	err := w.svc.Events.List(calendarID).
		PrivateExtendedProperty(PropSubscription+"="+subscriptionID).
		ShowDeleted(true).MaxResults(2500).Context(ctx).
		Pages(ctx, func(page *calendar.Events) error {
			for _, ev := range page.Items {
				if !Owned(ev, subscriptionID) {
					continue
				}
				p := ev.ExtendedProperties.Private
				o := diff.Owned{
					Key:       mapping.Key{UID: p[PropUID], RecurrenceID: p[PropRecurrenceID]},
					EventID:   ev.Id,
					Hash:      p[PropHash],
					ETag:      ev.Etag,
					Cancelled: ev.Status == "cancelled",
				}
				if t, err := time.Parse(time.RFC3339, ev.Updated); err == nil {
					o.Updated = t
				}
				out = append(out, o)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("gcalwriter: list owned events of %s: %w", subscriptionID, err)
	}
	return out, nil
}
