package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

type runCommand struct {
	m *Main
	// abandoned: shutdown gave up on runs that did not stop, which may
	// still hold the store; exit without waiting for them.
	abandoned bool
}

func (c *runCommand) Synopsis() string {
	return "run the daemon: sync every subscription on its schedule until SIGTERM"
}

func (c *runCommand) Run(ctx context.Context, args []string) error {
	cfgPath, cfg, log, err := c.startup(args)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer func() {
		if !c.abandoned {
			a.Close()
		}
	}()
	metrics := watchMetrics(a)
	d := subscription.NewDaemon(cfg, a.runner, a.store, log, uint64(time.Now().UnixNano()))
	// Leases let several replicas share one database: each account is paced
	// by the one replica holding its lease. Alone, a daemon holds them all.
	owner := subscription.NewOwner()
	d.UseLeases(subscription.NewLeaseKeeper(a.store, owner, cfg.Store.LeaseTTL.D(), log))
	addr, stop, err := c.serveStatus(cfg, a, d, metrics)
	if err != nil {
		return err
	}
	defer stop()
	if err := d.Start(ctx); err != nil {
		return err
	}
	log.Info("calsyncd running", "version", version, "config", cfg.Path, "subscriptions", len(cfg.Subscriptions), "owner", a.owner.Name, "replica", owner,
		"status", "http://"+addr+"/")
	_ = sdNotify("READY=1\nSTATUS=syncing " + fmt.Sprint(len(cfg.Subscriptions)) + " subscriptions")
	return c.serve(ctx, d, a, cfgPath)
}

// startup reads the flags and the configuration and refuses to start a
// daemon that could not work: secret files others can read (with
// --strict-perms), accounts without credentials, a status endpoint open
// to others without a token.
func (c *runCommand) startup(args []string) (string, *config.Config, *slog.Logger, error) {
	fs := c.m.newFlagSet("run", "run --config FILE [--strict-perms]")
	cfgPath := configFlag(fs)
	strictPerms := fs.Bool("strict-perms", false, "refuse to start when a key or token file is accessible to group or others, or a configuration file (the main one or one it includes) is writable by them")
	args, err := parseArgs(fs, args)
	if err != nil {
		return "", nil, nil, &exitError{code: 2, err: err}
	}
	if len(args) > 0 {
		return "", nil, nil, &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(args, " "))}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return "", nil, nil, err
	}
	log := newLogger(c.m.Stderr, cfg.Log)
	if err := checkSecretFiles(log, cfg, *strictPerms); err != nil {
		return "", nil, nil, err
	}
	if none := cfg.NoCredentials(); len(none) > 0 {
		// Every write would fail, and quietly: refuse to start instead.
		return "", nil, nil, fmt.Errorf("%s: no credentials for %s %s and no google.endpoint: %s", cfg.Path, plural(len(none), "account", "accounts"),
			strings.Join(none, ", "), config.CredentialsStep)
	}
	if err := status.CheckListen(cfg.Listen, cfg.Status.Token); err != nil {
		return "", nil, nil, err
	}
	return *cfgPath, cfg, log, nil
}

// watchMetrics are the daemon's metrics, observing its runs, its
// subscriptions and its alerts.
func watchMetrics(a *app) *status.Metrics {
	metrics := status.NewMetrics()
	bi := readBuildInfo()
	metrics.SetBuildInfo(bi.Version, bi.Revision, bi.GoVersion)
	a.runner.Observer = metrics
	a.metrics = metrics
	metrics.WatchSubscriptions(a.store, func() []string { return subscriptionIDs(a.config()) })
	metrics.CountAlerts(alertEvents())
	return metrics
}

