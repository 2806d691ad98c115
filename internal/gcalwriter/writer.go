package gcalwriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// Error is a failure that stops a subscription's writes for this run.
type Error struct {
	Subscription string
	Op           string
	Class        calsyncd.ErrorClass
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

// ErrorClass implements calsyncd.Classed.
func (e *Error) ErrorClass() calsyncd.ErrorClass { return e.Class }

// ErrCalendarNotFound is wrapped when the target calendar does not exist or
// is not shared with the account.
var ErrCalendarNotFound = errors.New("calendar not found or not shared with this account")

// Writer applies plans to one Google account. It owns the account's pacer
// and throttle window, so every subscription writing as the account must
// share one Writer.
type Writer struct {
	svc   *calendar.Service
	log   *slog.Logger
	o     Options
	clock Clock
	pacer *Pacer
	// callOpts go with every request (the quota user).
	callOpts []googleapi.CallOption

	loadMu sync.Mutex
	loaded bool

	mu  sync.Mutex
	rng *rand.Rand
	win window
	// remembered is the throttle memory as last saved.
	remembered calsyncd.AccountState
	batches    map[*batchRun]struct{}

	// checkMu guards check, the account's last CheckAccount.
	checkMu sync.Mutex
	check   *accountCheck
	// calendarIDs are the ids Google gave the calendar ids asked about
	// (CalendarID), under checkMu.
	calendarIDs map[string]string
	// foreignSeen are the other owners already reported (foreignOwners),
	// under checkMu.
	foreignSeen map[string]bool

	// ids is what the Writer learnt of how Google names and finds the
	// instances of series.
	ids instanceIDs
}

// New returns a Writer that talks to Google through svc.
func New(svc *calendar.Service, opts Options) *Writer {
	o := opts.withDefaults()
	var callOpts []googleapi.CallOption
	if o.QuotaUser != "" {
		callOpts = append(callOpts, googleapi.QuotaUser(o.QuotaUser))
	}
	return &Writer{
		callOpts: callOpts,
		svc:      svc,
		log:      o.Logger,
		o:        o,
		clock:    o.Clock,
		pacer: NewPacer(PacerOptions{Concurrency: o.Concurrency, Spacing: o.Spacing, MaxSpacing: o.MaxSpacing,
			BackfillShare: o.BackfillShare, Clock: o.Clock}),
		rng:     rand.New(rand.NewPCG(o.Seed, 0x5851f42d4c957f2d)),
		batches: map[*batchRun]struct{}{},
	}
}

// Sentinel causes that stop a batch.
var (
	errThrottled = errors.New("gcalwriter: deferred: Google throttled the account")
	errStopped   = errors.New("gcalwriter: not attempted: the batch stopped")
	errDraining  = errors.New("gcalwriter: not attempted: draining for shutdown")
)

// classStopped marks our own stop sentinels for the op logic.
const classStopped calsyncd.ErrorClass = "stopped"

// batchRun is one Apply in progress.
type batchRun struct {
	diff.Batch
	prio Priority
	p    calsyncd.Persister
	// ctx is the caller's: requests use it, so a closing gate never cuts an
	// answer that is on its way.
	ctx context.Context
	// gate is done when the batch must stop starting requests; its cause
	// says why.
	gate   context.Context
	cancel context.CancelCauseFunc

	mu  sync.Mutex
	res calsyncd.WriteResult
	// series holds the Google ids and etags of the recurring events
	// written in this batch, for their exceptions; refused those Google
	// refused; adopted the ids of series found in Google already (their
	// exceptions may be there too).
	series  map[calsyncd.Key]writtenSeries
	refused map[calsyncd.Key]bool
	adopted map[string]bool
	// listings is what the batch listed of its series' instances.
	listings instanceIndex
	// offRule holds the ids of exceptions found shown off their series'
	// changed rule, for their Forget ops to delete; repairs the
	// exceptions being repaired (verifySeries).
	offRule map[calsyncd.Key]offRuleHit
	repairs map[calsyncd.Key]bool
	// holding: overrides that need a lookup are held back (hold) for one
	// listing of the calendar, written after the batch's other ops.
	holding bool
	held    []diff.Op
	// noInstances counts the exceptions that found no instance, for
	// sampling their log lines.
	noInstances int
}

// writtenSeries is a series written in this batch.
type writtenSeries struct{ id, etag string }

func (br *batchRun) stop(cause error) { br.cancel(cause) }

// seriesOf is the Google id and etag of an instance's series: written in
// this batch, or mapped before. refused reports a series Google refused in
// this batch.
func (br *batchRun) seriesOf(op diff.Op) (id, etag string, refused bool) {
	pk, _ := op.Key.Parent()
	br.mu.Lock()
	defer br.mu.Unlock()
	if s := br.series[pk]; s.id != "" {
		return s.id, s.etag, false
	}
	if br.refused[pk] {
		return "", "", true
	}
	if op.ParentMapping != nil {
		return op.ParentMapping.EventID, op.ParentMapping.ETag, false
	}
	return "", "", false
}

func (br *batchRun) wasAdopted(seriesID string) bool {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.adopted[seriesID]
}

// stopErr is why no further request may start, or nil.
func (br *batchRun) stopErr() error {
	if br.ctx.Err() != nil {
		return errStopped
	}
	switch cause := context.Cause(br.gate); {
	case cause == nil:
		return nil
	case errors.Is(cause, errThrottled):
		return errThrottled
	default:
		return errStopped
	}
}

func (br *batchRun) update(f func(r *calsyncd.WriteResult)) {
	br.mu.Lock()
	defer br.mu.Unlock()
	f(&br.res)
}

// leftOver counts the ops that were never started.
func (br *batchRun) leftOver(obs Observer, ops []diff.Op) {
	if len(ops) == 0 {
		return
	}
	deferred := br.stopErr() == errThrottled
	outcome := "skipped"
	if deferred {
		outcome = "deferred"
	}
	for _, op := range ops {
		obs.WriteDone(br.SubscriptionID, op.Kind.String(), outcome)
	}
	br.update(func(r *calsyncd.WriteResult) {
		if deferred {
			r.Deferred += len(ops)
		} else {
			r.Skipped += len(ops)
		}
	})
}

// Apply performs the batch's writes, persisting each success through p.
// It never fails on a rate limit: what Google would not take now is
// deferred to the next run.
func (w *Writer) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	backfill := b.Backfill || (w.o.BackfillThreshold > 0 && len(b.Ops) > w.o.BackfillThreshold)
	if len(b.Ops) == 0 {
		return calsyncd.WriteResult{Backfill: backfill}
	}
	if err := w.Load(ctx); err != nil {
		// Google will tell us again if it still throttles the account.
		w.log.Warn("writing without the account's throttle memory", "error", err)
	}
	br := &batchRun{Batch: b, p: p, ctx: ctx, prio: Incremental}
	if backfill {
		br.prio = Backfill
	}
	br.res.Backfill = backfill
	br.gate, br.cancel = context.WithCancelCause(ctx)
	defer br.cancel(nil)
	if b.Drain != nil {
		select {
		case <-b.Drain:
			br.stop(errDraining)
		default:
		}
		go func() {
			select {
			case <-b.Drain:
				br.stop(errDraining)
			case <-br.gate.Done():
			}
		}()
	}

	if until, class, ok := w.throttledBy(w.clock.Now()); ok {
		for _, op := range b.Ops {
			w.o.Observer.WriteDone(b.SubscriptionID, op.Kind.String(), "deferred")
		}
		br.res.Deferred = len(b.Ops)
		br.res.ThrottleUntil, br.res.ThrottleClass = until, class
		w.logResult(br)
		w.observePacing()
		return br.res
	}
	w.mu.Lock()
	w.batches[br] = struct{}{}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.batches, br)
		w.mu.Unlock()
	}()

	if err := w.checkCalendar(br); err != nil {
		var fatal *Error
		if errors.As(err, &fatal) {
			br.res.Err = err
		}
		br.leftOver(w.o.Observer, b.Ops)
	} else {
		w.writeAll(br)
	}
	w.remember(ctx)
	if until, class, ok := w.throttledBy(w.clock.Now()); ok {
		br.res.ThrottleUntil, br.res.ThrottleClass = until, class
	}
	w.logResult(br)
	w.observePacing()
	return br.res
}

