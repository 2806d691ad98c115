package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/googleauth"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// app is everything a command needs, wired from the configuration.
type app struct {
	log    *slog.Logger
	store  *store.Store
	runner *subscription.Runner
	alerts *alert.Notifier

	metrics *status.Metrics // nil outside the daemon
	// readOnly: the writers remember no throttle state (a dry-run).
	readOnly bool
	// owner names this installation in its events (calsyncd.Owner),
	// settled at start: the runner and every writer use it.
	owner calsyncd.Owner

	writers *gcalwriter.Pool

	mu  sync.Mutex
	cfg *config.Config
}

// pacers reports the live pacing state of every account with a writer.
func (a *app) pacers() []status.Pacer {
	states := a.writers.States()
	out := make([]status.Pacer, 0, len(states))
	for _, st := range states {
		out = append(out, status.Pacer{Account: st.Account, Spacing: st.Spacing, ThrottleUntil: st.ThrottleUntil,
			ThrottleClass: st.ThrottleClass})
	}
	return out
}

func (a *app) config() *config.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// setConfig swaps the configuration after a reload. Writers of accounts
// whose settings changed are dropped, so the next run builds them anew.
func (a *app) setConfig(cfg *config.Config) {
	a.mu.Lock()
	old := a.cfg
	a.cfg = cfg
	a.mu.Unlock()
	// Not under a.mu: the pool calls back into a.config while it opens an
	// account.
	a.writers.Retain(func(name string) bool {
		oldAcct, _ := old.AccountByName(name)
		newAcct, ok := cfg.AccountByName(name)
		return ok && oldAcct == newAcct && old.Writer == cfg.Writer
	})
}

func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToLower(c.Level)))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return nil, &exitError{code: 2, err: fmt.Errorf("--config is required")}
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, noConfig(path, err)
	}
	return cfg, nil
}

// loadConfigNeeding loads the configuration for a command that needs only
// some of its keys (needed reports which): a ${VAR} left unset elsewhere —
// a feed token, the status token — is no error, so the command runs as
// the service's user without the service's environment file, which only
// systemd reads. Each such variable is noted on notes (nil: silently). An
// unset variable in a key the command needs is an error, as from Load.
func loadConfigNeeding(path string, notes io.Writer, needed func(key string) bool) (*config.Config, error) {
	if path == "" {
		return nil, &exitError{code: 2, err: fmt.Errorf("--config is required")}
	}
	cfg, unset, err := config.LoadAllowUnset(path)
	if cfg == nil && err != nil {
		return nil, noConfig(path, err)
	}
	var missing config.Errors
	for _, u := range unset {
		if needed(u.Key) {
			missing = append(missing, u)
			continue
		}
		if notes != nil {
			fmt.Fprintf(notes, "note: %s (not needed here)\n", u)
		}
	}
	if len(missing) > 0 {
		var errs config.Errors
		errors.As(err, &errs)
		all := append(missing, errs...)
		slices.SortStableFunc(all, func(a, b *config.Error) int { return a.Line - b.Line })
		return nil, all
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// readsStore is what a command that reads only the database needs of the
// configuration: where the database is.
func readsStore(key string) bool {
	return key == "state_dir" || strings.HasPrefix(key, "store.")
}

// openApp opens the store and wires the runner.
// A read-only app (a dry-run) records nothing: not even the owner name it
// would settle on.
func openApp(ctx context.Context, cfg *config.Config, log *slog.Logger, readOnly bool) (*app, error) {
	for _, w := range cfg.Warnings {
		log.Warn("configuration warning", "warning", w.String())
	}
	open := store.Open
	if readOnly {
		open = store.OpenReadOnly
	}
	st, err := open(ctx, cfg.Store.Driver, cfg.DatabaseDSN())
	if err != nil {
		return nil, err
	}
	claim := st.ClaimOwner
	if readOnly {
		claim = st.Owner
	}
	owner, err := claim(ctx, cfg.Owner, config.HostOwner())
	if err != nil {
		st.Close()
		return nil, err
	}
	fetch.Version = readBuildInfo().Version
	a := &app{cfg: cfg, log: log, store: st, owner: owner, readOnly: readOnly}
	a.writers = gcalwriter.NewPool(func(ctx context.Context, account string) (*calendar.Service, string, error) {
		return newCalendarService(ctx, a.config(), account, log, readOnly)
	}, a.writerOptions)
	a.runner = &subscription.Runner{
		Config:  cfg,
		Store:   st,
		Owner:   owner,
		Fetcher: fetch.NewFetcher(cfg.Feed.ConnectTimeout.D(), cfg.Feed.Timeout.D(), int64(cfg.Feed.MaxSize), feed.CheckBody),
		Writer: func(account string) (subscription.Writer, error) {
			w, err := a.writers.Writer(ctx, account)
			if err != nil {
				return nil, err
			}
			return w, nil
		},
		Locker: subscription.FileLocker{Dir: filepath.Join(cfg.StateDir, "locks")},
		// One bounded pool for every command: an account runs as many
		// passes at once as its writer has requests in flight.
		Workers: subscription.NewWorkers(cfg.Writer.Concurrency, subscription.DefaultPrepare()),
		Log:     log,
	}
	a.startAlerts()
	return a, nil
}

func (a *app) Close() error { a.stopAlerts(); return a.store.Close() }

// stateWritable says whether the runs' lock directory can be written.
func (a *app) stateWritable() error {
	if l, ok := a.runner.Locker.(subscription.FileLocker); ok {
		return l.Probe()
	}
	return nil
}

// writerOptions are an account's writer settings, as configured.
func (a *app) writerOptions(account string) gcalwriter.Options {
	o := gcalwriter.OptionsFor(a.config().Writer.Limits())
	o.Logger, o.Memory, o.Owner = a.log.With("account", account), a.store, a.owner
	if a.readOnly {
		o.Memory = readOnlyMemory{a.store}
	}
	if a.metrics != nil {
		o.Observer = a.metrics
	}
	return o
}

// newCalendarService builds the Google client for an account. With an
// endpoint (an emulator) and no credentials it runs unauthenticated. Its
// failures that a person must fix are *googleauth.Error.
// The second result is the user whose quota requests are charged to
// (domain-wide delegation), if any.
// readOnly keeps a refreshed OAuth token in memory (a dry-run writes no
// file).
func newCalendarService(ctx context.Context, cfg *config.Config, account string, log *slog.Logger, readOnly bool) (*calendar.Service, string, error) {
	creds, err := googleauth.Load(ctx, cfg, account, googleauth.Options{Logger: log.With("account", account), KeepInMemory: readOnly})
	if err != nil {
		return nil, "", err
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		return nil, "", fmt.Errorf("account %s: %w", account, err)
	}
	return svc, creds.QuotaUser(), nil
}

// readOnlyMemory recalls an account's throttle state and keeps no new
// one: a dry-run reads Google but must not change the database.
type readOnlyMemory struct{ *store.Store }

func (readOnlyMemory) SaveAccount(context.Context, calsyncd.AccountState) error { return nil }
