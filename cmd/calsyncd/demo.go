package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/demo"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/render"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

type demoCommand struct{ m *Main }

func (c *demoCommand) Synopsis() string {
	return "run the daemon on the built-in Google Calendar emulator and sample feeds (no credentials needed)"
}

func (c *demoCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("demo", "demo [--once] [--listen ADDR] [--state-dir DIR] [--log-format text|json]\n"+
		"       calsyncd demo --config FILE [--once | --for DURATION] [--listen ADDR] [--log-format text|json]")
	once := fs.Bool("once", false, "tell the story (with --config: sync each subscription once), then exit instead of running until Ctrl-C")
	cfgPath := fs.String("config", "", "run this configuration's subscriptions on the emulator instead of the sample feeds (credentials, store and alerts ignored)")
	runFor := fs.Duration("for", 0, "with --config: stop after this long (0: run until Ctrl-C)")
	listen := fs.String("listen", "127.0.0.1:8765", "status page address (a free port is used if this one is taken)")
	stateDir := fs.String("state-dir", "", "where the demo keeps its database (default: a temporary directory)")
	logFormat := fs.String("log-format", "text", "text or json")
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	o := demoConfigOptions{path: *cfgPath, once: *once, runFor: *runFor, listen: *listen,
		stateDir: *stateDir, logFormat: *logFormat, args: args}
	if *cfgPath != "" || *runFor != 0 {
		return c.runConfig(ctx, o)
	}
	return c.runSample(ctx, o)
}

// runSample tells the demo's story: the sample feeds synced to the
// emulator, step by step, with a status page to watch; then, unless
// --once, the daemon keeps running until Ctrl-C.
func (c *demoCommand) runSample(ctx context.Context, o demoConfigOptions) error {
	if len(o.args) > 0 {
		return &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(o.args, " "))}
	}
	dir := o.stateDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "calsyncd-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	log := newLogger(c.m.Stderr, config.Log{Format: o.logFormat, Level: "info"})

	fake, feeds, base, stop, err := startDemoBackend()
	if err != nil {
		return err
	}
	defer stop(context.WithoutCancel(ctx))
	cfg := demoConfig(dir, base, fake)

	// The story runs the first syncs itself.
	a, d, page, closeDaemon, err := demoDaemon(ctx, cfg, log, o.listen)
	if err != nil {
		return err
	}
	defer closeDaemon()
	if err := d.Start(ctx); err != nil {
		return err
	}
	log.Info("demo: the Google Calendar emulator and four sample feeds are up; open the status page to watch",
		"status_page", page, "emulator", cfg.Google.Endpoint)
	storyErr := sampleStory(a, cfg, fake, feeds, log).Run(ctx)
	if storyErr == nil {
		log.Info("demo: the story is told", "demo_step", "done", "status_page", page)
	}
	if !o.once && storyErr == nil {
		fmt.Fprintf(c.m.Stdout, "\nThe daemon keeps running on the emulator. Status page: %s\nPress Ctrl-C to stop.\n", page)
		<-ctx.Done()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if storyErr != nil && !errors.Is(storyErr, context.Canceled) {
		return storyErr
	}
	return nil
}

// sampleStory is the demo's story, syncing through the app's runner.
func sampleStory(a *app, cfg *config.Config, fake *gcalfake.Server, feeds *demo.Feeds, log *slog.Logger) *demo.Story {
	return &demo.Story{Log: log, Fake: fake, Feeds: feeds, Subscriptions: cfg.Subscriptions,
		Sync: func(ctx context.Context, sub config.Subscription) (subscription.Report, error) {
			return a.runner.Sync(ctx, sub, subscription.Options{})
		},
		ThrottledUntil: func() time.Time { return a.throttledUntil(config.DefaultAccount) },
	}
}

