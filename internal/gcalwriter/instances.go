package gcalwriter

import (
	"context"
	"errors"
	"fmt"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// errUnparented: an exception whose series Google refused in this batch.
var errUnparented = errors.New("gcalwriter: not attempted: Google refused the instance's series")

// noInstanceError: the series Google holds has no instance where the feed
// puts the exception.
type noInstanceError struct{ start string }

func (e *noInstanceError) Error() string {
	return "the recurring event in Google has no instance starting " + e.start
}

// Unsupported is UnsupportedRecurrence, for the pass's shape stage.
func (w *Writer) Unsupported(ev *feed.Event) string { return UnsupportedRecurrence(ev) }

// UnsupportedRecurrence says why Google cannot hold ev as a recurring event
// ("" when it can, as far as we know before asking): Google Calendar has no
// series more frequent than daily. Rules Google refuses for other reasons
// are learnt from its answer (a 400 on the series).
func UnsupportedRecurrence(ev *feed.Event) string {
	if ev.Series == nil {
		return ""
	}
	switch f := ev.Series.Frequency(); f {
	case "HOURLY", "MINUTELY", "SECONDLY":
		return "Google Calendar has no series more frequent than daily (FREQ=" + f + ")"
	}
	return ""
}

// writeInstance makes an instance of a series in Google show an override:
// moved, retitled, cancelled, or written back to the series' content. The
// instance is found through events.instances by its original start (its
// id is Google's and opaque), then written with an update: Google keeps it
// as an exception of the series. The instance id is remembered.
func (w *Writer) writeInstance(br *batchRun, bud *budget, op diff.Op) error {
	seriesID, refused := br.seriesID(op)
	if refused {
		return errUnparented
	}
	if seriesID == "" {
		return fmt.Errorf("gcalwriter: the series of %s is not in Google yet", op.Key)
	}
	want := ToGoogle(br.SubscriptionID, op.Event)
	want.RecurringEventId = seriesID
	want.OriginalStartTime = originalStartTime(op)
	if op.Kind == diff.Update && op.Mapping != nil && op.Mapping.EventID != "" {
		done, err := w.updateInstance(br, bud, op, want, op.Mapping.EventID, op.Mapping.ETag)
		if done || err != nil {
			return err
		}
	}
	inst, err := w.findInstance(br, bud, seriesID, op)
	if err != nil {
		return err
	}
	if SameContent(want, inst) {
		// Our exception already (a lost answer, a lost database).
		w.countInstance(br, op)
		return w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: inst.Id, Hash: op.Event.Hash, ETag: inst.Etag})
	}
	want.OriginalStartTime = inst.OriginalStartTime
	personalFields(want, inst)
	done, err := w.updateInstance(br, bud, op, want, inst.Id, inst.Etag)
	if err == nil && !done {
		err = fmt.Errorf("gcalwriter: the instance %s of %s vanished while we wrote it", op.Key.Start(), op.Key)
	}
	return err
}

func (w *Writer) countInstance(br *batchRun, op diff.Op) {
	br.update(func(r *calsyncd.WriteResult) {
		if op.Kind == diff.Create {
			r.Created++
		} else {
			r.Updated++
		}
	})
}

// updateInstance writes an instance by id with If-Match. done is false when
// Google no longer has it (the caller finds it again).
func (w *Writer) updateInstance(br *batchRun, bud *budget, op diff.Op, want *calendar.Event, id, etag string) (bool, error) {
	for range 3 {
		var got *calendar.Event
		err := w.call(br, bud, write, func(ctx context.Context) (err error) {
			call := w.svc.Events.Update(br.CalendarID, id, want).SendUpdates("none").Context(ctx)
			if etag != "" {
				call.Header().Set("If-Match", etag)
			}
			got, err = call.Do(w.callOpts...)
			return err
		})
		if err == nil {
			w.countInstance(br, op)
			return true, w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: id, Hash: op.Event.Hash, ETag: got.Etag})
		}
		switch c := w.classOf(err); c.Class {
		case calsyncd.ClassPrecondition:
			theirs, gerr := w.get(br, bud, id)
			if gerr != nil {
				if w.classOf(gerr).Class == calsyncd.ClassGone {
					return false, nil
				}
				return false, gerr
			}
			if SameContent(want, theirs) {
				w.countInstance(br, op)
				return true, w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: id, Hash: op.Event.Hash, ETag: theirs.Etag})
			}
			personalFields(want, theirs)
			etag = theirs.Etag
		case calsyncd.ClassGone:
			return false, nil
		default:
			return false, err
		}
	}
	return false, errors.New("gcalwriter: the instance kept changing while we updated it")
}

// findInstance asks Google for the series' instance at the key's original
// start, cancelled or not.
func (w *Writer) findInstance(br *batchRun, bud *budget, seriesID string, op diff.Op) (*calendar.Event, error) {
	start := originalStart(op.Event.Original)
	var page *calendar.Events
	err := w.call(br, bud, read, func(ctx context.Context) (err error) {
		page, err = w.svc.Events.Instances(br.CalendarID, seriesID).OriginalStart(start).ShowDeleted(true).
			MaxResults(5).Context(ctx).Do(w.callOpts...)
		return err
	})
	if err != nil {
		if w.classOf(err).Class == calsyncd.ClassGone {
			// The series itself is gone from Google (deleted by hand): the
			// next reconcile restores it.
			return nil, fmt.Errorf("gcalwriter: the series of %s is gone from Google: %w", op.Key, err)
		}
		return nil, err
	}
	for _, in := range page.Items {
		if in.RecurringEventId == seriesID {
			return in, nil
		}
	}
	return nil, &noInstanceError{start: start}
}

// originalStartTime is the instance's originalStartTime as Google gives it:
// Google keeps it immutable, and it is sent along as the instance read from
// Google had it: the date of an all-day instance, else the instant in its
// series' zone.
func originalStartTime(op diff.Op) *calendar.EventDateTime {
	o := op.Event.Original
	if o.IsZero() {
		return nil
	}
	if o.AllDay {
		return &calendar.EventDateTime{Date: o.Date()}
	}
	dt := &calendar.EventDateTime{DateTime: o.T.UTC().Format(time.RFC3339)}
	if op.Parent != nil {
		if tz := fromShown(op.Parent.Shown()).Start.TimeZone; tz != "" {
			if loc, err := time.LoadLocation(tz); err == nil {
				dt.DateTime, dt.TimeZone = o.T.In(loc).Format(time.RFC3339), tz
			}
		}
	}
	return dt
}

// originalStart renders an instance's original start as events.instances
// takes it: RFC 3339 for a timed instance, the date for an all-day one (the
// discovery document only says "the original start time of the instance";
// the date is how originalStartTime holds an all-day instance's start —
// UNCONFIRMED against Google itself).
func originalStart(o feed.Time) string {
	if o.AllDay {
		return o.Date()
	}
	return o.T.UTC().Format(time.RFC3339)
}

// forget drops the mapping of an instance exception without a request: its
// series went (which took the exception along) or no longer has it.
func (w *Writer) forget(br *batchRun, op diff.Op) error {
	if err := br.p.Deleted(br.ctx, op.Key); err != nil {
		return persistError(br, op, err)
	}
	br.update(func(r *calsyncd.WriteResult) { r.Forgotten++; r.Unmapped = append(r.Unmapped, op.Key) })
	return nil
}
