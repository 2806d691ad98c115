package gcalwriter

import (
	"errors"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// verdict is what became of one write. Every error a write can end with is
// sorted into one, here and only here; count counts it and the Observer
// is told its outcome.
type verdict int

const (
	written    verdict = iota // done (or done but not recorded: unrecorded)
	unrecorded                // Google took it, the Persister did not: the batch stops
	deferred                  // the account's throttle window is open
	skipped                   // the batch stopped, or the request was cancelled
	unparented                // its series was refused in this batch
	noInstance                // the series in Google has no such occurrence
	fatal                     // an *Error: the subscription stops for this run
	authFailed                // Google refused the credentials: fatal too
	rejected                  // Google refused the event for its content
	failed                    // transient trouble beyond the retries
)

// outcome names the verdict for the Observer.
func (v verdict) outcome() string {
	switch v {
	case written, unrecorded:
		return "ok"
	case deferred:
		return "deferred"
	case skipped, unparented:
		return "skipped"
	case rejected:
		return "rejected"
	}
	return "failed"
}

// judge sorts a write's error into its verdict, with Google's
// classification when the verdict came from it.
func (w *Writer) judge(err error) (verdict, Classification) {
	switch {
	case err == nil:
		return written, Classification{}
	case errors.Is(err, errThrottled):
		return deferred, Classification{}
	case errors.Is(err, errStopped):
		return skipped, Classification{}
	case errors.Is(err, errUnparented):
		return unparented, Classification{}
	case errors.As(err, new(*unrecordedError)):
		return unrecorded, Classification{}
	case errors.As(err, new(*noInstanceError)), errors.As(err, new(*misdirectedError)):
		return noInstance, Classification{}
	case errors.As(err, new(*Error)):
		return fatal, Classification{}
	}
	c := w.classOf(err)
	switch c.Class {
	case calsyncd.ClassInvalid:
		return rejected, c
	case calsyncd.ClassAuth:
		return authFailed, c
	case calsyncd.ClassCanceled:
		return skipped, c
	}
	return failed, c
}

// count counts a write's outcome; a fatal one stops the batch.
func (w *Writer) count(br *batchRun, op diff.Op, err error) {
	v, c := w.judge(err)
	if !op.Forget {
		// Forgetting a mapping is no write.
		w.o.Observer.WriteDone(br.SubscriptionID, op.Kind.String(), v.outcome())
	}
	switch v {
	case written:
	case deferred:
		br.update(func(r *calsyncd.WriteResult) { r.Deferred++ })
	case skipped:
		br.update(func(r *calsyncd.WriteResult) { r.Skipped++ })
	case unparented:
		br.update(func(r *calsyncd.WriteResult) { r.Unparented++ })
	case unrecorded:
		// The write itself is counted; the batch cannot go on.
		var u *unrecordedError
		errors.As(err, &u)
		w.stopWith(br, u.err)
	case noInstance:
		// Shape only plans exceptions of occurrences the series has; the
		// series in Google may lag behind (its own write failed). Retried
		// next run.
		// A misdirected answer (another instance) is reported the same
		// way: never taken as done.
		// The first few are logged one by one (a holiday feed against a
		// series Google lags on could otherwise log hundreds a run).
		var nth int
		br.update(func(r *calsyncd.WriteResult) { r.Failed++ })
		br.mu.Lock()
		br.noInstances++
		nth = br.noInstances
		br.mu.Unlock()
		switch {
		case nth <= loggedRejections:
			w.log.Warn("no instance to write the exception to", "subscription", br.SubscriptionID, "event", op.Key.String(), "error", err.Error())
		case nth == loggedRejections+1:
			w.log.Warn("more exceptions without an instance in this batch: not logged one by one (the run's failed count holds them)",
				"subscription", br.SubscriptionID)
		}
	case fatal:
		var e *Error
		errors.As(err, &e)
		w.fail(br, e)
	case authFailed:
		w.fail(br, &Error{Subscription: br.SubscriptionID, Op: op.Kind.String(), Class: c.Class, Code: c.Code, Reason: c.Reason, Msg: c.Message, Err: err})
	case rejected:
		w.reject(br, op, fmt.Sprintf("HTTP %d %s: %s", c.Code, c.Reason, c.Message))
	case failed:
		br.update(func(r *calsyncd.WriteResult) { r.Failed++ })
		w.log.Debug("write failed", "subscription", br.SubscriptionID, "op", op.Kind.String(), "class", string(c.Class),
			"code", c.Code, "reason", c.Reason)
	}
}

// reject records an event Google refused (or cannot hold): it is not sent
// again until its content changes. A refused series is remembered for the
// batch, so that its exceptions are not attempted.
func (w *Writer) reject(br *batchRun, op diff.Op, reason string) {
	rej := calsyncd.Rejection{Key: op.Key, Reason: reason, At: w.clock.Now()}
	if op.Event != nil {
		rej.Hash = op.Event.Hash
	}
	series := op.Event != nil && op.Event.IsRecurring()
	var nth int
	br.update(func(r *calsyncd.WriteResult) {
		r.Rejected++
		nth = r.Rejected
		r.Rejections = append(r.Rejections, rej)
		if series {
			r.RefusedSeries = append(r.RefusedSeries, op.Key)
		}
	})
	if series {
		br.mu.Lock()
		if br.refused == nil {
			br.refused = map[calsyncd.Key]bool{}
		}
		br.refused[op.Key] = true
		br.mu.Unlock()
	}
	if perr := br.p.Rejected(br.ctx, rej); perr != nil {
		w.stopWith(br, persistError(br, op, perr).err)
		return
	}
	// The first few are logged one by one; the batch's line counts them
	// all (a feed of thousands of refused events must not flood the log).
	if nth <= loggedRejections {
		w.log.Warn("event rejected by Google", "subscription", br.SubscriptionID, "op", op.Kind.String(), "event", op.Key.String(), "reason", reason)
	}
}

// loggedRejections is how many refusals a batch logs one by one.
const loggedRejections = 10

// fail records the write as failed and stops the batch.
func (w *Writer) fail(br *batchRun, e *Error) {
	br.update(func(r *calsyncd.WriteResult) { r.Failed++ })
	w.stopWith(br, e)
}

// stopWith stops the batch: the subscription cannot go on this run.
func (w *Writer) stopWith(br *batchRun, e *Error) {
	br.update(func(r *calsyncd.WriteResult) {
		if r.Err == nil {
			r.Err = e
		}
	})
	br.stop(e)
}
