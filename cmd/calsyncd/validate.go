package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/printable"
)

type validateCommand struct{ m *Main }

func (c *validateCommand) Synopsis() string {
	return "check a configuration file and print OK or every error"
}

func (c *validateCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("validate", "validate --config FILE [--allow-unset]")
	cfgPath := configFlag(fs)
	allowUnset := fs.Bool("allow-unset", false,
		"report ${VAR}s whose variable is not set as warnings instead of errors (run and sync still refuse them)")
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if len(args) > 0 {
		return &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(args, " "))}
	}
	if *cfgPath == "" {
		return &exitError{code: 2, err: errors.New("--config is required")}
	}
	var (
		cfg   *config.Config
		unset config.Errors
	)
	if *allowUnset {
		cfg, unset, err = config.LoadAllowUnset(*cfgPath)
	} else {
		cfg, err = config.Load(*cfgPath)
	}
	for _, u := range unset {
		fmt.Fprintf(c.m.Stdout, "warning: %s (allowed by --allow-unset; run and sync refuse it)\n", u)
	}
	if err := noConfig(*cfgPath, err); err != nil && errors.As(err, new(*exitError)) {
		return err
	}
	if err != nil {
		var errs config.Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				fmt.Fprintln(c.m.Stdout, printable.String(e.Error()))
			}
			return &exitError{code: 1, err: fmt.Errorf("%s in %s", plural(len(errs), "problem", "problems"), *cfgPath)}
		}
		return &exitError{code: 1, err: err}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(c.m.Stdout, "warning: "+printable.String(w.String()))
	}
	subs := plural(len(cfg.Subscriptions), "subscription", "subscriptions")
	if len(cfg.Files) > 1 {
		subs += " from " + plural(len(cfg.Files), "file", "files")
	}
	fmt.Fprintf(c.m.Stdout, "OK: %s (%s, %s)\n", *cfgPath, subs, plural(len(cfg.AccountNames()), "account", "accounts"))
	return nil
}
