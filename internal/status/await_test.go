package status_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/status"
)

// daemonRuns is a store whose run finishes at done (virtual time).
type daemonRuns struct {
	mu   sync.Mutex
	done time.Time
}

func (d *daemonRuns) Runs(context.Context, string, int) ([]calsyncd.Run, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := calsyncd.Run{ID: 7, StartedAt: time.Now()}
	if !time.Now().Before(d.done) {
		r.FinishedAt, r.Outcome = time.Now(), calsyncd.OutcomeOK
	}
	return []calsyncd.Run{{ID: 6, FinishedAt: time.Now()}, r}, nil
}

func (d *daemonRuns) Subscription(_ context.Context, id string) (calsyncd.SubscriptionState, error) {
	return calsyncd.SubscriptionState{ID: id, State: calsyncd.StateActive}, nil
}

// TestAwaitRun: the wait ends when the daemon's run (and no other) has
// finished, with the run and the subscription's state; a caller that stops
// waiting gets its context's error.
func TestAwaitRun(t *testing.T) {
	for _, tt := range []struct {
		name     string
		finishIn time.Duration
		waitFor  time.Duration
		want     error
	}{
		{"finished already", 0, time.Minute, nil},
		{"finishes in a second", time.Second, time.Minute, nil},
		{"the caller stops first", time.Hour, time.Second, context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &daemonRuns{done: time.Now().Add(tt.finishIn)}
				ctx, cancel := context.WithTimeout(t.Context(), tt.waitFor)
				defer cancel()
				start := time.Now()
				rep, err := status.AwaitRun(ctx, st, "team", 7)
				if !errors.Is(err, tt.want) {
					t.Fatalf("AwaitRun: %v, want %v", err, tt.want)
				}
				if err != nil {
					return
				}
				if rep.Run.ID != 7 || rep.Subscription != "team" || rep.State != calsyncd.StateActive || rep.Transition.To != calsyncd.StateActive {
					t.Errorf("report %+v", rep)
				}
				if waited := time.Since(start); waited < tt.finishIn || waited > tt.finishIn+50*time.Millisecond {
					t.Errorf("waited %v for a run finishing in %v", waited, tt.finishIn)
				}
			})
		})
	}
}