// serveStatus starts the status endpoint on the configured address; stop
// shuts it down (at once when the runs were abandoned).
func (c *runCommand) serveStatus(cfg *config.Config, a *app, d *subscription.Daemon, metrics *status.Metrics) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return "", nil, fmt.Errorf("status endpoint: %w", err)
	}
	srv := status.NewServer(status.ServerOptions{Source: a.store, Config: a.config, Daemon: d, Pacers: a.pacers,
		Metrics: metrics, Token: cfg.Status.Token, Log: a.log, StateWritable: a.stateWritable})
	go func() {
		if err := srv.Serve(ln); err != nil {
			a.log.Error("status endpoint stopped", "error", err)
		}
	}()
	return ln.Addr().String(), func() {
		wait := 5 * time.Second
		if c.abandoned {
			wait = abortGrace
		}
		sctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// serve runs until the context ends: SIGHUP reloads the configuration,
// systemd's watchdog is fed while the daemon and its store are alive, and
// the end is a shutdown.
func (c *runCommand) serve(ctx context.Context, d *subscription.Daemon, a *app, cfgPath string) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var watchdog <-chan time.Time
	if iv := watchdogInterval(); iv > 0 {
		t := time.NewTicker(iv)
		defer t.Stop()
		watchdog = t.C
	}
	for {
		select {
		case <-hup:
			_ = sdNotify("RELOADING=1")
			c.reload(ctx, d, a, cfgPath)
			_ = sdNotify("READY=1")
		case <-watchdog:
			if d.Running() && a.store.Ping(ctx) == nil {
				_ = sdNotify("WATCHDOG=1")
			}
		case <-ctx.Done():
			return c.shutdown(d, a)
		}
	}
}

// reload re-reads the configuration; a broken file is reported and the
// running configuration kept.
func (c *runCommand) reload(ctx context.Context, d *subscription.Daemon, a *app, path string) {
	cfg, err := config.Load(path)
	if err != nil {
		a.log.Error("reload refused: the configuration has errors; keeping the running one", "error", err)
		return
	}
	old := a.config()
	if err := d.Reload(ctx, cfg); err != nil {
		a.log.Error("reload failed", "error", err)
		return
	}
	a.setConfig(cfg)
	if cfg.Listen != old.Listen || cfg.Status.Token != old.Status.Token || cfg.Store != old.Store || cfg.Owner != old.Owner {
		a.log.Warn("listen, status.token, store and owner changes take effect after a restart")
	}
}

// abortGrace is how long runs cancelled at the shutdown deadline have to
// record their outcome before the process exits without them.
const abortGrace = config.ShutdownGrace

// errAbandoned ends a shutdown that gave up on runs.
var errAbandoned = errors.New("shutdown: runs that did not stop in time were abandoned; the next start picks up what they left")

// shutdown stops scheduling and waits up to sync.shutdown_timeout for
// in-flight runs. The deadline is hard: runs still going are then
// cancelled, given abortGrace to record, and abandoned (a run waiting on
// a locked database or a hung filesystem heeds no cancellation); a second
// signal abandons them at once. Nothing is lost by abandoning: every
// write Google accepted was persisted as it was accepted, and the next
// run redoes the rest.
func (c *runCommand) shutdown(d *subscription.Daemon, a *app) error {
	timeout := a.config().Sync.ShutdownTimeout.D()
	// systemd kills a service that outlasts TimeoutStopSec; ask for the
	// whole stop (drain, grace, alert flush), whatever the unit says.
	_ = sdNotify(stoppingState(a.config().StopBudget()))
	a.log.Info("shutting down: finishing in-flight writes", "timeout", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	done := make(chan error, 1)
	go func() { done <- d.Shutdown(ctx) }()
	hard := time.NewTimer(timeout + abortGrace)
	defer hard.Stop()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			return err
		}
		a.log.Info("calsyncd stopped")
		return nil
	case <-again:
		a.log.Warn("second signal: abandoning the runs still going and exiting now")
	case <-hard.C:
		a.log.Error("sync.shutdown_timeout passed and runs did not stop when cancelled; exiting without them",
			"timeout", timeout.String())
	}
	cancel()
	c.abandoned = true
	return &exitError{code: 1, err: errAbandoned}
}

// stoppingState is the notification that a stop began and how long it
// may take: systemd (236 or newer) extends the unit's stop timeout to it.
func stoppingState(budget time.Duration) string {
	return fmt.Sprintf("STOPPING=1\nEXTEND_TIMEOUT_USEC=%d", (budget + config.StopMargin).Microseconds())
}

func subscriptionIDs(cfg *config.Config) []string {
	ids := make([]string, len(cfg.Subscriptions))
	for i, s := range cfg.Subscriptions {
		ids[i] = s.ID
	}
	return ids
}
