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
// moved, retitled, cancelled, or written back to the series' content, as an
// update of the instance (Google keeps it as an exception of the series).
// Every instance it writes is the one at the override's original start:
// each answer is checked by its recurringEventId and originalStartTime
// (the date of an all-day instance, the instant of a timed one), never
// taken by its position in a listing. It is found, cheapest first:
//
//  1. in the listing taken after its series' own write in this batch
//     (verifySeries), or by the id Google gave it (its mapping), written
//     with the etag we hold;
//  2. by the id Google derives, "{seriesId}_{YYYYMMDD}" all-day or
//     "{seriesId}_{YYYYMMDDTHHMMSSZ}" timed (the original start in UTC) —
//     one request in the common case, see writeDerived;
//  3. looked up: where ids are known to be opaque and the batch writes
//     several overrides that need a lookup, they are written last, after
//     one listing of the calendar's instances over a window holding them
//     all (listCalendar, in item 1's listing); when the batch writes
//     several exceptions of the series, one listing of its instances over
//     a window that holds them all (listSeries, kept for the batch); else,
//     or when those listings miss it, events.instances with originalStart,
//     then with a time window around the original start, paged, each item
//     checked (findInstance).
//
// When nothing matches, the write ends with a noInstanceError (counted as
// failed and logged, retried next run): no other instance is written.
func (w *Writer) writeInstance(br *batchRun, bud *budget, op diff.Op) error {
	seriesID, seriesETag, refused := br.seriesOf(op)
	if refused {
		return errUnparented
	}
	if seriesID == "" {
		return fmt.Errorf("gcalwriter: the series of %s is not in Google yet", op.Key)
	}
	want := ToGoogle(w.o.Owner.Name, br.SubscriptionID, op.Event)
	want.RecurringEventId = seriesID
	want.OriginalStartTime = originalStartTime(op)
	orig := op.Event.Original
	if inst := br.listings.at(seriesID, orig); inst != nil {
		return w.writeFound(br, bud, op, want, seriesID, inst)
	}
	if op.Kind == diff.Update && op.Mapping != nil && op.Mapping.EventID != "" {
		done, err := w.updateInstance(br, bud, op, want, seriesID, op.Mapping.EventID, op.Mapping.ETag)
		if done || err != nil {
			return err
		}
	}
	done, tried, err := w.writeDerived(br, bud, op, want, seriesID, seriesETag)
	if done || err != nil {
		return err
	}
	inst, err := w.listSeries(br, bud, seriesID, op)
	if err != nil {
		return err
	}
	if inst == nil {
		if inst, err = w.findInstance(br, bud, seriesID, op); err != nil {
			return err
		}
	}
	if tried || inst.Id == derivedInstanceID(seriesID, orig) {
		w.ids.learn(orig.AllDay, inst.Id == derivedInstanceID(seriesID, orig), w.clock.Now())
	}
	return w.writeFound(br, bud, op, want, seriesID, inst)
}

// writeDerived writes the instance by the id Google derives for it, while
// the account's ids are not known to be opaque. done is false when that id
// did not lead to the instance (the caller looks it up); tried is false
// when derived ids were not tried at all.
//
// It never writes another instance:
//   - an id names one instance, and "{seriesId}_{suffix}" names the one
//     whose original start the suffix encodes only if Google derives ids
//     so. Until this Writer has seen that (a get by a derived id answered
//     with that very instance, or a lookup found an instance under its
//     derived id), it reads before it writes (get by derived id, checked),
//     and an answer that is not the instance teaches it the ids are not
//     derived;
//   - once derived ids are known, and a read has shown that a plain
//     instance carries its series' etag, the write is one update sent with
//     If-Match: the series' etag. Google answers it only on the plain
//     instance of the series as we last wrote it; anything else (an
//     exception stored there: ours after a lost answer, a person's edit)
//     fails the condition (412) and is read, checked and compared first
//     (updateInstance), so a person's reminders and colour are kept. The
//     answer's recurringEventId and originalStartTime are checked too.
//     Where plain instances carry etags of their own (the documentation
//     does not say), that condition could never hold: the writer keeps
//     reading first, two requests, and never writes unread;
//   - a derived id that answers 404 is looked up; when the lookup finds
//     the instance under another id, the Writer stops deriving ids of that
//     kind (all-day, timed) for a day (learntFor), so opaque ids cost one
//     failed request a day, not one per override.
//
// Without a series etag (an old mapping) or after the series was adopted
// in this batch (its exceptions may already be there), it reads first too.
func (w *Writer) writeDerived(br *batchRun, bud *budget, op diff.Op, want *calendar.Event, seriesID, seriesETag string) (done, tried bool, err error) {
	orig := op.Event.Original
	trusted, usable := w.ids.state(orig.AllDay, w.clock.Now())
	if !usable {
		return false, false, nil
	}
	id := derivedInstanceID(seriesID, orig)
	if trusted && w.ids.seriesETagHolds(orig.AllDay) && seriesETag != "" && !br.wasAdopted(seriesID) {
		done, err := w.updateInstance(br, bud, op, want, seriesID, id, seriesETag)
		return done, true, err
	}
	got, err := w.get(br, bud, id)
	if err != nil {
		if w.classOf(err).Class == calsyncd.ClassGone {
			return false, true, nil
		}
		return false, true, err
	}
	if !isInstanceAt(got, seriesID, orig) {
		w.ids.learn(orig.AllDay, false, w.clock.Now())
		return false, true, nil
	}
	w.ids.learn(orig.AllDay, true, w.clock.Now())
	if seriesETag != "" && got.Etag == seriesETag {
		w.ids.plainCarriesSeriesETag(orig.AllDay)
	}
	return true, true, w.writeFound(br, bud, op, want, seriesID, got)
}