func (w *Writer) observePacing() {
	st := w.State()
	w.o.Observer.Pacing(w.o.Account, st.Spacing, st.ThrottleUntil)
}

// writeAll runs the batch's ops on up to Concurrency workers (the pacer
// decides how many requests really go at once). Ops for one UID stay in
// plan order on one worker: a master is written before its overrides, and
// overrides are deleted before their master.
//
// Where instance ids are opaque, overrides that need a lookup are held
// back (holdable) and written last, after one listing of the calendar
// finds their instances (listCalendar).
func (w *Writer) writeAll(br *batchRun) {
	progress := w.progress(br)
	br.holding = lookups(br.Ops) >= 2
	w.writeGroups(br, groupByUID(br.Ops), progress)
	held := br.takeHeld()
	if len(held) == 0 {
		return
	}
	if br.stopErr() != nil {
		br.leftOver(w.o.Observer, held)
		return
	}
	w.listCalendar(br, held)
	w.writeGroups(br, groupByUID(held), progress)
}

func (w *Writer) writeGroups(br *batchRun, groups [][]diff.Op, progress func()) {
	work := make(chan []diff.Op)
	var wg sync.WaitGroup
	for range min(w.o.Concurrency, len(groups)) {
		wg.Go(func() {
			for g := range work {
				for i, op := range g {
					if br.stopErr() != nil {
						br.leftOver(w.o.Observer, g[i:])
						break
					}
					if w.holdable(br, op) {
						br.hold(op)
						continue
					}
					w.count(br, op, w.writeOp(br, op))
					progress()
				}
			}
		})
	}
	for i, g := range groups {
		if br.stopErr() != nil {
			for _, g := range groups[i:] {
				br.leftOver(w.o.Observer, g)
			}
			break
		}
		work <- g
	}
	close(work)
	wg.Wait()
}

