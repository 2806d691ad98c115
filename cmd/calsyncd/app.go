package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	calendar "google.golang.org/api/calendar/v3"

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

	mu      sync.Mutex
	cfg     *config.Config
	writers map[string]*gcalwriter.Writer
}

// pacers reports the live pacing state of every account with a writer.
func (a *app) pacers() []status.Pacer {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]status.Pacer, 0, len(a.writers))
	for _, w := range a.writers {
		st := w.State()
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
	defer a.mu.Unlock()
	for name := range a.writers {
		oldAcct, _ := a.cfg.AccountByName(name)
		newAcct, ok := cfg.AccountByName(name)
		if !ok || oldAcct != newAcct || a.cfg.Writer != cfg.Writer {
			delete(a.writers, name)
		}
	}
	a.cfg = cfg
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
		return nil, err
	}
	return cfg, nil
}

// openApp opens the store and wires the runner.
func openApp(ctx context.Context, cfg *config.Config, log *slog.Logger) (*app, error) {
	st, err := store.Open(ctx, cfg.Store.Driver, cfg.DatabaseDSN())
	if err != nil {
		return nil, err
	}
	fetch.Version = version
	a := &app{cfg: cfg, log: log, store: st, writers: map[string]*gcalwriter.Writer{}}
	a.runner = &subscription.Runner{
		Config:  cfg,
		Store:   st,
		Fetcher: fetch.NewFetcher(cfg.Feed.ConnectTimeout.D(), cfg.Feed.Timeout.D(), int64(cfg.Feed.MaxSize), feed.CheckBody),
		Writer: func(account string) (subscription.Writer, error) {
			return a.writer(ctx, account)
		},
		Locker: subscription.FileLocker{Dir: filepath.Join(cfg.StateDir, "locks")},
		Log:    log,
	}
	a.startAlerts()
	return a, nil
}

func (a *app) Close() error { a.stopAlerts(); return a.store.Close() }

// writer returns the account's writer, creating it on first use so that a
// subscription whose account is broken fails alone.
func (a *app) writer(ctx context.Context, account string) (*gcalwriter.Writer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w, ok := a.writers[account]; ok {
		return w, nil
	}
	svc, quotaUser, err := newCalendarService(ctx, a.cfg, account, a.log)
	if err != nil {
		return nil, err
	}
	var obs gcalwriter.Observer
	if a.metrics != nil {
		obs = a.metrics
	}
	w := gcalwriter.New(svc, gcalwriter.Options{Logger: a.log.With("account", account), Account: account, Memory: a.store,
		Observer: obs, QuotaUser: quotaUser,
		Concurrency: a.cfg.Writer.Concurrency, Spacing: a.cfg.Writer.Spacing.D(), MaxSpacing: a.cfg.Writer.MaxSpacing.D(),
		MaxAttempts: a.cfg.Writer.MaxAttempts, MaxRetryWait: a.cfg.Writer.MaxRetryWait.D(), BackfillShare: a.cfg.Writer.BackfillShare,
		BackfillThreshold: a.cfg.Writer.BackfillThreshold, RequestTimeout: a.cfg.Writer.RequestTimeout.D(),
		RateWindow: a.cfg.Writer.ThrottleWindow.D(), RateWindowCap: a.cfg.Writer.ThrottleWindowMax.D()})
	a.writers[account] = w
	return w, nil
}

// newCalendarService builds the Google client for an account. With an
// endpoint (an emulator) and no credentials it runs unauthenticated. Its
// failures that a person must fix are *googleauth.Error.
// The second result is the user whose quota requests are charged to
// (domain-wide delegation), if any.
func newCalendarService(ctx context.Context, cfg *config.Config, account string, log *slog.Logger) (*calendar.Service, string, error) {
	creds, err := googleauth.Load(ctx, cfg, account, googleauth.Options{Logger: log.With("account", account)})
	if err != nil {
		return nil, "", err
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		return nil, "", fmt.Errorf("account %s: %w", account, err)
	}
	return svc, creds.QuotaUser(), nil
}
