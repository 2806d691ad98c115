package subscription

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/calsyncd/calsyncd/internal/config"
)

// Once starts runs under their accounts' leases: the daemon's scheduled
// and triggered runs and `calsyncd sync` all go through it, so a run never
// paces an account that another process is pacing.
type Once struct {
	Runner *Runner
	// Leases, when set, is this process's lease keeper; without one the
	// process is alone and holds every account.
	Leases *LeaseKeeper
}

// Holds reports whether this process may run the account's subscriptions.
func (o Once) Holds(account string) bool { return o.Leases == nil || o.Leases.Holds(account) }

// Run syncs one subscription, its context bound to the account's lease
// (cancelled when the lease is lost). When another process holds the
// account the error wraps ErrLeaseHeld.
func (o Once) Run(ctx context.Context, sub config.Subscription, opts Options) (Report, error) {
	account := sub.AccountName()
	if !o.Holds(account) {
		return Report{Subscription: sub.ID}, &LeaseHeldError{Account: account}
	}
	if o.Leases != nil {
		var cancel context.CancelFunc
		ctx, cancel = o.Leases.Bind(ctx, account)
		defer cancel()
	}
	return o.Runner.Sync(ctx, sub, opts)
}

// Result is one subscription's sync by All.
type Result struct {
	Report Report
	// Err is why the sync did not run or record: ErrBusy, ErrLeaseHeld
	// (naming the holder), a store failure.
	Err error
}

// All syncs each subscription once, in parallel, as many of an account's
// at once as Workers runs. With leases it first takes those of the
// subscriptions' accounts as a replica would, keeps them while the syncs
// run and gives them back at the end; a subscription whose account another
// live process holds is not run (its Err wraps ErrLeaseHeld and names the
// holder). The results are in subs' order. The error is for a lease that
// could not even be asked for.
func (o Once) All(ctx context.Context, subs []config.Subscription, opts Options) ([]Result, error) {
	holders := map[string]string{}
	if o.Leases != nil {
		var held []string
		for _, s := range subs {
			account := s.AccountName()
			if _, asked := holders[account]; asked {
				continue
			}
			ok, l, err := o.Leases.Acquire(ctx, account)
			if err != nil {
				o.Leases.Release(context.WithoutCancel(ctx))
				return nil, err
			}
			holders[account] = l.Owner
			if ok {
				held = append(held, account)
			}
		}
		keepCtx, stopKeeping := context.WithCancel(ctx)
		go o.Leases.Keep(keepCtx, func() []string { return held })
		defer func() {
			stopKeeping()
			o.Leases.Release(context.WithoutCancel(ctx))
		}()
	}
	results := make([]Result, len(subs))
	var wg sync.WaitGroup
	for _, lane := range o.lanes(subs, holders, results) {
		// As many goroutines per account as its passes may run at once
		// (Workers), each taking the account's next subscription: the
		// subscriptions wait as entries of a list, not as goroutines with
		// their stacks.
		var next atomic.Int64
		for range min(len(lane), o.Runner.Workers.PerAccount(len(lane))) {
			wg.Go(func() {
				for j := next.Add(1) - 1; j < int64(len(lane)); j = next.Add(1) - 1 {
					i := lane[j]
					rep, err := o.Run(ctx, subs[i], opts)
					results[i] = Result{Report: rep, Err: err}
				}
			})
		}
	}
	wg.Wait()
	return results, nil
}

// lanes are the indexes of the subscriptions to run, by account, in subs'
// order; those of accounts another process holds get their result now.
func (o Once) lanes(subs []config.Subscription, holders map[string]string, results []Result) map[string][]int {
	lanes := map[string][]int{}
	for i, sub := range subs {
		account := sub.AccountName()
		if !o.Holds(account) {
			results[i] = Result{Report: Report{Subscription: sub.ID}, Err: &LeaseHeldError{Account: account, Holder: holders[account]}}
			continue
		}
		lanes[account] = append(lanes[account], i)
	}
	return lanes
}