// progressMinOps is the smallest batch whose progress is logged.
const progressMinOps = 40

// progress returns a func to call after each counted op: for a large
// batch it logs each quarter done, so a long first sync shows it is moving.
func (w *Writer) progress(br *batchRun) func() {
	total := len(br.Ops)
	if total < progressMinOps {
		return func() {}
	}
	var (
		mu     sync.Mutex
		done   int
		logged int
	)
	start := w.clock.Now()
	return func() {
		mu.Lock()
		done++
		quarter := done * 4 / total
		if quarter <= logged || quarter >= 4 {
			mu.Unlock()
			return
		}
		logged = quarter
		n := done
		mu.Unlock()
		w.log.Info("writing", "subscription", br.SubscriptionID, "done", n, "of", total,
			"elapsed", w.clock.Now().Sub(start).Round(time.Millisecond).String())
	}
}

func groupByUID(ops []diff.Op) [][]diff.Op {
	index := map[string]int{}
	var groups [][]diff.Op
	for _, op := range ops {
		i, ok := index[op.Key.UID]
		if !ok {
			i = len(groups)
			index[op.Key.UID] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], op)
	}
	return groups
}

func (w *Writer) logResult(br *batchRun) {
	res := &br.res
	attrs := []any{
		slog.String("subscription", br.SubscriptionID), slog.String("calendar", br.CalendarID),
		slog.Int("ops", len(br.Ops)), slog.Bool("backfill", res.Backfill),
		slog.Int("created", res.Created), slog.Int("updated", res.Updated), slog.Int("deleted", res.Deleted),
		slog.Int("deferred", res.Deferred), slog.Int("failed", res.Failed), slog.Int("rejected", res.Rejected),
		slog.Int("skipped", res.Skipped), slog.Int("retries", res.Retries),
		slog.Duration("waited", res.Waited), slog.Duration("paced", res.Paced),
		slog.Duration("spacing", w.pacer.State().Spacing),
	}
	for c, n := range res.ByClass {
		attrs = append(attrs, slog.Int("errors_"+string(c), n))
	}
	if !res.ThrottleUntil.IsZero() {
		attrs = append(attrs, slog.String("throttle_until", res.ThrottleUntil.UTC().Format(time.RFC3339)))
	}
	if res.Rejected > loggedRejections {
		attrs = append(attrs, slog.Int("rejections_logged", loggedRejections))
	}
	if res.Deferred > 0 {
		w.log.Warn(deferredMsg(res.Deferred), attrs...)
		return
	}
	w.log.Info("batch written", attrs...)
}

