package subscription_test

import (
	"fmt"
	"testing"

	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

func TestStateMachine(t *testing.T) {
	const (
		ok  = store.OutcomeOK
		nm  = store.OutcomeNotModified
		def = store.OutcomeDeferred
		par = store.OutcomePartial
		bad = store.OutcomeFailed
	)
	tests := []struct {
		name       string
		start      store.SubscriptionState
		outcomes   []string
		wantState  string
		wantErrors int
	}{
		{"clean runs stay active", store.SubscriptionState{}, []string{ok, nm, ok}, store.StateActive, 0},
		// The seed's loop: rate limits must never look like auth failures.
		{"three rate-limited runs stay active, counter untouched", store.SubscriptionState{State: store.StateActive, ConsecutiveErrors: 1},
			[]string{def, def, def}, store.StateActive, 1},
		{"three failures make ERROR", store.SubscriptionState{}, []string{bad, bad, bad}, store.StateError, 3},
		{"two failures are not yet ERROR", store.SubscriptionState{}, []string{bad, bad}, store.StateActive, 2},
		{"deferred between failures neither resets nor counts", store.SubscriptionState{}, []string{bad, def, bad, def, bad}, store.StateError, 3},
		{"a clean run returns ERROR to ACTIVE", store.SubscriptionState{State: store.StateError, ConsecutiveErrors: 5}, []string{ok}, store.StateActive, 0},
		{"a partial run is clean", store.SubscriptionState{State: store.StateError, ConsecutiveErrors: 3}, []string{par}, store.StateActive, 0},
		{"deferred does not rescue ERROR", store.SubscriptionState{State: store.StateError, ConsecutiveErrors: 3}, []string{def}, store.StateError, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.start
			for _, o := range tt.outcomes {
				subscription.Apply(&st, o, 3)
			}
			if st.State != tt.wantState || st.ConsecutiveErrors != tt.wantErrors {
				t.Errorf("after %v: %s/%d, want %s/%d", tt.outcomes, st.State, st.ConsecutiveErrors, tt.wantState, tt.wantErrors)
			}
		})
	}
}

func TestStateTransitionsAreReported(t *testing.T) {
	st := store.SubscriptionState{State: store.StateActive, ConsecutiveErrors: 2}
	tr := subscription.Apply(&st, store.OutcomeFailed, 3)
	if !tr.Changed || tr.From != store.StateActive || tr.To != store.StateError {
		t.Errorf("transition = %+v", tr)
	}
	tr = subscription.Apply(&st, store.OutcomeOK, 3)
	if got := fmt.Sprintln(tr.Changed, tr.From, tr.To); got != "true ERROR ACTIVE\n" {
		t.Errorf("transition = %s", got)
	}
}