// startDemoBackend serves the emulator and the sample feeds on one
// loopback server; base is its URL.
func startDemoBackend() (*gcalfake.Server, *demo.Feeds, string, func(context.Context) error, error) {
	fake := gcalfake.New(gcalfake.Options{})
	feeds, err := demo.NewFeeds(time.Now())
	if err != nil {
		return nil, nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(gcalfake.BasePath, fake)
	mux.Handle("GET /feeds/", feeds)
	backend := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go backend.Serve(ln)
	return fake, feeds, "http://" + ln.Addr().String(), backend.Shutdown, nil
}

// demoConfig is the demo's configuration: the emulator as Google, one
// subscription per sample feed, each with a calendar of its own.
func demoConfig(dir, base string, fake *gcalfake.Server) *config.Config {
	cfg := config.Default()
	cfg.StateDir = dir
	cfg.Google.Endpoint = base + gcalfake.BasePath
	// Quicker than production so the story fits in seconds: pacing, the
	// retry budget and the throttle window are shortened.
	cfg.Writer.Spacing = config.Duration(40 * time.Millisecond)
	cfg.Writer.MaxRetryWait = config.Duration(3 * time.Second)
	cfg.Writer.ThrottleWindow = config.Duration(2 * time.Second)
	cfg.Writer.ThrottleWindowMax = config.Duration(10 * time.Second)
	for _, name := range []string{"team.ics", "outlook.ics", "holidays.ics", "community.ics"} {
		id := strings.TrimSuffix(name, ".ics")
		cal := id + "@demo.calsyncd.invalid"
		fake.AddCalendar(cal, "Europe/Berlin")
		cfg.Subscriptions = append(cfg.Subscriptions, config.Subscription{ID: id, URL: base + "/feeds/" + name, Calendar: cal})
	}
	// The community feed shows the render stage: filtered, prefixed and
	// coloured, with the feed's alarms as reminders.
	community := &cfg.Subscriptions[len(cfg.Subscriptions)-1]
	meetups, calledOff, title, color := "(?i)^(meetup|conference)$", "(?i)^cancel(l)?ed:", demo.CommunityTitle, demo.CommunityColor
	community.Filters = []config.Filter{{Include: &config.FilterMatch{Categories: &meetups}}, {Exclude: &config.FilterMatch{Summary: &calledOff}}}
	community.Title, community.Color = &title, &color
	community.Reminders = &config.Reminders{Timed: &config.ReminderSetting{Mode: render.ReminderFeed}, AllDay: &config.ReminderSetting{Mode: render.ReminderNone}}
	return cfg
}

// throttledUntil is when the account's throttle window closes (zero: none
// is open, or the account has no writer yet).
func (a *app) throttledUntil(account string) time.Time {
	for _, p := range a.pacers() {
		if p.Account == account {
			return p.ThrottleUntil
		}
	}
	return time.Time{}
}

// demoDaemon opens the app on the emulator's configuration and serves its
// status page on listen (any loopback port when it is taken): the daemon
// with metrics, not started, its first passes left to the caller
// (SkipCatchUp). stop closes what it opened.
func demoDaemon(ctx context.Context, cfg *config.Config, log *slog.Logger, listen string) (*app, *subscription.Daemon, string, func(), error) {
	a, err := openApp(ctx, cfg, log, false)
	if err != nil {
		return nil, nil, "", nil, err
	}
	metrics := status.NewMetrics()
	bi := readBuildInfo()
	metrics.SetBuildInfo(bi.Version, bi.Revision, bi.GoVersion)
	a.runner.Observer, a.metrics = metrics, metrics
	metrics.WatchSubscriptions(a.store, func() []string { return subscriptionIDs(a.config()) })
	d := subscription.NewDaemon(cfg, a.runner, a.store, log, uint64(time.Now().UnixNano()))
	d.SkipCatchUp()
	statusLn, err := net.Listen("tcp", listen)
	if err != nil {
		if statusLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			a.Close()
			return nil, nil, "", nil, err
		}
	}
	srv := status.NewServer(status.ServerOptions{Source: a.store, Config: a.config, Daemon: d, Pacers: a.pacers, Metrics: metrics, Log: log})
	go srv.Serve(statusLn)
	stop := func() {
		srv.Shutdown(context.WithoutCancel(ctx))
		a.Close()
	}
	return a, d, "http://" + statusLn.Addr().String() + "/", stop, nil
}
