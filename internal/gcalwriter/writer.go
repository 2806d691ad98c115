package gcalwriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// Persister records the outcome of each write the moment it succeeds, so a
// crash or abort forgets nothing that Google has.
type Persister interface {
	Saved(ctx context.Context, m mapping.Mapping) error
	Deleted(ctx context.Context, k mapping.Key) error
	Rejected(ctx context.Context, r mapping.Rejection) error
}

// Batch is the plan of one subscription's run.
type Batch struct {
	SubscriptionID string
	CalendarID     string
	Ops            []diff.Op
	// Drain, when closed, stops the batch from starting new writes; writes
	// already sent finish and are persisted (graceful shutdown).
	Drain <-chan struct{}
}

func (b Batch) draining() bool {
	select {
	case <-b.Drain:
		return true
	default:
		return false
	}
}

// Result counts what a batch did.
type Result struct {
	Created  int
	Updated  int
	Deleted  int
	Restored int // cancelled events of ours brought back
	Adopted  int // events of ours found in Google without a mapping
	// Deferred writes were not done because Google rate- or usage-limited
	// the account; they are picked up by the next run.
	Deferred int
	// Failed writes hit transient errors beyond their retries.
	Failed int
	// Rejected writes were refused by Google for their content.
	Rejected int
	// Skipped writes were not attempted because the batch stopped (an auth
	// failure, a missing calendar, shutdown).
	Skipped    int
	Retries    int
	Waited     time.Duration
	ByClass    map[Class]int
	Rejections []mapping.Rejection
	// Err stops the whole subscription for this run: auth failures and a
	// missing calendar. Rate limits never set it.
	Err error
}

// Writes is the number of successful writes.
func (r *Result) Writes() int { return r.Created + r.Updated + r.Deleted }

func (r *Result) count(c Class) {
	if r.ByClass == nil {
		r.ByClass = map[Class]int{}
	}
	r.ByClass[c]++
}

