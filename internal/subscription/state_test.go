package subscription_test

import (
	"fmt"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

func TestStateMachine(t *testing.T) {
	const (
		ok  = calsyncd.OutcomeOK
		nm  = calsyncd.OutcomeNotModified
		def = calsyncd.OutcomeDeferred
		par = calsyncd.OutcomePartial
		bad = calsyncd.OutcomeFailed
	)
	tests := []struct {
		name       string
		start      calsyncd.SubscriptionState
		outcomes   []calsyncd.Outcome
		wantState  calsyncd.State
		wantErrors int
	}{
		{"clean runs stay active", calsyncd.SubscriptionState{}, []calsyncd.Outcome{ok, nm, ok}, calsyncd.StateActive, 0},
		// The seed's loop: rate limits must never look like auth failures.
		{"three rate-limited runs stay active, counter untouched", calsyncd.SubscriptionState{State: calsyncd.StateActive, ConsecutiveErrors: 1},
			[]calsyncd.Outcome{def, def, def}, calsyncd.StateActive, 1},
		{"three failures make ERROR", calsyncd.SubscriptionState{}, []calsyncd.Outcome{bad, bad, bad}, calsyncd.StateError, 3},
		{"two failures are not yet ERROR", calsyncd.SubscriptionState{}, []calsyncd.Outcome{bad, bad}, calsyncd.StateActive, 2},
		{"deferred between failures neither resets nor counts", calsyncd.SubscriptionState{}, []calsyncd.Outcome{bad, def, bad, def, bad}, calsyncd.StateError, 3},
		{"a clean run returns ERROR to ACTIVE", calsyncd.SubscriptionState{State: calsyncd.StateError, ConsecutiveErrors: 5}, []calsyncd.Outcome{ok}, calsyncd.StateActive, 0},
		{"a partial run is clean", calsyncd.SubscriptionState{State: calsyncd.StateError, ConsecutiveErrors: 3}, []calsyncd.Outcome{par}, calsyncd.StateActive, 0},
		{"deferred does not rescue ERROR", calsyncd.SubscriptionState{State: calsyncd.StateError, ConsecutiveErrors: 3}, []calsyncd.Outcome{def}, calsyncd.StateError, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.start
			for _, o := range tt.outcomes {
				subscription.Advance(&st, o, 3)
			}
			if st.State != tt.wantState || st.ConsecutiveErrors != tt.wantErrors {
				t.Errorf("after %v: %s/%d, want %s/%d", tt.outcomes, st.State, st.ConsecutiveErrors, tt.wantState, tt.wantErrors)
			}
		})
	}
}

func TestStateTransitionsAreReported(t *testing.T) {
	st := calsyncd.SubscriptionState{State: calsyncd.StateActive, ConsecutiveErrors: 2}
	tr := subscription.Advance(&st, calsyncd.OutcomeFailed, 3)
	if !tr.Changed || tr.From != calsyncd.StateActive || tr.To != calsyncd.StateError {
		t.Errorf("transition = %+v", tr)
	}
	tr = subscription.Advance(&st, calsyncd.OutcomeOK, 3)
	if got := fmt.Sprintln(tr.Changed, tr.From, tr.To); got != "true ERROR ACTIVE\n" {
		t.Errorf("transition = %s", got)
	}
}
