package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// runReader reads what a daemon's run recorded.
type runReader interface {
	Runs(ctx context.Context, subscriptionID string, limit int) ([]calsyncd.Run, error)
	Subscription(ctx context.Context, id string) (calsyncd.SubscriptionState, error)
}

// handOffRefused: the daemon did not take the sync.
type handOffRefused struct {
	id, listen string
	held       error // why the sync did not run here
	err        error // the daemon's answer
}

func (e *handOffRefused) Error() string {
	var ho *status.HandOffError
	var held *subscription.LeaseHeldError
	if errors.As(e.err, &ho) && ho.LeaseHeld() {
		holder := ho.Holder
		if holder == "" && errors.As(e.held, &held) {
			holder = held.Holder
		}
		return fmt.Sprintf("account %s is held by %s, not by the daemon at %s (%v); run the sync where %s runs, or wait for its lease to lapse",
			ho.Account, holder, e.listen, e.err, holder)
	}
	return fmt.Sprintf("%v, and the daemon's status endpoint at %s did not take the sync: %v", e.held, e.listen, e.err)
}

// handOffUnfinished: the daemon took the sync; we stopped waiting for it.
type handOffUnfinished struct {
	runID int64
	err   error
}

func (e *handOffUnfinished) Error() string {
	return fmt.Sprintf("handed to the running daemon as run %d, which goes on without us (%v); see calsyncd status", e.runID, e.err)
}

// handOff passes each subscription whose account a running daemon holds to
// that daemon, with every option of this sync, and waits for the daemon's
// run to finish, so that the table and the exit code tell its outcome.
func (c *syncCommand) handOff(ctx context.Context, cfg *config.Config, st runReader, results []subscription.Result, opts subscription.Options) {
	for i := range results {
		res := &results[i]
		if !errors.Is(res.Err, subscription.ErrLeaseHeld) {
			continue
		}
		id := res.Report.Subscription
		runID, err := status.HandOff(ctx, cfg, id, opts)
		if err != nil {
			res.Err = &handOffRefused{id: id, listen: cfg.Listen, held: res.Err, err: err}
			continue
		}
		fmt.Fprintf(c.m.Stderr, "calsyncd: %s: a running daemon holds its account; handed the sync to it as run %d\n", id, runID)
		rep, err := awaitRun(ctx, st, id, runID)
		if err != nil {
			res.Err = &handOffUnfinished{runID: runID, err: err}
			continue
		}
		res.Report, res.Err = rep, nil
	}
}

// awaitRun waits for a run the daemon recorded to finish and returns it
// as a report.
func awaitRun(ctx context.Context, st runReader, id string, runID int64) (subscription.Report, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		runs, err := st.Runs(ctx, id, 50)
		if err != nil {
			return subscription.Report{}, err
		}
		for _, r := range runs {
			if r.ID != runID || r.FinishedAt.IsZero() {
				continue
			}
			sub, err := st.Subscription(ctx, id)
			if err != nil {
				return subscription.Report{}, err
			}
			return subscription.Report{Subscription: id, Run: r, State: sub.State,
				Transition: subscription.Transition{To: sub.State, ConsecutiveErrors: sub.ConsecutiveErrors}}, nil
		}
		select {
		case <-ctx.Done():
			return subscription.Report{}, ctx.Err()
		case <-tick.C:
		}
	}
}
