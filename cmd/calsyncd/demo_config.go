package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/printable"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// demoConfigOptions are the flags of `calsyncd demo --config`.
type demoConfigOptions struct {
	path      string
	once      bool
	runFor    time.Duration
	listen    string
	stateDir  string
	logFormat string
	args      []string
}

// demoAgendaDays is how far ahead the first pass's summary looks for the
// events a person would see.
const demoAgendaDays = 30

// demoSpacing is the most the demo waits between two writes.
const demoSpacing = 20 * time.Millisecond

// runConfig runs a configuration's subscriptions against the built-in
// emulator: the feeds are fetched as configured, Google is the emulator
// (every calendar id exists), and nothing of the configuration's
// credentials, store, state directory or alerts is used.
func (c *demoCommand) runConfig(ctx context.Context, o demoConfigOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	cfg, err := loadConfigNeeding(o.path, c.m.Stderr, demoNeeds)
	if err != nil {
		return err
	}
	dir, removeDir, err := o.demoStateDir(cfg)
	if err != nil {
		return err
	}
	defer removeDir()
	fake, emulator, stopEmulator, err := serveEmulator(ctx)
	if err != nil {
		return err
	}
	defer stopEmulator()
	ignored := onEmulator(cfg, dir, emulator)

	log := newLogger(c.m.Stderr, config.Log{Format: o.logFormat, Level: cfg.Log.Level})
	// The first pass below runs every subscription, and prints it.
	a, d, page, stop, err := demoDaemon(ctx, cfg, log, o.listen)
	if err != nil {
		return err
	}
	defer stop()
	c.introduce(cfg, ignored, page, emulator)
	if err := d.Start(ctx); err != nil {
		return err
	}
	failed := c.firstPass(ctx, a, cfg, fake)
	c.keepRunning(ctx, o, page)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintln(c.m.Stdout, "demo stopped; its state is removed, the configuration's state_dir was not touched.")
	if o.once && failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d subscriptions failed on the emulator", failed, len(cfg.Subscriptions))}
	}
	return nil
}

// check refuses flags that do not go together (a usage mistake, exit 2).
func (o demoConfigOptions) check() error {
	switch {
	case o.path == "":
		return &exitError{code: 2, err: errors.New("--for needs --config (the sample demo tells its story and stops by itself)")}
	case len(o.args) > 0:
		return &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(o.args, " "))}
	case o.once && o.runFor != 0:
		return &exitError{code: 2, err: errors.New("--once and --for exclude each other")}
	case o.runFor < 0:
		return &exitError{code: 2, err: errors.New("--for must be positive")}
	}
	if err := status.CheckListen(o.listen, ""); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--listen: %w", err)}
	}
	return nil
}

// demoStateDir is the demo's state directory: --state-dir, never the
// configuration's, or a temporary one that remove takes away.
func (o demoConfigOptions) demoStateDir(cfg *config.Config) (dir string, remove func(), err error) {
	if o.stateDir == "" {
		tmp, err := os.MkdirTemp("", "calsyncd-demo-")
		if err != nil {
			return "", nil, err
		}
		return tmp, func() { os.RemoveAll(tmp) }, nil
	}
	if sameDir(o.stateDir, cfg.StateDir) {
		return "", nil, &exitError{code: 2, err: fmt.Errorf("--state-dir %s is the configuration's state_dir: the demo never touches it; leave --state-dir out (a temporary directory)", o.stateDir)}
	}
	return o.stateDir, func() {}, nil
}

// serveEmulator serves the Calendar API emulator on a loopback port (every
// calendar id exists) and returns its base URL.
func serveEmulator(ctx context.Context) (fake *gcalfake.Server, url string, stop func(), err error) {
	fake = gcalfake.New(gcalfake.Options{AutoCreateCalendars: true})
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(gcalfake.BasePath, fake)
	backend := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go backend.Serve(apiLn)
	return fake, "http://" + apiLn.Addr().String() + gcalfake.BasePath, func() { backend.Shutdown(context.WithoutCancel(ctx)) }, nil
}

// introduce says what the demo runs, what it ignores of the configuration
// and where to look.
func (c *demoCommand) introduce(cfg *config.Config, ignored []string, page, emulator string) {
	out := c.m.Stdout
	fmt.Fprintf(out, "calsyncd demo: the %d subscriptions of %s on the built-in Google Calendar emulator; nothing is sent to Google.\n",
		len(cfg.Subscriptions), cfg.Path)
	fmt.Fprintln(out, "Feeds are fetched as configured; every calendar id exists on the emulator (created empty on first use).")
	fmt.Fprintln(out, "Ignored in this mode:")
	for _, s := range ignored {
		fmt.Fprintf(out, "  - %s\n", s)
	}
	fmt.Fprintf(out, "\nstatus page: %s\n", page)
	fmt.Fprintf(out, "emulator:    %s (the Calendar API; GET calendars/ID/events shows what Google would hold)\n\n", emulator)
}

