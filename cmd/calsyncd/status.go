package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/calsyncd/calsyncd/internal/store"
)

type statusCommand struct{ m *Main }

func (c *statusCommand) Synopsis() string {
	return "show each subscription's state from the database (daemon running or not)"
}

type statusEntry struct {
	ID                string     `json:"id"`
	Calendar          string     `json:"calendar"`
	Account           string     `json:"account"`
	State             string     `json:"state"`
	ConsecutiveErrors int        `json:"consecutive_errors"`
	EventsMapped      int        `json:"events_mapped"`
	HeldDeletes       int        `json:"held_deletes"`
	LastErrorClass    string     `json:"last_error_class,omitempty"`
	LastError         string     `json:"last_error,omitempty"`
	LastRun           *store.Run `json:"last_run,omitempty"`
}

func (c *statusCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("status", "status --config FILE [--json]")
	cfgPath := fs.String("config", "", "configuration file")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2, err: err}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.Store.Driver, cfg.DatabaseDSN())
	if err != nil {
		return err
	}
	defer st.Close()
	subs, err := st.Subscriptions(ctx)
	if err != nil {
		return err
	}
	entries := make([]statusEntry, 0, len(subs))
	for _, s := range subs {
		n, err := st.CountMappings(ctx, s.ID)
		if err != nil {
			return err
		}
		e := statusEntry{ID: s.ID, Calendar: s.Calendar, Account: s.Account, State: s.State,
			ConsecutiveErrors: s.ConsecutiveErrors, EventsMapped: n, HeldDeletes: s.HeldDeletes,
			LastErrorClass: s.LastErrorClass, LastError: s.LastError}
		runs, err := st.Runs(ctx, s.ID, 1)
		if err != nil {
			return err
		}
		if len(runs) > 0 {
			e.LastRun = &runs[0]
		}
		entries = append(entries, e)
	}
	if *asJSON {
		enc := json.NewEncoder(c.m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"subscriptions": entries})
	}
	tw := tabwriter.NewWriter(c.m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSCRIPTION\tSTATE\tERRORS\tMAPPED\tLAST RUN\tOUTCOME\tCREATED\tUPDATED\tDELETED\tDEFERRED\tFAILED")
	for _, e := range entries {
		last, outcome := "never", "-"
		var r store.Run
		if e.LastRun != nil {
			r = *e.LastRun
			last, outcome = r.StartedAt.Local().Format(time.DateTime), r.Outcome
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", e.ID, e.State, e.ConsecutiveErrors, e.EventsMapped,
			last, outcome, r.Created, r.Updated, r.Deleted, r.Deferred, r.Failed)
	}
	return tw.Flush()
}