// budget is one write's retry allowance, shared by every request the
// write needs (an insert, then a get and an update after a 409).
type budget struct {
	attempts int
	waited   time.Duration
	reauthed bool
}

// call sends one request of a write through the account's pacer, and sends
// it again while Google rate-limits it or a transient fault hits it, within
// the write's budget. When the budget is spent on a rate limit it opens the
// account's throttle window and returns errThrottled; a usage limit does
// so at once. Other errors are returned as they are.
func (w *Writer) call(br *batchRun, bud *budget, kind requestKind, fn func(ctx context.Context) error) error {
	for {
		if err := br.stopErr(); err != nil {
			return err
		}
		if _, ok := w.throttled(w.clock.Now()); ok {
			br.stop(errThrottled)
			return errThrottled
		}
		queued := w.clock.Now()
		acquire := w.pacer.Acquire
		if kind == read {
			acquire = w.pacer.AcquireRead
		}
		slot, err := acquire(br.gate, br.prio)
		if err != nil {
			if serr := br.stopErr(); serr != nil {
				return serr
			}
			return err
		}
		br.update(func(r *calsyncd.WriteResult) { r.Paced += slot.Start.Sub(queued) })
		// The window may have opened while this request queued.
		if _, ok := w.throttled(slot.Start); ok {
			slot.Release()
			br.stop(errThrottled)
			return errThrottled
		}
		rctx, cancel := context.WithTimeout(br.ctx, w.o.RequestTimeout)
		err = fn(rctx)
		cancel()
		slot.Release()
		now := w.clock.Now()
		if err == nil {
			w.o.Observer.Response(w.o.Account, "ok")
			// Reads always pass (even a usage-limited account may read):
			// only a write proves the quota has room again.
			if kind == write {
				w.pacer.Succeeded(slot.Start)
				w.succeeded(now)
			}
			return nil
		}
		if br.ctx.Err() != nil {
			return errStopped
		}
		wait, err := w.failed(br, bud, slot, err, now)
		if err != nil {
			return err
		}
		if wait > 0 {
			if serr := sleep(br.gate, w.clock, wait); serr != nil {
				if stop := br.stopErr(); stop != nil {
					return stop
				}
				return serr
			}
			bud.waited += wait
		}
		br.update(func(r *calsyncd.WriteResult) { r.Retries++; r.Waited += wait })
		w.o.Observer.Retry(w.o.Account)
	}
}

// failed decides what a failed request leads to: sending it again after a
// wait (none for a fresh token after a 401), within the write's budget, or
// the error the write ends with (errThrottled once a rate limit spent the
// budget, or at once for a usage limit).
func (w *Writer) failed(br *batchRun, bud *budget, slot *Slot, err error, now time.Time) (time.Duration, error) {
	c := ClassifyAt(err, now)
	w.o.Observer.Response(w.o.Account, string(c.Class))
	br.update(func(r *calsyncd.WriteResult) {
		if r.ByClass == nil {
			r.ByClass = map[calsyncd.ErrorClass]int{}
		}
		r.ByClass[c.Class]++
	})
	if c.Class == calsyncd.ClassRateLimited {
		w.pacer.RateLimited(slot.Start)
	}
	jitter := 0.0
	if c.Class == calsyncd.ClassRateLimited || c.Class == calsyncd.ClassTransient {
		jitter = w.jitter() // drawn only when a backoff uses it
	}
	v := decide(c, *bud, w.o, jitter)
	*bud = v.Budget
	switch v.Kind {
	case verdictThrottle:
		w.openWindow(br.ctx, c)
		return 0, errThrottled
	case verdictFail:
		return 0, err
	}
	return v.Wait, nil
}

// requestKind tells call whether a request spends the write quota.
type requestKind bool

const (
	read  requestKind = false
	write requestKind = true
)

// classOf classifies an error returned by call.
func (w *Writer) classOf(err error) Classification {
	if errors.Is(err, errThrottled) || errors.Is(err, errStopped) {
		return Classification{Class: classStopped}
	}
	return ClassifyAt(err, w.clock.Now())
}

// deferredMsg is the log line of a batch's deferred writes.
func deferredMsg(n int) string {
	if n == 1 {
		return "deferred 1 write"
	}
	return fmt.Sprintf("deferred %d writes", n)
}