// writeFound writes the instance inst, read from Google and checked to be
// the one at op's original start: nothing when it shows what we want
// already (our exception, after a lost answer or a lost database), else an
// update with its etag that keeps what a person set on it.
func (w *Writer) writeFound(br *batchRun, bud *budget, op diff.Op, want *calendar.Event, seriesID string, inst *calendar.Event) error {
	if SameContent(want, inst) {
		w.countInstance(br, op)
		return w.saved(br, op, calsyncd.Mapping{Key: op.Key, EventID: inst.Id, Hash: op.Event.Hash, ETag: inst.Etag})
	}
	want.OriginalStartTime = inst.OriginalStartTime
	personalFields(want, inst)
	done, err := w.updateInstance(br, bud, op, want, seriesID, inst.Id, inst.Etag)
	if err == nil && !done {
		err = fmt.Errorf("gcalwriter: the instance %s of %s vanished while we wrote it", op.Key.Start(), op.Key)
	}
	return err
}

func (w *Writer) countInstance(br *batchRun, op diff.Op) {
	if br.repairing(op.Key) {
		return // a repair is no op of the plan: it counts as none
	}
	br.update(func(r *calsyncd.WriteResult) {
		if op.Kind == diff.Create {
			r.Created++
		} else {
			r.Updated++
		}
	})
}

// misdirectedError: Google's answer to a write of an instance is another
// instance (or no instance of the series). It cannot happen with ids
// Google gave or derives; it is reported, never taken as done.
type misdirectedError struct {
	key  calsyncd.Key
	id   string
	got  string
	want string
}

func (e *misdirectedError) Error() string {
	return fmt.Sprintf("gcalwriter: the write of %s to instance %s answered the instance at %s, not %s", e.key, e.id, e.got, e.want)
}