// Error is a failure that stops a subscription's writes for this run.
type Error struct {
	Subscription string
	Op           string
	Class        Class
	Code         int
	Reason       string
	Msg          string
	Err          error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("gcalwriter: %s: %s (%s", e.Subscription, e.Msg, e.Class)
	if e.Code != 0 {
		s += fmt.Sprintf(", HTTP %d %s", e.Code, e.Reason)
	}
	return s + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// ErrCalendarNotFound is wrapped when the target calendar does not exist or
// is not shared with the account.
var ErrCalendarNotFound = errors.New("calendar not found or not shared with this account")

// Options configure a Writer.
type Options struct {
	Logger *slog.Logger
	// MaxGenerations bounds how many fresh ids we try when Google refuses
	// to let us reuse one (default 5).
	MaxGenerations int
}

// Writer applies plans to one Google account.
type Writer struct {
	svc     *calendar.Service
	log     *slog.Logger
	maxGens int
}

// New returns a Writer that talks to Google through svc.
func New(svc *calendar.Service, opts Options) *Writer {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxGenerations <= 0 {
		opts.MaxGenerations = 5
	}
	return &Writer{svc: svc, log: opts.Logger, maxGens: opts.MaxGenerations}
}

// Apply performs the batch's writes, persisting each success through p.
func (w *Writer) Apply(ctx context.Context, b Batch, p Persister) Result {
	var res Result
	if len(b.Ops) == 0 {
		return res
	}
	if err := w.checkCalendar(ctx, b); err != nil {
		res.Err = err
		res.Skipped = len(b.Ops)
		return res
	}
	for i, op := range b.Ops {
		if ctx.Err() != nil || b.draining() {
			res.Skipped += len(b.Ops) - i
			break
		}
		err := w.apply(ctx, b, op, p, &res)
		if err == nil {
			continue
		}
		var fatal *Error
		if errors.As(err, &fatal) {
			res.Err = err
			res.Skipped += len(b.Ops) - i - 1
			break
		}
	}
	w.logResult(b, &res)
	return res
}

func (w *Writer) logResult(b Batch, res *Result) {
	attrs := []any{
		slog.String("subscription", b.SubscriptionID),
		slog.Int("created", res.Created), slog.Int("updated", res.Updated), slog.Int("deleted", res.Deleted),
		slog.Int("deferred", res.Deferred), slog.Int("failed", res.Failed), slog.Int("rejected", res.Rejected),
		slog.Int("retries", res.Retries),
	}
	if res.Deferred > 0 {
		w.log.Warn(fmt.Sprintf("deferred %d writes", res.Deferred), attrs...)
		return
	}
	w.log.Info("batch written", attrs...)
}

func (w *Writer) checkCalendar(ctx context.Context, b Batch) error {
	_, err := w.svc.Calendars.Get(b.CalendarID).Context(ctx).Do()
	if err == nil {
		return nil
	}
	c := Classify(err)
	switch c.Class {
	case ClassGone:
		return &Error{Subscription: b.SubscriptionID, Op: "calendars.get", Class: ClassAuth, Code: c.Code, Reason: c.Reason,
			Msg: ErrCalendarNotFound.Error(), Err: ErrCalendarNotFound}
	case ClassAuth:
		return &Error{Subscription: b.SubscriptionID, Op: "calendars.get", Class: c.Class, Code: c.Code, Reason: c.Reason, Msg: c.Message, Err: err}
	}
	// Anything else (a rate limit, a blip) is left for the writes to meet.
	return nil
}

func (w *Writer) apply(ctx context.Context, b Batch, op diff.Op, p Persister, res *Result) error {
	var err error
	switch op.Kind {
	case diff.Create:
		err = w.create(ctx, b, op, 0, p, res)
	case diff.Update:
		err = w.update(ctx, b, op, p, res)
	case diff.Delete:
		err = w.delete(ctx, b, op, p, res)
	default:
		return fmt.Errorf("gcalwriter: unknown op kind %d", op.Kind)
	}
	if err == nil {
		return nil
	}
	return w.settle(ctx, b, op, err, p, res)
}

// settle turns a write's final error into a result count; it returns the
// error only when it must stop the batch.
func (w *Writer) settle(ctx context.Context, b Batch, op diff.Op, err error, p Persister, res *Result) error {
	var fatal *Error
	if errors.As(err, &fatal) {
		return err
	}
	c := Classify(err)
	res.count(c.Class)
	switch c.Class {
	case ClassRateLimited, ClassUsageLimited:
		res.Deferred++
		return nil
	case ClassInvalid:
		res.Rejected++
		rej := mapping.Rejection{Key: op.Key, Reason: fmt.Sprintf("HTTP %d %s: %s", c.Code, c.Reason, c.Message)}
		if op.Event != nil {
			rej.Hash = op.Event.Hash
		}
		res.Rejections = append(res.Rejections, rej)
		if perr := p.Rejected(ctx, rej); perr != nil {
			return &Error{Subscription: b.SubscriptionID, Op: op.Kind.String(), Class: ClassTransient, Msg: "cannot persist", Err: perr}
		}
		w.log.Warn("event rejected by Google", "subscription", b.SubscriptionID, "uid", op.Key.String(), "reason", rej.Reason)
		return nil
	case ClassAuth:
		return &Error{Subscription: b.SubscriptionID, Op: op.Kind.String(), Class: c.Class, Code: c.Code, Reason: c.Reason, Msg: c.Message, Err: err}
	case ClassCanceled:
		res.Skipped++
		return nil
	default:
		res.Failed++
		w.log.Warn("write failed", "subscription", b.SubscriptionID, "op", op.Kind.String(), "class", string(c.Class), "code", c.Code, "reason", c.Reason)
		return nil
	}
}

// create inserts the event under its deterministic id. A 409 means it is
// already there (a lost response or a lost database): adopt or restore it.
func (w *Writer) create(ctx context.Context, b Batch, op diff.Op, generation int, p Persister, res *Result) error {
	for gen := generation; gen < generation+w.maxGens; gen++ {
		id := mapping.EventID(b.SubscriptionID, op.Key, gen)
		ge := ToGoogle(b.SubscriptionID, op.Event)
		ge.Id = id
		got, err := w.svc.Events.Insert(b.CalendarID, ge).SendUpdates("none").Context(ctx).Do()
		if err == nil {
			res.Created++
			return p.Saved(ctx, mapping.Mapping{Key: op.Key, EventID: id, Generation: gen, Hash: op.Event.Hash, ETag: got.Etag})
		}
		if Classify(err).Class != ClassConflict {
			return err
		}
		done, err := w.adopt(ctx, b, op, id, gen, p, res)
		if err != nil || done {
			return err
		}
		// The id is burnt (its event was purged from the bin): next generation.
		w.log.Info("event id unusable, moving to the next id generation", "subscription", b.SubscriptionID, "uid", op.Key.String(), "generation", gen+1)
	}
	return fmt.Errorf("gcalwriter: no usable event id after %d generations", w.maxGens)
}

// adopt handles an insert that answered 409: the event with our id exists.
// It reports done=false when the id cannot be used any more.
func (w *Writer) adopt(ctx context.Context, b Batch, op diff.Op, id string, gen int, p Persister, res *Result) (bool, error) {
	existing, err := w.svc.Events.Get(b.CalendarID, id).Context(ctx).Do()
	if err != nil {
		if Classify(err).Class == ClassGone {
			return false, nil
		}
		return false, err
	}
	if existing.Status != "cancelled" && OwnedHash(existing) == op.Event.Hash && Owned(existing, b.SubscriptionID) {
		res.Adopted++
		return true, p.Saved(ctx, mapping.Mapping{Key: op.Key, EventID: id, Generation: gen, Hash: op.Event.Hash, ETag: existing.Etag})
	}
	ge := ToGoogle(b.SubscriptionID, op.Event)
	personalFields(ge, existing)
	call := w.svc.Events.Update(b.CalendarID, id, ge).SendUpdates("none").Context(ctx)
	call.Header().Set("If-Match", existing.Etag)
	got, err := call.Do()
	if err != nil {
		c := Classify(err)
		if c.Code == 403 && c.Class == ClassAuth && existing.Status == "cancelled" {
			return false, nil
		}
		return false, err
	}
	if existing.Status == "cancelled" {
		res.Restored++
	} else {
		res.Adopted++
	}
	res.Created++
	return true, p.Saved(ctx, mapping.Mapping{Key: op.Key, EventID: id, Generation: gen, Hash: op.Event.Hash, ETag: got.Etag})
}

// update rewrites a mapped event in full (an update costs one quota unit, a
// patch three). It sends the etag we last wrote as If-Match: on 412 a person
// edited the event, so we keep their reminders and colour and write again.
func (w *Writer) update(ctx context.Context, b Batch, op diff.Op, p Persister, res *Result) error {
	m := op.Mapping
	ge := ToGoogle(b.SubscriptionID, op.Event)
	call := w.svc.Events.Update(b.CalendarID, m.EventID, ge).SendUpdates("none").Context(ctx)
	if m.ETag != "" {
		call.Header().Set("If-Match", m.ETag)
	}
	got, err := call.Do()
	if err != nil {
		switch Classify(err).Class {
		case ClassPrecondition:
			theirs, gerr := w.svc.Events.Get(b.CalendarID, m.EventID).Context(ctx).Do()
			if gerr != nil {
				return gerr
			}
			personalFields(ge, theirs)
			call = w.svc.Events.Update(b.CalendarID, m.EventID, ge).SendUpdates("none").Context(ctx)
			call.Header().Set("If-Match", theirs.Etag)
			if got, err = call.Do(); err != nil {
				return err
			}
		case ClassGone:
			// Gone from Google (or never there): recreate it.
			return w.create(ctx, b, diff.Op{Kind: diff.Create, Key: op.Key, Event: op.Event}, m.Generation, p, res)
		default:
			return err
		}
	}
	res.Updated++
	return p.Saved(ctx, mapping.Mapping{Key: op.Key, EventID: m.EventID, Generation: m.Generation, Hash: op.Event.Hash, ETag: got.Etag})
}

// delete removes a mapped event; 404 and 410 mean it is already gone.
func (w *Writer) delete(ctx context.Context, b Batch, op diff.Op, p Persister, res *Result) error {
	err := w.svc.Events.Delete(b.CalendarID, op.Mapping.EventID).SendUpdates("none").Context(ctx).Do()
	if err != nil && Classify(err).Class != ClassGone {
		return err
	}
	res.Deleted++
	return p.Deleted(ctx, op.Key)
}