// keepRunning lets the daemon go on after the first pass: not at all with
// --once, for --for, else until the context ends (Ctrl-C).
func (c *demoCommand) keepRunning(ctx context.Context, o demoConfigOptions, page string) {
	out := c.m.Stdout
	var wait <-chan time.Time
	switch {
	case o.once:
		return
	case o.runFor > 0:
		fmt.Fprintf(out, "\nThe daemon keeps running on the emulator, on the configured schedule, for %s. Status page: %s\n", o.runFor, page)
		t := time.NewTimer(o.runFor)
		defer t.Stop()
		wait = t.C
	default:
		fmt.Fprintf(out, "\nThe daemon keeps running on the emulator, on the configured schedule. Status page: %s\nPress Ctrl-C to stop.\n", page)
	}
	select {
	case <-ctx.Done():
	case <-wait:
	}
}

// firstPass syncs every subscription once and prints what each did and
// what its calendar now shows; it returns how many failed.
func (c *demoCommand) firstPass(ctx context.Context, a *app, cfg *config.Config, fake *gcalfake.Server) int {
	out := c.m.Stdout
	failed := 0
	calendars := []string{}
	seen := map[string]bool{}
	for _, sub := range cfg.Subscriptions {
		rep, err := a.runner.Sync(ctx, sub, subscription.Options{})
		if err == nil {
			err = rep.Err
		}
		if !seen[sub.Calendar] {
			seen[sub.Calendar] = true
			calendars = append(calendars, sub.Calendar)
		}
		target := printable.String(sub.ID) + " → " + printable.String(sub.Calendar)
		if err != nil {
			failed++
			fmt.Fprintf(out, "  %s: failed: %s\n", target, printable.String(err.Error()))
			continue
		}
		r := rep.Run
		fmt.Fprintf(out, "  %s: %d created, %d updated, %d deleted, %d deferred (%s, %s)\n",
			target, r.Created, r.Updated, r.Deleted, r.Deferred, r.Outcome, rep.State)
	}
	now := time.Now()
	fmt.Fprintf(out, "\nWhat Google Calendar would show (the next %d days):\n", demoAgendaDays)
	for _, cal := range calendars {
		agenda := fake.Agenda(cal, now, now.AddDate(0, 0, demoAgendaDays))
		fmt.Fprintf(out, "  %s: %d events in the next %d days\n", printable.String(cal), len(agenda), demoAgendaDays)
		for i, o := range agenda {
			if i == 3 {
				fmt.Fprintf(out, "    … and %d more\n", len(agenda)-3)
				break
			}
			when := o.Start.Local().Format("Mon 2 Jan 15:04 MST")
			if o.AllDay {
				when = o.Start.UTC().Format("Mon 2 Jan") + " (all day)"
			}
			fmt.Fprintf(out, "    %s  %s\n", when, printable.String(o.Summary))
		}
	}
	fmt.Fprintf(out, "first sync done: %d of %d subscriptions synced\n", len(cfg.Subscriptions)-failed, len(cfg.Subscriptions))
	return failed
}

// demoNeeds is what the demo reads of a configuration: not the Google
// credentials, the store, the status token or the alerts, so a ${VAR}
// left unset in them is only noted.
func demoNeeds(key string) bool {
	for _, p := range []string{"google.", "accounts[", "store.", "status.", "alerts"} {
		if strings.HasPrefix(key, p) {
			return false
		}
	}
	return true
}

// onEmulator points cfg at the emulator and a state directory of the
// demo's own, dropping everything that reaches beyond: credentials, the
// store, alerts. It returns what it ignored, in words for the person.
func onEmulator(cfg *config.Config, dir, endpoint string) []string {
	var ignored []string
	creds := cfg.Google.CredentialsFile != "" || cfg.Google.TokenFile != ""
	for _, acct := range cfg.Accounts {
		creds = creds || acct.CredentialsFile != "" || acct.TokenFile != ""
	}
	if creds {
		ignored = append(ignored, "the Google credentials (google:, accounts:): not read; the emulator needs none")
	} else {
		ignored = append(ignored, "Google credentials: none are configured, and the emulator needs none")
	}
	ignored = append(ignored, fmt.Sprintf("state_dir %s: not touched; the demo keeps its state in %s, removed at exit", cfg.StateDir, dir))
	if cfg.Store.Driver != "" && cfg.Store.Driver != "sqlite" || cfg.Store.DSN != "" {
		ignored = append(ignored, "store: not opened (the demo's database is in its own directory)")
	}
	if n := len(cfg.Alerts); n > 0 {
		ignored = append(ignored, fmt.Sprintf("alerts: %d configured, none is sent", n))
	}
	cfg.Google = config.Account{Endpoint: endpoint}
	for i := range cfg.Accounts {
		cfg.Accounts[i] = config.Account{Name: cfg.Accounts[i].Name}
	}
	cfg.StateDir = dir
	cfg.Store = config.Store{Driver: "sqlite", LeaseTTL: cfg.Store.LeaseTTL}
	cfg.Alerts = nil
	cfg.Status = config.Status{}
	if cfg.Writer.Spacing.D() > demoSpacing {
		// The emulator has no quota to spare: the first pass should take
		// seconds, not the minutes a large feed takes with Google.
		ignored = append(ignored, fmt.Sprintf("writer.spacing %s: the emulator has no quota, writes are spaced %s", cfg.Writer.Spacing.D(), demoSpacing))
		cfg.Writer.Spacing = config.Duration(demoSpacing)
	}
	return ignored
}

// sameDir reports whether two paths name the same directory.
func sameDir(a, b string) bool {
	if b == "" {
		return false
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(ia, ib)
	}
	aa, _ := filepath.Abs(a)
	bb, _ := filepath.Abs(b)
	return aa == bb
}
