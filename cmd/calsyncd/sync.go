package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"text/tabwriter"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

type syncCommand struct{ m *Main }

func (c *syncCommand) Synopsis() string { return "sync subscriptions once, then exit" }

func (c *syncCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("sync", "sync --config FILE [--json] [--allow-deletes] [--reconcile] [--strict-perms] [ID ...]")
	cfgPath := fs.String("config", "", "configuration file")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	allowDeletes := fs.Bool("allow-deletes", false, "release deletes held by the mass-delete guard")
	reconcile := fs.Bool("reconcile", false, "compare Google with the database and repair drift (deleted or duplicated events)")
	strictPerms := fs.Bool("strict-perms", false, "refuse to run when a key or token file is accessible to group or others")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2, err: err}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	subs, err := selectSubscriptions(cfg, fs.Args())
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	log := newLogger(c.m.Stderr, cfg.Log)
	if err := checkSecretFiles(log, cfg, *strictPerms); err != nil {
		return err
	}
	a, err := openApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()

	// Take the accounts' leases like a replica would, so a one-shot sync
	// never paces an account alongside a running daemon.
	keeper := subscription.NewLeaseKeeper(a.store, subscription.NewOwner(), cfg.Store.LeaseTTL.D(), log)
	accounts := map[string]bool{}
	holders := map[string]string{}
	for _, s := range subs {
		acct := s.AccountName()
		if _, done := accounts[acct]; done {
			continue
		}
		ok, holder, err := keeper.Acquire(ctx, acct)
		if err != nil {
			return err
		}
		accounts[acct] = ok
		holders[acct] = holder.Owner
	}
	var held []string
	for acct, ok := range accounts {
		if ok {
			held = append(held, acct)
		}
	}
	keepCtx, stopKeeping := context.WithCancel(ctx)
	go keeper.Keep(keepCtx, func() []string { return held })
	defer func() {
		stopKeeping()
		keeper.Release(context.WithoutCancel(ctx))
	}()

	reports := make([]subscription.Report, len(subs))
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, sub := range subs {
		if !accounts[sub.AccountName()] {
			errs[i] = fmt.Errorf("%w %s (%s)", subscription.ErrLeaseHeld, sub.AccountName(), holders[sub.AccountName()])
			continue
		}
		wg.Go(func() {
			runCtx, cancel := keeper.Bind(ctx, sub.AccountName())
			defer cancel()
			reports[i], errs[i] = a.runner.Sync(runCtx, sub, subscription.Options{AllowDeletes: *allowDeletes, Reconcile: *reconcile})
		})
	}
	wg.Wait()

	if *asJSON {
		err = writeSyncJSON(c.m.Stdout, reports)
	} else {
		err = writeSyncTable(c.m.Stdout, reports)
	}
	if err != nil {
		return err
	}
	failed := 0
	for i, rep := range reports {
		if errors.Is(errs[i], subscription.ErrBusy) {
			fmt.Fprintf(c.m.Stderr, "calsyncd: %s: already being synced by another process; skipped\n", subs[i].ID)
			continue
		}
		if errors.Is(errs[i], subscription.ErrLeaseHeld) {
			// A daemon holds the account: ask it to run the sync instead.
			if runID, err := handOff(ctx, cfg, subs[i].ID); err == nil {
				fmt.Fprintf(c.m.Stderr, "calsyncd: %s: a running daemon holds its account; handed the sync to it as run %d (see calsyncd status)\n", subs[i].ID, runID)
				continue
			} else {
				fmt.Fprintf(c.m.Stderr, "calsyncd: %s: %v, and the daemon's status endpoint did not take the sync: %v\n", subs[i].ID, errs[i], err)
				failed++
				continue
			}
		}
		if errs[i] != nil {
			fmt.Fprintf(c.m.Stderr, "calsyncd: %s: %v\n", subs[i].ID, errs[i])
			failed++
			continue
		}
		// Deferred is fine (Google will take the rest later); a failed run
		// or an ERROR subscription is not.
		if rep.State != calsyncd.StateActive || rep.Run.Outcome == calsyncd.OutcomeFailed {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d subscriptions failed or are not ACTIVE", failed, len(subs))}
	}
	return nil
}

// handOff asks the daemon's status endpoint to run a subscription now.
func handOff(ctx context.Context, cfg *config.Config, id string) (int64, error) {
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return 0, err
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+net.JoinHostPort(host, port)+"/subscriptions/"+url.PathEscape(id)+"/sync", nil)
	if err != nil {
		return 0, err
	}
	if cfg.Status.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Status.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach it: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	var body struct {
		RunID int64  `json:"run_id"`
		Error string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("it answered %s: %s", resp.Status, body.Error)
	}
	return body.RunID, nil
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

// syncResult is the JSON form of one subscription's sync; the run and the
// error have the shapes /status gives them.
type syncResult struct {
	Subscription      string              `json:"subscription"`
	State             calsyncd.State      `json:"state"`
	ConsecutiveErrors int                 `json:"consecutive_errors"`
	Run               status.Run          `json:"run"`
	Error             *status.ErrorReport `json:"error,omitempty"`
}

func toSyncResult(rep subscription.Report) syncResult {
	res := syncResult{Subscription: rep.Subscription, State: rep.State, ConsecutiveErrors: rep.Transition.ConsecutiveErrors,
		Run: status.RunOf(rep.Run)}
	if rep.Run.ErrorClass != "" {
		res.Error = &status.ErrorReport{Class: rep.Run.ErrorClass, Message: status.Explain(rep.Run.ErrorClass), Detail: rep.Run.Error}
	}
	return res
}

func writeSyncJSON(w io.Writer, reports []subscription.Report) error {
	out := make([]syncResult, 0, len(reports))
	for _, rep := range reports {
		if rep.Run.ID == 0 {
			continue
		}
		out = append(out, toSyncResult(rep))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeSyncTable(w io.Writer, reports []subscription.Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSCRIPTION\tOUTCOME\tSTATE\tCREATED\tUPDATED\tDELETED\tUNCHANGED\tDEFERRED\tFAILED\tREJECTED\tHELD")
	for _, rep := range reports {
		if rep.Run.ID == 0 {
			continue
		}
		r := rep.Run
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", rep.Subscription, r.Outcome, rep.State,
			r.Created, r.Updated, r.Deleted, r.Unchanged, r.Deferred, r.Failed, r.Rejected, r.HeldDeletes)
	}
	return tw.Flush()
}
