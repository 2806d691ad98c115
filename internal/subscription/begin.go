package subscription

import (
	"context"
	"log/slog"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/render"
)

// begun is what the pass is, as begin decides it: the subscription, the
// run's record and the state it starts from, the render policy, and
// whether it reconciles.
type begun struct {
	sub   config.Subscription
	cfg   *config.Config
	opts  Options
	log   *slog.Logger
	run   calsyncd.Run               // its id and start
	found calsyncd.SubscriptionState // the state the run starts from
	// policy is the subscription's render policy; dryRun: the pass stops
	// at the plan and writes nothing (Preview).
	policy *render.Policy
	dryRun bool
	// reconcile: the operator asked, or it is due; died: a run since the
	// last reconcile never finished (then it is due too).
	reconcile bool
	died      bool
}

// begin records the run's start and reads the state it starts from. It
// reads no mappings: a feed that has not changed needs none. A policy
// that does not compile ends the pass at once (its record is kept).
func (r *Runner) begin(ctx context.Context, sub config.Subscription, opts Options, dryRun bool) (pass, error) {
	st, err := r.Store.EnsureSubscription(ctx, sub.ID, sub.Calendar, sub.AccountName())
	if err != nil {
		return pass{}, err
	}
	b := r.newBegun(sub, opts, st, dryRun)
	if b.run.ID, err = r.Store.StartRun(ctx, sub.ID, b.run.StartedAt); err != nil {
		return pass{}, err
	}
	if opts.Started != nil {
		opts.Started(b.run.ID)
	}
	if u, ok := r.Store.(unfinishedRuns); ok && !st.LastReconcileAt.IsZero() {
		if b.died, err = u.UnfinishedRun(ctx, sub.ID, st.LastReconcileAt, b.run.ID); err != nil {
			return pass{}, err
		}
	}
	return r.decide(b), nil
}

// unfinishedRuns is a store that tells whether a run never finished since
// the last reconcile (*store.Store is one).
type unfinishedRuns interface {
	UnfinishedRun(ctx context.Context, subscriptionID string, since time.Time, before int64) (bool, error)
}

func (r *Runner) newBegun(sub config.Subscription, opts Options, st calsyncd.SubscriptionState, dryRun bool) begun {
	return begun{sub: sub, cfg: r.config(), opts: opts, found: st, dryRun: dryRun,
		log: r.log().With("subscription", sub.ID, "feed", config.RedactURL(sub.URL)),
		run: calsyncd.Run{SubscriptionID: sub.ID, StartedAt: r.now()}}
}

// decide reads the subscription's render policy and decides what the pass
// is: a reconcile or not.
func (r *Runner) decide(b begun) pass {
	var err error
	if b.policy, err = b.cfg.RenderPolicy(b.sub); err != nil {
		return pass{begun: b, end: stop(calsyncd.OutcomeFailed, err)}
	}
	// A subscription never reconciled (its first sync, or a database that
	// was lost) compares Google with its mappings, in case Google holds
	// our events already.
	every := b.cfg.Sync.ReconcileInterval.D()
	b.reconcile = b.opts.Reconcile || b.found.LastReconcileAt.IsZero() || (every > 0 && r.now().Sub(b.found.LastReconcileAt) >= every)
	// A run that died between Google's answers and their commit may have
	// left events of ours in Google that no mapping knows: the next run
	// finds them at once rather than at the daily reconcile.
	if b.died && !b.reconcile {
		b.reconcile = true
		b.log.Info("a run since the last reconcile never finished (its process died or was abandoned): reconciling with Google")
	}
	return pass{begun: b}
}

// reconcileDue: the pass compares Google with the mappings, as begin
// decided or because the subscription moved.
func (p pass) reconcileDue() bool { return p.reconcile || p.moved.from != nil }
