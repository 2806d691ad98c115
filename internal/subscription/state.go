// Package subscription runs subscriptions: one sync is fetch → parse →
// diff → write → record; the state machine decides between ACTIVE and
// ERROR; the scheduler runs every subscription on its cadence.
package subscription

import (
	"github.com/calsyncd/calsyncd/internal/store"
)

// Transition is the result of applying a run's outcome to a subscription's
// state.
type Transition struct {
	From, To          string
	ConsecutiveErrors int
	Changed           bool
}

// Apply folds one run outcome into a subscription's state: failed runs count
// toward ERROR, clean runs (ok, partial, not_modified) reset the count and
// return the subscription to ACTIVE, and deferred runs change nothing — a
// rate limit is not a failure, and a throttled run proves nothing about
// whether the subscription is healthy.
func Apply(st *store.SubscriptionState, outcome string, threshold int) Transition {
	t := Transition{From: st.State}
	if t.From == "" {
		t.From = store.StateActive
	}
	switch outcome {
	case store.OutcomeFailed:
		st.ConsecutiveErrors++
		if st.ConsecutiveErrors >= threshold {
			st.State = store.StateError
		}
	case store.OutcomeOK, store.OutcomePartial, store.OutcomeNotModified:
		st.ConsecutiveErrors = 0
		st.State = store.StateActive
	case store.OutcomeDeferred:
		// Neither increments nor resets.
	}
	if st.State == "" {
		st.State = store.StateActive
	}
	t.To = st.State
	t.ConsecutiveErrors = st.ConsecutiveErrors
	t.Changed = t.From != t.To
	return t
}
