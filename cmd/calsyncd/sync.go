package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

type syncCommand struct{ m *Main }

func (c *syncCommand) Synopsis() string { return "sync subscriptions once, then exit" }

// syncFlags are the flags of `calsyncd sync`.
type syncFlags struct {
	cfgPath                                         *string
	asJSON, allowDeletes, reconcile, strict, dryRun *bool
}

func (c *syncCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("sync", "sync --config FILE [--json] [--dry-run] [--allow-deletes] [--reconcile] [--strict-perms] [ID ...]")
	f := syncFlags{
		cfgPath:      configFlag(fs),
		asJSON:       fs.Bool("json", false, "print the result as JSON"),
		allowDeletes: fs.Bool("allow-deletes", false, "release deletes held by the mass-delete guard"),
		reconcile:    fs.Bool("reconcile", false, "compare Google with the database and repair drift (deleted or duplicated events)"),
		strict:       fs.Bool("strict-perms", false, "refuse to run when a key or token file is accessible to group or others, or a configuration file (the main one or one it includes) is writable by them"),
		dryRun:       fs.Bool("dry-run", false, "print what the sync would do (create, update, delete, held, excluded) and write nothing, to Google or the database"),
	}
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	cfg, err := loadConfig(*f.cfgPath)
	if err != nil {
		return err
	}
	subs, err := selectSubscriptions(cfg, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	log := newLogger(c.m.Stderr, cfg.Log)
	if err := checkSecretFiles(log, cfg, *f.strict); err != nil {
		return err
	}
	opts := subscription.Options{AllowDeletes: *f.allowDeletes, Reconcile: *f.reconcile}
	if *f.dryRun {
		return c.dryRun(ctx, cfg, subs, log, opts, *f.asJSON)
	}
	results, err := c.syncOnce(ctx, cfg, subs, log, opts)
	if err != nil {
		return err
	}
	return c.report(subs, results, *f.asJSON)
}

// syncOnce runs each subscription once, under its account's lease, and
// hands those whose account a running daemon holds to that daemon.
func (c *syncCommand) syncOnce(ctx context.Context, cfg *config.Config, subs []config.Subscription, log *slog.Logger,
	opts subscription.Options) ([]subscription.Result, error) {
	a, err := openApp(ctx, cfg, log, false)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	// The runs take the accounts' leases like a replica would, so a
	// one-shot sync never paces an account alongside a running daemon.
	once := subscription.Once{Runner: a.runner, Leases: subscription.NewLeaseKeeper(a.store, subscription.NewOwner(), cfg.Store.LeaseTTL.D(), log)}
	results, err := once.All(ctx, subs, opts)
	if err != nil {
		return nil, err
	}
	status.HandOffHeld(ctx, cfg, a.store, results, opts, func(id string, runID int64) {
		fmt.Fprintf(c.m.Stderr, "calsyncd: %s: a running daemon holds its account; handed the sync to it as run %d\n", id, runID)
	})
	// The run history is pruned here too, for installations that run
	// `calsyncd sync` from a timer instead of the daemon.
	retain := cfg.Sync.Retention
	if _, err := a.store.PruneRuns(ctx, retain.MaxAge.D(), retain.MaxRuns); err != nil {
		log.Warn("cannot prune the run history", "error", err)
	}
	return results, nil
}

// report prints the runs, as a table or JSON, and fails (exit 1) when one
// did not succeed.
func (c *syncCommand) report(subs []config.Subscription, results []subscription.Result, asJSON bool) error {
	reports := make([]subscription.Report, len(results))
	for i, res := range results {
		reports[i] = res.Report
	}
	var err error
	if asJSON {
		err = status.WriteSyncJSON(c.m.Stdout, reports)
	} else {
		err = status.WriteSyncTable(c.m.Stdout, reports)
	}
	if err != nil {
		return err
	}
	failed := 0
	for i, res := range results {
		if !c.succeeded(subs[i].ID, res) {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %s failed or are not ACTIVE", failed, plural(len(subs), "subscription", "subscriptions"))}
	}
	return nil
}

// succeeded says whether one subscription's sync counts as a success for
// the exit code, telling stderr what happened to those that did not run.
func (c *syncCommand) succeeded(id string, res subscription.Result) bool {
	switch err := res.Err; {
	case errors.Is(err, subscription.ErrBusy):
		fmt.Fprintf(c.m.Stderr, "calsyncd: %s: already being synced by another process; skipped\n", id)
		return true
	case errors.As(err, new(*status.HandOffRefusedError)):
		fmt.Fprintf(c.m.Stderr, "calsyncd: %s: %v\n", id, err)
		return false
	case errors.As(err, new(*status.HandOffUnfinishedError)):
		fmt.Fprintf(c.m.Stderr, "calsyncd: %s: %v\n", id, err)
		return true
	case err != nil:
		fmt.Fprintf(c.m.Stderr, "calsyncd: %s: %v\n", id, err)
		return false
	}
	// Deferred is fine (Google will take the rest later); a failed run or
	// an ERROR subscription is not.
	rep := res.Report
	return rep.State == calsyncd.StateActive && rep.Run.Outcome != calsyncd.OutcomeFailed
}

func selectSubscriptions(cfg *config.Config, ids []string) ([]config.Subscription, error) {
	if len(ids) == 0 {
		if len(cfg.Subscriptions) == 0 {
			return nil, errors.New("the configuration has no subscriptions")
		}
		return cfg.Subscriptions, nil
	}
	var out []config.Subscription
	for _, id := range ids {
		s, ok := cfg.Subscription(id)
		if !ok {
			return nil, fmt.Errorf("no subscription with id %q in %s", id, cfg.Path)
		}
		out = append(out, s)
	}
	return out, nil
}
