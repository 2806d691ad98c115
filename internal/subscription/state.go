// Package subscription runs subscriptions: one sync is a pass through
// explicit stages (pass.go: fetch, parse, reconcile when due, shape, plan,
// guard, apply, settle); the state machine decides between ACTIVE and
// ERROR; Once starts every run under its account's lease; the daemon runs
// every subscription on its cadence.
package subscription

import (
	calsyncd "github.com/calsyncd/calsyncd"
)

// Transition is the result of applying a run's outcome to a subscription's
// state.
type Transition struct {
	From, To          calsyncd.State
	ConsecutiveErrors int
	Changed           bool
}

// Advance folds one run outcome into a subscription's state: failed runs count
// toward ERROR, clean runs (ok, partial, not_modified) reset the count and
// return the subscription to ACTIVE, and deferred runs change nothing — a
// rate limit is not a failure, and a throttled run proves nothing about
// whether the subscription is healthy.
func Advance(st *calsyncd.SubscriptionState, outcome calsyncd.Outcome, threshold int) Transition {
	t := Transition{From: st.State}
	if t.From == "" {
		t.From = calsyncd.StateActive
	}
	switch outcome {
	case calsyncd.OutcomeFailed:
		st.ConsecutiveErrors++
		if st.ConsecutiveErrors >= threshold {
			st.State = calsyncd.StateError
		}
	case calsyncd.OutcomeOK, calsyncd.OutcomePartial, calsyncd.OutcomeNotModified:
		st.ConsecutiveErrors = 0
		st.State = calsyncd.StateActive
	case calsyncd.OutcomeDeferred:
		// Neither increments nor resets.
	}
	if st.State == "" {
		st.State = calsyncd.StateActive
	}
	t.To = st.State
	t.ConsecutiveErrors = st.ConsecutiveErrors
	t.Changed = t.From != t.To
	return t
}
