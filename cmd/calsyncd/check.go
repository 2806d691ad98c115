package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/calsyncd/calsyncd/internal/check"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

type checkCommand struct{ m *Main }

func (c *checkCommand) Synopsis() string {
	return "validate the configuration, then try each subscription's feed, account and calendar without writing"
}

func (c *checkCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("check", "check --config FILE [--json] [ID ...]")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, `print {"subscriptions":[{"id","ok","problems",…}]}`)
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if *cfgPath == "" {
		return &exitError{code: 2, err: errors.New("--config is required")}
	}
	cfg, err := config.Load(*cfgPath)
	if err := noConfig(*cfgPath, err); err != nil && errors.As(err, new(*exitError)) {
		return err
	}
	if err != nil {
		return c.configErrors(*cfgPath, err, *asJSON)
	}
	subs, err := selectSubscriptions(cfg, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	fetch.Version = readBuildInfo().Version
	checker := &check.Checker{Config: cfg,
		Fetcher: fetch.NewFetcher(cfg.Feed.ConnectTimeout.D(), cfg.Feed.Timeout.D(), int64(cfg.Feed.MaxSize), feed.CheckBody),
		Auth:    googleauth.Options{Logger: newLogger(c.m.Stderr, cfg.Log)}}
	rep := checker.Run(ctx, subs)
	if *asJSON {
		err = rep.WriteJSON(c.m.Stdout)
	} else {
		fmt.Fprintf(c.m.Stdout, "config %s: valid (%s, %s)\n", *cfgPath, plural(len(cfg.Subscriptions), "subscription", "subscriptions"), plural(len(cfg.AccountNames()), "account", "accounts"))
		err = rep.WriteText(c.m.Stdout)
	}
	if err != nil {
		return err
	}
	failed := 0
	for _, s := range rep.Subscriptions {
		if !s.OK {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %s would fail", failed, plural(len(subs), "subscription", "subscriptions"))}
	}
	return nil
}

// configErrors prints a configuration's errors as validate does (or as
// JSON) and exits 1.
func (c *checkCommand) configErrors(path string, err error, asJSON bool) error {
	var errs config.Errors
	if !errors.As(err, &errs) {
		return &exitError{code: 1, err: err}
	}
	if asJSON {
		out := struct {
			ConfigErrors  []string       `json:"config_errors"`
			Subscriptions []check.Result `json:"subscriptions"`
		}{Subscriptions: []check.Result{}}
		for _, e := range errs {
			out.ConfigErrors = append(out.ConfigErrors, e.Error())
		}
		enc := json.NewEncoder(c.m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		for _, e := range errs {
			fmt.Fprintln(c.m.Stdout, e)
		}
	}
	return &exitError{code: 1, err: fmt.Errorf("%s in %s", plural(len(errs), "problem", "problems"), path)}
}
