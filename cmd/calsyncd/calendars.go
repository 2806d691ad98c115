package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"text/tabwriter"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/googleauth"
	"github.com/calsyncd/calsyncd/internal/printable"
)

type calendarsCommand struct{ m *Main }

func (c *calendarsCommand) Synopsis() string {
	return "list an account's calendars: ids, names, time zones, and whether calsyncd may write them"
}

// calendarEntry is one calendar as `calendars --json` prints it.
type calendarEntry struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TimeZone string `json:"time_zone"`
	// AccessRole is Google's: owner, writer, reader or freeBusyReader.
	AccessRole string `json:"access_role"`
	// Writable: calsyncd can write this calendar (owner or writer).
	Writable bool `json:"writable"`
	Primary  bool `json:"primary"`
}

// calendarsPageSize is how many calendars one calendarList.list page
// asks for (Google's maximum).
const calendarsPageSize = 250

func (c *calendarsCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("calendars", "calendars --config FILE [--account NAME] [--json]")
	cfgPath := configFlag(fs)
	account := fs.String("account", config.DefaultAccount, "the account whose calendars to list (a name under accounts:, or default)")
	asJSON := fs.Bool("json", false, `print {"account","identity","calendars":[{"id","name","time_zone","access_role","writable","primary"}]}`)
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if len(args) > 0 {
		return &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(args, " "))}
	}
	// Like the auth commands it needs the accounts, not the feeds'
	// secrets: a ${VAR} unset elsewhere is only noted.
	cfg, err := loadConfigNeeding(*cfgPath, c.m.Stderr, func(key string) bool {
		return key == "state_dir" || strings.HasPrefix(key, "google.") || strings.HasPrefix(key, "accounts[")
	})
	if err != nil {
		return err
	}
	if _, ok := cfg.AccountByName(*account); !ok {
		return &exitError{code: 2, err: fmt.Errorf("no account %q in %s (accounts: %s)", *account, cfg.Path, strings.Join(cfg.AccountNames(), ", "))}
	}
	creds, err := googleauth.Load(ctx, cfg, *account, googleauth.Options{Logger: slog.New(slog.NewTextHandler(c.m.Stderr, nil)),
		KeepInMemory: true, ListCalendars: true})
	if err != nil {
		return fmt.Errorf("cannot list the calendars of account %s: %w", *account, err)
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		return fmt.Errorf("account %s: %w", *account, err)
	}
	var cals []calendarEntry
	err = svc.CalendarList.List().MaxResults(calendarsPageSize).Pages(ctx, func(l *calendar.CalendarList) error {
		for _, e := range l.Items {
			cals = append(cals, calendarEntry{ID: e.Id, Name: e.Summary, TimeZone: e.TimeZone, AccessRole: e.AccessRole,
				Writable: e.AccessRole == "owner" || e.AccessRole == "writer", Primary: e.Primary})
		}
		return nil
	})
	if err != nil {
		return listFailure(cfg, creds.Identity, err)
	}
	if cals == nil {
		cals = []calendarEntry{}
	}
	if *asJSON {
		enc := json.NewEncoder(c.m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Account   string          `json:"account"`
			Identity  string          `json:"identity"`
			Calendars []calendarEntry `json:"calendars"`
		}{*account, creds.Identity.String(), cals})
	}
	c.writeText(*account, creds.Identity, cals)
	return nil
}

func (c *calendarsCommand) writeText(account string, id googleauth.Identity, cals []calendarEntry) {
	out := c.m.Stdout
	fmt.Fprintf(out, "account %s (%s): %s\n\n", account, id, plural(len(cals), "calendar", "calendars"))
	if len(cals) == 0 {
		if id.Kind == googleauth.KindServiceAccount && id.Subject == "" {
			fmt.Fprintf(out, "A calendar shared with a service account is not in its list until it is added to it; its id is in\n"+
				"Google Calendar → Settings → the calendar → Integrate calendar → Calendar ID. Share it with %s (\"Make changes to events\").\n", id.Email)
		}
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTIME ZONE\tACCESS")
	writable := 0
	for _, cal := range cals {
		idCol := printable.String(cal.ID)
		if cal.Primary {
			idCol += " (primary)"
		}
		access := cal.AccessRole + " (read-only: calsyncd cannot write it)"
		if cal.Writable {
			access = cal.AccessRole + " (writable)"
			writable++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", idCol, printable.String(cal.Name), printable.String(cal.TimeZone), access)
	}
	tw.Flush()
	if writable == 0 {
		fmt.Fprintln(out, "\nNone is writable: share a calendar with this account with \"Make changes to events\", or create one.")
		return
	}
	fmt.Fprintln(out, "\nPut a writable calendar's ID under a subscription's calendar: key (\"primary\" names the primary one).")
}

// listFailure says what to do when calendarList.list fails.
func listFailure(cfg *config.Config, id googleauth.Identity, err error) error {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		return fmt.Errorf("account %s: listing calendars: %w", id.Account, err)
	}
	login := "calsyncd auth login --config " + cfg.Path
	if id.Account != config.DefaultAccount {
		login += " --account " + id.Account
	}
	var hint string
	switch {
	case gerr.Code == http.StatusUnauthorized && id.Kind == googleauth.KindUser:
		hint = "Google refused the token: run `" + login + "`"
	case gerr.Code == http.StatusForbidden && insufficientScope(gerr):
		switch {
		case id.Kind == googleauth.KindUser:
			hint = "the token was granted without permission to see the calendar list (scope " + googleauth.ListScope +
				", asked for since this command exists): run `" + login + "` and allow it"
		case id.Subject != "":
			hint = "add " + googleauth.ListScope + " to the domain-wide delegation of client id " + id.ClientID +
				" (Admin console → Security → API controls), or find the id in Google Calendar → Settings → Integrate calendar"
		default:
			hint = "the token lacks scope " + googleauth.ListScope
		}
	case gerr.Code == http.StatusUnauthorized || gerr.Code == http.StatusForbidden:
		hint = "check the account with `calsyncd auth status --config " + cfg.Path + "`"
	}
	if hint != "" {
		return fmt.Errorf("account %s: listing calendars: %w — %s", id.Account, err, hint)
	}
	return fmt.Errorf("account %s: listing calendars: %w", id.Account, err)
}

// insufficientScope: Google's answer to a token without the method's
// scope (403 insufficientPermissions, "insufficient authentication
// scopes").
func insufficientScope(gerr *googleapi.Error) bool {
	for _, e := range gerr.Errors {
		if e.Reason == "insufficientPermissions" || e.Reason == "ACCESS_TOKEN_SCOPE_INSUFFICIENT" {
			return true
		}
	}
	return strings.Contains(strings.ToLower(gerr.Message), "insufficient authentication scopes")
}
