package gcalwriter

import (
	"context"
	"errors"
	"fmt"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// checkCalendar asks Google for the batch's calendar before writing to
// it, unless CheckAccount found it there a moment ago.
func (w *Writer) checkCalendar(br *batchRun) error {
	if w.checkedRecently(br.CalendarID) {
		return nil
	}
	var answered bool
	return w.checkCalendarWith(br, &budget{}, &answered)
}

// checkCalendarWith is calendars.get of the batch's calendar: an auth
// failure or a missing calendar is an *Error that stops the batch; answered
// is set when Google answered (it authenticated the request).
func (w *Writer) checkCalendarWith(br *batchRun, bud *budget, answered *bool) error {
	err := w.call(br, bud, read, func(ctx context.Context) error {
		_, err := w.svc.Calendars.Get(br.CalendarID).Context(ctx).Do(w.callOpts...)
		return err
	})
	if err == nil {
		*answered = true
		return nil
	}
	c := w.classOf(err)
	*answered = c.Class.Authenticated() || (c.Class == calsyncd.ClassAuth && c.Code != 401 && c.Code != 0)
	switch c.Class {
	case classStopped:
		*answered = bud.attempts > 0 && answeredRateLimit(br)
		return err
	case calsyncd.ClassGone:
		return &Error{Subscription: br.SubscriptionID, Op: "calendars.get", Class: calsyncd.ClassAuth, Code: c.Code, Reason: c.Reason,
			Msg: ErrCalendarNotFound.Error(), Err: ErrCalendarNotFound}
	case calsyncd.ClassAuth:
		return &Error{Subscription: br.SubscriptionID, Op: "calendars.get", Class: c.Class, Code: c.Code, Reason: c.Reason, Msg: c.Message, Err: err}
	}
	// Anything else (a blip beyond its retries) is left for the writes to
	// meet.
	return nil
}

// answeredRateLimit: Google rate-limited the batch's requests (it answered
// them, so it took the credentials).
func answeredRateLimit(br *batchRun) bool {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.res.ByClass[calsyncd.ClassRateLimited]+br.res.ByClass[calsyncd.ClassUsageLimited] > 0
}

// writeOp writes one op of the batch, by its kind.
func (w *Writer) writeOp(br *batchRun, op diff.Op) error {
	bud := &budget{}
	if op.Forget {
		return w.forget(br, op)
	}
	if op.Key.Kind() == calsyncd.Instance && (op.Kind == diff.Create || op.Kind == diff.Update) {
		return w.writeInstance(br, bud, op)
	}
	switch op.Kind {
	case diff.Create:
		return w.create(br, bud, op, 0)
	case diff.Update:
		err := w.update(br, bud, op)
		if err == nil && (len(op.Exceptions) > 0 || len(op.Forgotten) > 0) {
			w.verifySeries(br, op)
		}
		return err
	case diff.Delete:
		return w.delete(br, bud, op)
	}
	return fmt.Errorf("gcalwriter: unknown op kind %d", op.Kind)
}

// unrecordedError is a write Google accepted that the Persister could not
// record. Writing on would pile up more of them.
type unrecordedError struct{ err *Error }

func (e *unrecordedError) Error() string { return e.err.Error() }
func (e *unrecordedError) Unwrap() error { return e.err }

func persistError(br *batchRun, op diff.Op, err error) *unrecordedError {
	return &unrecordedError{&Error{Subscription: br.SubscriptionID, Op: op.Kind.String(), Class: calsyncd.ClassTransient,
		Msg: "cannot record a write Google accepted", Err: err}}
}

func (w *Writer) saved(br *batchRun, op diff.Op, m calsyncd.Mapping) error {
	if op.Event != nil {
		m.Fields = op.Event.Shown().Digest()
	}
	if op.Event != nil && !op.Event.IsRecurring() {
		// A series' end needs its rule expanded; unknown keeps it in the
		// window, which only errs on the side of deleting as the feed says.
		m.EndsAt = op.Event.End.T
	}
	if op.Event != nil && op.Event.IsRecurring() {
		// Its exceptions later in the batch need its id.
		br.mu.Lock()
		if br.series == nil {
			br.series = map[calsyncd.Key]writtenSeries{}
		}
		br.series[op.Key] = writtenSeries{id: m.EventID, etag: m.ETag}
		br.mu.Unlock()
		if op.Mapping != nil && op.Mapping.EventID != m.EventID {
			br.update(func(r *calsyncd.WriteResult) { r.RecreatedSeries = append(r.RecreatedSeries, op.Key) })
		}
	}
	if err := br.p.Saved(br.ctx, m); err != nil {
		return persistError(br, op, err)
	}
	br.update(func(r *calsyncd.WriteResult) { r.Mapped = append(r.Mapped, m) })
	return nil
}

// create inserts the event under its deterministic id. A 409 means it is
// already there (a lost response or a lost database): adopt or restore it.
func (w *Writer) create(br *batchRun, bud *budget, op diff.Op, generation int) error {
	for gen := generation; gen < generation+w.o.MaxGenerations; gen++ {
		id := mapping.EventID(w.o.Owner.Name, br.SubscriptionID, op.Key, gen)
		want := ToGoogle(w.o.Owner.Name, br.SubscriptionID, op.Event)
		want.Id = id
		var got *calendar.Event
		err := w.call(br, bud, write, func(ctx context.Context) (err error) {
			got, err = w.svc.Events.Insert(br.CalendarID, want).SendUpdates("none").Context(ctx).Do(w.callOpts...)
			return err
		})
		if err == nil {
			br.update(func(r *calsyncd.WriteResult) { r.Created++ })
			return w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: id, Generation: gen, Hash: op.Event.Hash, ETag: got.Etag})
		}
		if w.classOf(err).Class != calsyncd.ClassConflict {
			return err
		}
		done, err := w.adopt(br, bud, op, want, gen)
		if err != nil || done {
			return err
		}
		w.log.Info("event id unusable, moving to the next id generation", "subscription", br.SubscriptionID, "generation", gen+1)
	}
	return fmt.Errorf("gcalwriter: no usable event id after %d generations", w.o.MaxGenerations)
}

