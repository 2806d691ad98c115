package gcalwriter

import (
	"context"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// accountCheckShare is how long one answer to CheckAccount stands for the
// account: the passes of one `calsyncd sync` or one daemon tick begin
// within it, so they share one request however many subscriptions the
// account has; an hour later the next pass asks again.
const accountCheckShare = time.Minute

// accountCheck is the last CheckAccount of the writer's account.
type accountCheck struct {
	at   time.Time
	done chan struct{} // closed once the answer is in
	// answered: Google answered (then it took the credentials, unless
	// refused says otherwise); refused: it refused the account's
	// credentials (401, the token endpoint's invalid_grant, a token
	// without our scopes), for every calendar.
	answered bool
	refused  error
	// calendars are the verdicts on the calendars asked about: nil, it is
	// there and shared with the account; else why not.
	calendars map[string]error
}

// CheckAccount tells whether Google still takes the account's credentials,
// at the cost of at most one cheap read (calendars.get of calendarID) per
// account within accountCheckShare: the passes of several subscriptions
// share it, and the batch that follows does not ask again. It is how a
// pass whose feed has not changed (and so writes nothing) still notices a
// revoked token.
//
// err is a *Error of class auth when Google refused the credentials (for
// every calendar of the account) or the calendar asked about (not found,
// not shared); answered reports whether Google answered at all. Rate and
// usage limits, a throttle window still open and transient faults are no
// verdict: err is nil and the caller goes on (they never count toward
// ERROR).
func (w *Writer) CheckAccount(ctx context.Context, subscriptionID, calendarID string) (answered bool, err error) {
	for {
		w.checkMu.Lock()
		c := w.check
		if c == nil || w.clock.Now().Sub(c.at) >= accountCheckShare {
			break // ask, holding checkMu until the check is set up
		}
		w.checkMu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return false, nil
		}
		if c.refused != nil {
			return false, forSubscription(c.refused, subscriptionID)
		}
		w.checkMu.Lock()
		verdict, asked := c.calendars[calendarID]
		w.checkMu.Unlock()
		if asked || !c.answered {
			return c.answered, forSubscription(verdict, subscriptionID)
		}
		// The credentials are good; the calendar is the batch's to check.
		return true, nil
	}
	c := &accountCheck{at: w.clock.Now(), done: make(chan struct{}), calendars: map[string]error{}}
	w.check = c
	w.checkMu.Unlock()
	defer close(c.done)

	if err := w.Load(ctx); err != nil {
		w.log.Warn("checking the account without its throttle memory", "error", err)
	}
	br := &batchRun{Batch: diff.Batch{SubscriptionID: subscriptionID, CalendarID: calendarID}, ctx: ctx, prio: Incremental}
	br.gate, br.cancel = context.WithCancelCause(ctx)
	defer br.cancel(nil)
	answered, err = w.askCalendar(br)
	w.checkMu.Lock()
	defer w.checkMu.Unlock()
	c.answered = answered
	if refused, ok := err.(*Error); ok && refused.CredentialsRefused() {
		c.refused = err
	} else if answered {
		c.calendars[calendarID] = err
	}
	return answered, err
}

// askCalendar is checkCalendar's request, telling also whether Google
// answered it. Only an *Error is a verdict: being throttled or stopped is
// none.
func (w *Writer) askCalendar(br *batchRun) (bool, error) {
	var answered bool
	err := w.checkCalendarWith(br, &budget{}, &answered)
	if _, verdict := err.(*Error); err != nil && !verdict {
		return answered, nil
	}
	return answered, err
}

// checkedRecently: a CheckAccount within accountCheckShare found the
// calendar there, so a batch need not ask again.
func (w *Writer) checkedRecently(calendarID string) bool {
	w.checkMu.Lock()
	defer w.checkMu.Unlock()
	c := w.check
	if c == nil || w.clock.Now().Sub(c.at) >= accountCheckShare {
		return false
	}
	select {
	case <-c.done:
	default:
		return false
	}
	verdict, asked := c.calendars[calendarID]
	return asked && verdict == nil && c.refused == nil
}

// forSubscription is a shared verdict as the error of the subscription
// that asked (the error names its subscription).
func forSubscription(err error, subscriptionID string) error {
	e, ok := err.(*Error)
	if !ok || e.Subscription == subscriptionID {
		return err
	}
	c := *e
	c.Subscription = subscriptionID
	return &c
}

// CalendarID is the id Google gives the calendar calendarID names for
// this account: "primary" and the account's address are one calendar, and
// only Google knows which ids are aliases. The answer is kept for the
// writer's life (a calendar's id never changes). "" is Google's answer
// that the account has no such calendar (404); an error is a refusal of
// the credentials or no answer at all (rate-limited, stopped): then
// nothing is known.
func (w *Writer) CalendarID(ctx context.Context, calendarID string) (string, error) {
	w.checkMu.Lock()
	id, ok := w.calendarIDs[calendarID]
	w.checkMu.Unlock()
	if ok {
		return id, nil
	}
	br := &batchRun{Batch: diff.Batch{CalendarID: calendarID}, ctx: ctx, prio: Incremental}
	br.gate, br.cancel = context.WithCancelCause(ctx)
	defer br.cancel(nil)
	err := w.call(br, &budget{}, read, func(ctx context.Context) error {
		cal, err := w.svc.Calendars.Get(calendarID).Context(ctx).Do(w.callOpts...)
		if err == nil {
			if id = cal.Id; id == "" {
				return fmt.Errorf("gcalwriter: calendars.get(%q) answered no id", calendarID)
			}
		}
		return err
	})
	if err != nil {
		if c := w.classOf(err); c.Class == calsyncd.ClassGone {
			return "", nil
		}
		return "", fmt.Errorf("gcalwriter: the id of calendar %q: %w", calendarID, err)
	}
	w.checkMu.Lock()
	defer w.checkMu.Unlock()
	if w.calendarIDs == nil {
		w.calendarIDs = map[string]string{}
	}
	w.calendarIDs[calendarID] = id
	return id, nil
}
