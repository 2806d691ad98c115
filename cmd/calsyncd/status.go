package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
)

type statusCommand struct{ m *Main }

func (c *statusCommand) Synopsis() string {
	return "show each subscription's state from the database (daemon running or not)"
}

func (c *statusCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("status", "status --config FILE [--json]")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON (the same schema as GET /status)")
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if len(args) > 0 {
		return &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(args, " "))}
	}
	// status fetches nothing: it needs no feed's or alert's secret, so it
	// runs as the service's user without the service's environment.
	cfg, err := loadConfigNeeding(*cfgPath, nil, readsStore)
	if err != nil {
		return err
	}
	st, err := store.OpenReadOnly(ctx, cfg.Store.Driver, cfg.DatabaseDSN())
	if err != nil {
		return err
	}
	defer st.Close()
	rep, err := status.Build(ctx, st, cfg, nil, nil, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		return status.WriteJSON(c.m.Stdout, rep)
	}
	return status.WriteTable(c.m.Stdout, rep)
}
