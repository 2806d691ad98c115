package alert

import (
	"context"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// Conditions, as the store remembers them.
const (
	condError        = "error"
	condDeletesHeld  = "deletes_held"
	condAuthFailed   = "auth_failed"
	condUsageLimited = "usage_limited"
	condFeedThrottle = "feed_throttled"
	condStrays       = "strays"
)

// observation is what one settled run says of one condition.
type observation struct {
	condition string
	subject   string
	finding   calsyncd.Finding
	// enter is announced (and reminded of) while it holds; clear, when
	// set, when it stops.
	enter, clear Event
}

// observe lists what a settled run says of each condition.
func observe(s calsyncd.Settled) []observation {
	inError, held := calsyncd.Cleared, calsyncd.Cleared
	if s.To == calsyncd.StateError {
		inError = calsyncd.Holds
	}
	// Deletes held because the run adopted their events are no lasting
	// hold (the run lets them go): they are told as strays.
	if s.HeldDeletes-s.HeldAdopted > 0 {
		held = calsyncd.Holds
	}
	return []observation{
		{condition: condError, subject: s.Subscription, finding: inError, enter: ErrorEntered, clear: ErrorCleared},
		{condition: condDeletesHeld, subject: s.Subscription, finding: held, enter: DeletesHeld, clear: DeletesReleased},
		// An account's credentials working again, or its lockout ending,
		// needs no one: the subscriptions' own alerts say the rest.
		{condition: condAuthFailed, subject: s.Account, finding: s.CredentialsRefused, enter: AuthFailed},
		{condition: condUsageLimited, subject: s.Account, finding: s.UsageLimited, enter: UsageLimited},
		// A feed that answers again needs no one: its runs resume.
		{condition: condFeedThrottle, subject: s.Subscription, finding: s.FeedThrottled, enter: FeedThrottled},
		// Strays go when an operator deletes them, or a reconcile no
		// longer finds them: nobody needs telling.
		{condition: condStrays, subject: s.Subscription, finding: s.Strays, enter: StraysLeft},
	}
}

// undo puts back what was remembered of a condition before an alert no
// webhook took: the state it had (prev, when found), or none.
func (n *Notifier) undo(condition, subject string, prev calsyncd.AlertState, found, deleted bool) func() {
	return func() {
		ctx := context.WithoutCancel(n.ctx)
		var err error
		if found {
			err = n.o.Memory.SaveAlertState(ctx, prev)
		} else if !deleted {
			err = n.o.Memory.DeleteAlertState(ctx, condition, subject)
		}
		n.mu.Lock()
		n.undelivered++
		n.mu.Unlock()
		// Remembered for status until a message of the condition is
		// delivered: the first failure's time is kept.
		u := calsyncd.UndeliveredAlert(condition, subject)
		u.Since, u.NotifiedAt = n.o.Now().UTC(), n.o.Now().UTC()
		if was, ok, lerr := n.o.Memory.AlertState(ctx, u.Condition, u.Subject); lerr == nil && ok {
			u.Since = was.Since
		}
		if serr := n.o.Memory.SaveAlertState(ctx, u); serr != nil {
			n.log.Warn("alerts: cannot record that an alert was not delivered", "condition", condition, "subject", subject, "error", serr)
		}
		if err != nil {
			n.log.Warn("alerts: cannot forget an alert that was not delivered; it waits for the reminder", "condition", condition,
				"subject", subject, "error", err)
			return
		}
		n.log.Warn("alerts: no webhook took the alert; the next run sends it again", "condition", condition, "subject", subject)
	}
}

// took forgets that alerts of a condition could not be delivered, once one
// of its messages was.
func (n *Notifier) took(condition, subject string) func() {
	return func() {
		u := calsyncd.UndeliveredAlert(condition, subject)
		if err := n.o.Memory.DeleteAlertState(context.WithoutCancel(n.ctx), u.Condition, u.Subject); err != nil {
			n.log.Warn("alerts: cannot forget that an alert was not delivered", "condition", condition, "subject", subject, "error", err)
		}
	}
}

// decide weighs a settled run against what was announced before and
// returns the alerts it calls for, remembering them. A condition that
// starts is announced once; while it lasts, it is announced again (a
// reminder) when RemindEvery has passed since the last time; when it
// stops, the clearing event (if it has one) is sent and it is forgotten.
func (n *Notifier) decide(cfg *config.Config, s calsyncd.Settled) []Message {
	ctx := context.WithoutCancel(n.ctx)
	// The run's end is when the condition was seen (the queue may hold the
	// run a moment).
	now := s.Run.FinishedAt
	if now.IsZero() {
		now = n.o.Now()
	}
	var out []Message
	for _, ob := range observe(s) {
		if ob.finding == calsyncd.Unknown || ob.subject == "" {
			continue
		}
		prev, found, err := n.o.Memory.AlertState(ctx, ob.condition, ob.subject)
		if err != nil {
			// Without it a message could go twice, or every run: skip it;
			// the next run weighs the condition again.
			n.log.Warn("alerts: cannot read what was announced; skipping", "condition", ob.condition, "subject", ob.subject, "error", err)
			continue
		}
		var (
			m   Message
			st  = calsyncd.AlertState{Condition: ob.condition, Subject: ob.subject, Since: now, NotifiedAt: now}
			del bool
		)
		switch {
		case ob.finding == calsyncd.Holds && !found:
			m = describe(cfg, ob.enter, s, false, now)
		case ob.finding == calsyncd.Holds && now.Sub(prev.NotifiedAt) >= n.o.RemindEvery:
			st.Since = prev.Since
			m = describe(cfg, ob.enter, s, true, prev.Since)
		case ob.finding == calsyncd.Cleared && found:
			del = true
			if ob.clear != "" {
				m = describe(cfg, ob.clear, s, false, prev.Since)
			}
		default:
			continue
		}
		if del {
			err = n.o.Memory.DeleteAlertState(ctx, ob.condition, ob.subject)
		} else {
			err = n.o.Memory.SaveAlertState(ctx, st)
		}
		if err != nil {
			n.log.Warn("alerts: cannot record an alert; not sending it, to send it at most once", "condition", ob.condition,
				"subject", ob.subject, "error", err)
			continue
		}
		if m.Event != "" {
			m.At = now.UTC()
			m.delivery = &delivery{undo: n.undo(ob.condition, ob.subject, prev, found, del), took: n.took(ob.condition, ob.subject)}
			out = append(out, m)
		}
	}
	return out
}
