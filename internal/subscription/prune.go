package subscription

import (
	"context"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// pruneRemoved handles subscriptions the database knows but the
// configuration no longer lists: with prune_on_remove their events are
// deleted from Google and the subscription forgotten; otherwise they are
// left alone (and logged once).
func (d *Daemon) pruneRemoved(ctx context.Context, cfg *config.Config) {
	known, err := d.store.Subscriptions(ctx)
	if err != nil {
		d.log.Warn("cannot list subscriptions in the database", "error", err)
		return
	}
	for _, st := range known {
		if _, ok := cfg.Subscription(st.ID); ok {
			continue
		}
		if d.leases != nil && !d.leases.Holds(st.Account) {
			continue // the replica holding the account prunes it
		}
		if !cfg.Sync.PruneOnRemove {
			d.log.Info("subscription removed from the configuration; its events stay in Google (set sync.prune_on_remove to delete them)",
				"subscription", st.ID)
			continue
		}
		d.prune(st)
	}
}

// pruneRetry is how often a prune that waits for another process's run of
// the subscription (a `calsyncd sync`) is tried again.
const pruneRetry = time.Minute

// prune deletes a removed subscription's events and forgets it. While a
// sync of it is running the prune is remembered: it is done as soon as
// the run ends (runEnded), or, when the run is another process's, tried
// again every pruneRetry.
func (d *Daemon) prune(st calsyncd.SubscriptionState) {
	d.mu.Lock()
	d.pendingPrune[st.ID] = true
	d.mu.Unlock()
	err := d.runner.Prune(d.work, st)
	switch {
	case errors.Is(err, ErrBusy):
		d.log.Info("a removed subscription is being synced; its events are pruned as soon as the run ends", "subscription", st.ID)
		time.AfterFunc(pruneRetry, func() { d.afterRun(st.ID) })
		return
	case err != nil:
		d.log.Error("prune of a removed subscription failed; retried at the next reload or start", "subscription", st.ID, "error", err)
	default:
		if err := d.store.DeleteSubscription(context.WithoutCancel(d.work), st.ID); err != nil {
			d.log.Error("cannot forget a pruned subscription", "subscription", st.ID, "error", err)
		}
	}
	d.mu.Lock()
	delete(d.pendingPrune, st.ID)
	d.mu.Unlock()
}

// afterRun does what waited for a run of the subscription to end: the
// prune of a subscription removed meanwhile (unless it is configured
// again, or the daemon is stopping: the next start prunes it).
func (d *Daemon) afterRun(id string) {
	d.mu.Lock()
	pending, cfg := d.pendingPrune[id], d.cfg
	if !pending || d.stopping {
		d.mu.Unlock()
		return
	}
	if _, back := cfg.Subscription(id); back || !cfg.Sync.PruneOnRemove {
		delete(d.pendingPrune, id)
		d.mu.Unlock()
		return
	}
	d.inflight.Add(1)
	d.mu.Unlock()
	defer d.inflight.Done()
	st, err := d.store.Subscription(d.work, id)
	if err != nil {
		d.log.Error("cannot read a removed subscription to prune it; retried at the next reload or start", "subscription", id, "error", err)
		return
	}
	d.prune(st)
}

// Prune deletes every event a subscription wrote, through the paced writer,
// forgetting each mapping as its event goes. It is used when a subscription
// is removed with sync.prune_on_remove set.
func (r *Runner) Prune(ctx context.Context, st calsyncd.SubscriptionState) error {
	unlock, err := r.lock(st.ID)
	if err != nil {
		return err
	}
	defer unlock()
	if err := r.pruneLeftBehind(ctx, st); err != nil {
		return err
	}
	mapped, err := r.Store.Mappings(ctx, st.ID)
	if err != nil {
		return err
	}
	if len(mapped) == 0 {
		return nil
	}
	w, err := r.Writer(st.Account)
	if err != nil {
		return err
	}
	plan := diff.Compute(nil, mapped, nil)
	rec := &persister{store: r.Store, sub: st.ID}
	res := w.Apply(ctx, diff.Batch{SubscriptionID: st.ID, CalendarID: st.Calendar, Ops: plan.Deletes}, rec)
	if err := rec.flush(ctx); err != nil {
		return err
	}
	r.log().Info("pruned a removed subscription", "subscription", st.ID, "deleted", res.Deleted, "deferred", res.Deferred, "failed", res.Failed)
	if res.Err != nil {
		return res.Err
	}
	if left := len(mapped) - res.Deleted; left > 0 {
		return fmt.Errorf("subscription: %d events of %s not yet deleted", left, st.ID)
	}
	return nil
}

// pruneLeftBehind deletes a removed subscription's events from the
// calendars it moved away from and had not vacated yet.
func (r *Runner) pruneLeftBehind(ctx context.Context, st calsyncd.SubscriptionState) error {
	for _, loc := range st.Vacating {
		w, err := r.Writer(loc.Account)
		if err != nil {
			return err
		}
		owned, err := w.ListOwned(ctx, loc.Calendar, st.ID)
		if err != nil {
			return err
		}
		ops := diff.Vacate(owned, nil, false)
		res := w.Apply(ctx, diff.Batch{SubscriptionID: st.ID, CalendarID: loc.Calendar, Ops: ops}, duplicateSweeper{})
		r.log().Info("pruned a removed subscription's events from a calendar it had moved away from", "subscription", st.ID,
			"calendar", loc.Calendar, "deleted", res.Deleted, "deferred", res.Deferred, "failed", res.Failed)
		if res.Err != nil {
			return res.Err
		}
		if left := len(ops) - res.Deleted; left > 0 {
			return fmt.Errorf("subscription: %d events of %s in %s not yet deleted", left, st.ID, loc.Calendar)
		}
	}
	return nil
}