// adopt handles an insert that answered 409: an event with our id exists.
// If it is ours and shows what we want, we take it as it is; if it is ours
// but cancelled or different, we write it (restoring it). It reports
// done=false when the id cannot be used: purged from the bin, or held by an
// event that is not ours.
func (w *Writer) adopt(br *batchRun, bud *budget, op diff.Op, want *calendar.Event, gen int) (bool, error) {
	for range 3 {
		var existing *calendar.Event
		err := w.call(br, bud, read, func(ctx context.Context) (err error) {
			existing, err = w.svc.Events.Get(br.CalendarID, want.Id).Context(ctx).Do(w.callOpts...)
			return err
		})
		if err != nil {
			if w.classOf(err).Class == calsyncd.ClassGone {
				return false, nil
			}
			return false, err
		}
		cancelled := existing.Status == "cancelled"
		if !ownedOrUnmarkedCancelled(existing, w.o.Owner, br.SubscriptionID) {
			w.log.Warn("an event that is not ours holds our id; using the next id generation",
				"subscription", br.SubscriptionID, "generation", gen+1)
			return false, nil
		}
		if op.Event.IsRecurring() {
			br.mu.Lock()
			if br.adopted == nil {
				br.adopted = map[string]bool{}
			}
			br.adopted[want.Id] = true
			br.mu.Unlock()
		}
		if !cancelled && SameContent(want, existing) {
			br.update(func(r *calsyncd.WriteResult) { r.Created++; r.Adopted++ })
			return true, w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: want.Id, Generation: gen, Hash: op.Event.Hash, ETag: existing.Etag})
		}
		body := ToGoogle(w.o.Owner.Name, br.SubscriptionID, op.Event)
		personalFields(body, existing)
		var got *calendar.Event
		err = w.call(br, bud, write, func(ctx context.Context) (err error) {
			call := w.svc.Events.Update(br.CalendarID, want.Id, body).SendUpdates("none").Context(ctx)
			call.Header().Set("If-Match", existing.Etag)
			got, err = call.Do(w.callOpts...)
			return err
		})
		if err == nil {
			br.update(func(r *calsyncd.WriteResult) {
				r.Created++
				if cancelled {
					r.Restored++
				} else {
					r.Adopted++
				}
			})
			return true, w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: want.Id, Generation: gen, Hash: op.Event.Hash, ETag: got.Etag})
		}
		switch c := w.classOf(err); {
		case c.Class == calsyncd.ClassPrecondition:
			continue // it changed between our read and our write: read again
		case c.Class == calsyncd.ClassGone:
			return false, nil
		case c.Class == calsyncd.ClassAuth && c.Code == 403 && cancelled:
			// Google refuses to restore an event purged from the bin.
			return false, nil
		}
		return false, err
	}
	return false, errors.New("gcalwriter: the event kept changing while we adopted it")
}

