package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/calsyncd/calsyncd/internal/check"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/subscription"
	"github.com/calsyncd/calsyncd/internal/subscription/preview"
)

// dryRun previews one sync of each subscription: the plan, printed,
// nothing written to Google or to the state database. It takes no lock
// or lease and hands nothing to a running daemon (a dry-run writes
// nothing, so it runs here, beside it). It fails only when a subscription
// could not be previewed.
func (c *syncCommand) dryRun(ctx context.Context, cfg *config.Config, subs []config.Subscription, log *slog.Logger,
	opts subscription.Options, asJSON bool) error {
	if cfg.Store.Driver == "sqlite" {
		if _, err := os.Stat(cfg.DatabaseDSN()); os.IsNotExist(err) {
			fmt.Fprintln(c.m.Stderr, "calsyncd: no state database yet: previewing every subscription's first sync")
		}
	}
	a, err := openApp(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer a.Close()
	previews := make([]preview.Advised, len(subs))
	failed := 0
	for i, sub := range subs {
		pv, err := a.runner.Preview(ctx, sub, opts)
		if err != nil && pv.Err == nil {
			pv.Err = err
		}
		ap := advise(cfg, sub, pv)
		if ap.Err != nil {
			failed++
		}
		previews[i] = ap
	}
	if asJSON {
		err = preview.WriteJSON(c.m.Stdout, previews)
	} else {
		err = preview.WriteText(c.m.Stdout, previews)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %s could not be previewed", failed, plural(len(subs), "subscription", "subscriptions"))}
	}
	return nil
}

// advise adds check's advice to a preview's failures. A reconcile that
// could not list the calendar because Google refuses it (not found, not
// shared, a refused token) fails the preview: the sync's writes would
// fail the same way.
func advise(cfg *config.Config, sub config.Subscription, pv subscription.Preview) preview.Advised {
	ap := preview.Advised{Preview: pv}
	if pv.Err == nil && pv.ReconcileSkipped != nil {
		if a := check.Advise(cfg, sub, pv.ReconcileSkipped); a.Calendar {
			ap.Err = pv.ReconcileSkipped
		}
	}
	ap.ErrAdvice = advice(cfg, sub, ap.Err)
	ap.ReconcileAdvice = advice(cfg, sub, pv.ReconcileSkipped)
	for i, v := range pv.Vacate {
		if v.Err != nil {
			left := sub
			left.Calendar, left.Account = v.At.Calendar, v.At.Account
			if ap.VacateAdvice == nil {
				ap.VacateAdvice = map[int]preview.Advice{}
			}
			ap.VacateAdvice[i] = advice(cfg, left, v.Err)
		}
	}
	return ap
}

// advice is check's advice on a failure of sub, as the preview gives it.
func advice(cfg *config.Config, sub config.Subscription, err error) preview.Advice {
	a := check.Advise(cfg, sub, err)
	return preview.Advice{What: a.What, Do: a.Do}
}