// updateInstance writes an instance by id with If-Match (etag, when set),
// and checks that the answer is the instance at op's original start. done
// is false when Google has no event under id (the caller finds it again).
// On 412 it reads the instance, checks it, and writes again with its etag,
// keeping what a person set.
func (w *Writer) updateInstance(br *batchRun, bud *budget, op diff.Op, want *calendar.Event, seriesID, id, etag string) (bool, error) {
	orig := op.Event.Original
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
			if !isInstanceAt(got, seriesID, orig) {
				w.ids.distrust(orig.AllDay, w.clock.Now())
				return false, &misdirectedError{key: op.Key, id: id, got: originalOf(got), want: originalStart(orig)}
			}
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
			if !isInstanceAt(theirs, seriesID, orig) {
				// The id no longer names that instance (ids changed
				// under us): find it afresh.
				return false, nil
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

// findInstance looks up the series' instance at the key's original start,
// cancelled or not, checking every item Google answers: first with
// events.instances' originalStart (unless this Writer learnt it does not
// find instances of that kind: the date form of an all-day instance is
// undocumented, and Google may reject it or ignore it), then with a time
// window around where the instance can be (its original start, and where
// the override puts it: our exception after a lost database), paged, and
// last over a year either side (an instance a person moved far).
func (w *Writer) findInstance(br *batchRun, bud *budget, seriesID string, op diff.Op) (*calendar.Event, error) {
	orig := op.Event.Original
	start := originalStart(orig)
	tried := false
	if w.ids.filterWorks(orig.AllDay, w.clock.Now()) {
		tried = true
		items, err := w.listInstances(br, bud, seriesID, 1, func(c *calendar.EventsInstancesCall) *calendar.EventsInstancesCall {
			return c.OriginalStart(start).MaxResults(10)
		})
		switch {
		case err == nil:
			if in := instanceAt(items, seriesID, orig); in != nil {
				return in, nil
			}
		case w.classOf(err).Class == calsyncd.ClassGone:
			return nil, seriesGone(op, err)
		case w.classOf(err).Class == calsyncd.ClassInvalid:
			// The form is refused: the window finds it.
		default:
			return nil, err
		}
	}
	lo, hi := instanceWindow(op.Event, op.Parent)
	items, err := w.instancesIn(br, bud, seriesID, op, lo, hi, 250, maxLookupPages)
	if err != nil {
		return nil, err
	}
	if in := instanceAt(items, seriesID, orig); in != nil {
		if tried {
			// originalStart did not find what the window did.
			w.ids.filterFailed(orig.AllDay, w.clock.Now())
		}
		return in, nil
	}
	// Not near its original start nor where the feed puts it: a person
	// may have moved it far. A year either side holds any such move in
	// one page for a daily series; past that it is reported missing.
	items, err = w.instancesIn(br, bud, seriesID, op, orig.T.Add(-farMove).UTC(), orig.T.Add(farMove).UTC(), 2500, farMovePages)
	if err != nil {
		return nil, err
	}
	if in := instanceAt(items, seriesID, orig); in != nil {
		return in, nil
	}
	return nil, &noInstanceError{start: start}
}

// farMove and farMovePages bound the last lookup of an instance: moved by
// a person up to a year from its original start, in at most 4 pages.
const (
	farMove      = 366 * 24 * time.Hour
	farMovePages = 4
)

// listSeries lists the series' instances once for the batch when the batch
// writes more than one exception of it that needs a lookup, over a window
// holding all of them, and returns the one at op's original start (nil
// when the batch has a single such exception, or the listing misses it).
// Where instance ids are opaque, a series with many overrides (a holiday
// feed's) then costs one read, not one per override.
func (w *Writer) listSeries(br *batchRun, bud *budget, seriesID string, op diff.Op) (*calendar.Event, error) {
	pk, _ := op.Key.Parent()
	var (
		lo, hi time.Time
		n      int
	)
	for _, o := range br.Ops {
		if o.Event == nil || o.Event.Original.IsZero() || (o.Kind != diff.Create && o.Kind != diff.Update) {
			continue
		}
		if k, ok := o.Key.Parent(); !ok || k != pk {
			continue
		}
		a, b := instanceWindow(o.Event, op.Parent)
		if n == 0 || a.Before(lo) {
			lo = a
		}
		if n == 0 || b.After(hi) {
			hi = b
		}
		n++
	}
	if n < 2 {
		return nil, nil
	}
	items, err := w.instancesIn(br, bud, seriesID, op, lo, hi, 2500, maxLookupPages)
	if err != nil {
		return nil, err
	}
	return br.listings.add(seriesID, items)[originalStart(op.Event.Original)], nil
}

// maxLookupPages bounds the pages one lookup or check reads.
const maxLookupPages = 20

func seriesGone(op diff.Op, err error) error {
	// The series itself is gone from Google (deleted by hand): the next
	// reconcile restores it.
	return fmt.Errorf("gcalwriter: the series of %s is gone from Google: %w", op.Key, err)
}

// instanceWindow is a time range that holds the instance an override
// replaces wherever Google may show it: at its original start (a plain
// instance, as long as its series' instances), or where the override puts
// it. Two days of margin cover the zones an all-day date may be read in.
func instanceWindow(ev, parent *feed.Event) (lo, hi time.Time) {
	const margin = 48 * time.Hour
	o := ev.Original.T
	length := ev.End.T.Sub(ev.Start.T)
	if parent != nil {
		length = max(length, parent.End.T.Sub(parent.Start.T))
	}
	lo = minTime(o, ev.Start.T).Add(-margin)
	hi = maxTime(o.Add(length), ev.End.T).Add(margin)
	return lo.UTC(), hi.UTC()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// derivedInstanceID is the id Google derives for a series' instance:
// "{seriesId}_{YYYYMMDD}" all-day, "{seriesId}_{YYYYMMDDTHHMMSSZ}" timed,
// the original start in UTC.
func derivedInstanceID(seriesID string, orig feed.Time) string {
	// An id is formatted here, no recurrence read.
	const layout = "20060102T150405Z"
	if orig.AllDay {
		return seriesID + "_" + orig.T.Format(layout[:8]) // the date part
	}
	return seriesID + "_" + orig.T.UTC().Format(layout)
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

// forget drops the mapping of an instance exception without a request: its
// series went (which took the exception along) or no longer has it. When
// the check after its series' write found Google still showing it off the
// new rule, it is deleted first (a write).
func (w *Writer) forget(br *batchRun, op diff.Op) error {
	if hit, ok := br.offRuleHit(op.Key); ok {
		m := *op.Mapping
		m.EventID = hit.id
		op.Mapping, op.Forget = &m, false
		err := w.delete(br, &budget{}, op)
		if err != nil && !errors.As(err, new(*unrecordedError)) {
			// Kept mapped; its series is written (and checked) again next
			// run.
			w.staleSeries(br, hit)
		}
		return err
	}
	if err := br.p.Deleted(br.ctx, op.Key); err != nil {
		return persistError(br, op, err)
	}
	br.update(func(r *calsyncd.WriteResult) { r.Forgotten++; r.Unmapped = append(r.Unmapped, op.Key) })
	return nil
}