// ownedOrUnmarkedCancelled: an event is ours when it carries our marks; a
// cancelled event with no marks at all under our deterministic id is ours
// too (Google may strip a deleted event to its id).
func ownedOrUnmarkedCancelled(ev *calendar.Event, o calsyncd.Owner, subscriptionID string) bool {
	if Owned(ev, o, subscriptionID) {
		return true
	}
	unmarked := ev.ExtendedProperties == nil || ev.ExtendedProperties.Private[PropSubscription] == ""
	return ev.Status == "cancelled" && unmarked
}

// update rewrites a mapped event in full (an update costs one quota unit, a
// patch three). It sends the etag we last wrote as If-Match: on 412 a person
// edited the event, so we keep their reminders and colour and write again.
func (w *Writer) update(br *batchRun, bud *budget, op diff.Op) error {
	m := op.Mapping
	want := ToGoogle(w.o.Owner.Name, br.SubscriptionID, op.Event)
	etag := m.ETag
	for range 3 {
		var got *calendar.Event
		err := w.call(br, bud, write, func(ctx context.Context) (err error) {
			call := w.svc.Events.Update(br.CalendarID, m.EventID, want).SendUpdates("none").Context(ctx)
			if etag != "" {
				call.Header().Set("If-Match", etag)
			}
			got, err = call.Do(w.callOpts...)
			return err
		})
		if err == nil {
			br.update(func(r *calsyncd.WriteResult) { r.Updated++ })
			return w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: m.EventID, Generation: m.Generation, Hash: op.Event.Hash, ETag: got.Etag})
		}
		switch c := w.classOf(err); {
		case c.Class == calsyncd.ClassPrecondition:
			theirs, err := w.get(br, bud, m.EventID)
			if err != nil {
				if w.classOf(err).Class == calsyncd.ClassGone {
					return w.create(br, bud, op, m.Generation)
				}
				return err
			}
			if theirs.Status != "cancelled" && SameContent(want, theirs) {
				// Our own earlier write, whose answer was lost.
				br.update(func(r *calsyncd.WriteResult) { r.Updated++ })
				return w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: m.EventID, Generation: m.Generation, Hash: op.Event.Hash, ETag: theirs.Etag})
			}
			personalFields(want, theirs)
			etag = theirs.Etag
		case c.Class == calsyncd.ClassGone:
			// Gone from Google (or never there): recreate it.
			return w.create(br, bud, op, m.Generation)
		case c.Class == calsyncd.ClassAuth && c.Code == 403:
			// Google refuses updates to an event purged from the bin; any
			// other 403 is a real permission problem.
			if _, gerr := w.get(br, bud, m.EventID); gerr != nil && w.classOf(gerr).Class == calsyncd.ClassGone {
				return w.create(br, bud, op, m.Generation)
			}
			return err
		default:
			return err
		}
	}
	return errors.New("gcalwriter: the event kept changing while we updated it")
}

func (w *Writer) get(br *batchRun, bud *budget, id string) (*calendar.Event, error) {
	var ev *calendar.Event
	err := w.call(br, bud, read, func(ctx context.Context) (err error) {
		ev, err = w.svc.Events.Get(br.CalendarID, id).Context(ctx).Do(w.callOpts...)
		return err
	})
	return ev, err
}

// delete removes a mapped event; 404 and 410 mean it is already gone.
func (w *Writer) delete(br *batchRun, bud *budget, op diff.Op) error {
	err := w.call(br, bud, write, func(ctx context.Context) error {
		return w.svc.Events.Delete(br.CalendarID, op.Mapping.EventID).SendUpdates("none").Context(ctx).Do(w.callOpts...)
	})
	if err != nil {
		c := w.classOf(err)
		gone := c.Class == calsyncd.ClassGone
		if !gone && c.Class == calsyncd.ClassAuth && c.Code == 403 {
			_, gerr := w.get(br, bud, op.Mapping.EventID)
			gone = gerr != nil && w.classOf(gerr).Class == calsyncd.ClassGone
		}
		if !gone {
			return err
		}
	}
	br.update(func(r *calsyncd.WriteResult) { r.Deleted++ })
	if perr := br.p.Deleted(br.ctx, op.Key); perr != nil {
		return persistError(br, op, perr)
	}
	br.update(func(r *calsyncd.WriteResult) { r.Unmapped = append(r.Unmapped, op.Key) })
	return nil
}
