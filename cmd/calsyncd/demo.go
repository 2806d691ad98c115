package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

type demoCommand struct{ m *Main }

func (c *demoCommand) Synopsis() string {
	return "sync the sample feeds into the built-in Google Calendar emulator (no credentials needed)"
}

func (c *demoCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("demo", "demo [--state-dir DIR]")
	stateDir := fs.String("state-dir", "", "where the demo keeps its database (default: a temporary directory)")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2, err: err}
	}
	dir := *stateDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "calsyncd-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}

	fake := gcalfake.New(gcalfake.Options{})
	feeds, err := sampleFeedNames()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(gcalfake.BasePath, fake)
	sub, _ := fsSub()
	mux.Handle("GET /feeds/", http.StripPrefix("/feeds/", http.FileServerFS(sub)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Shutdown(context.WithoutCancel(ctx))
	base := "http://" + ln.Addr().String()

	cfg := config.Default()
	cfg.StateDir = dir
	cfg.Google.Endpoint = base + gcalfake.BasePath
	for _, name := range feeds {
		id := strings.TrimSuffix(name, path.Ext(name))
		cal := id + "@demo.calsyncd.invalid"
		fake.AddCalendar(cal, "Europe/Berlin")
		cfg.Subscriptions = append(cfg.Subscriptions, config.Subscription{ID: id, URL: base + "/feeds/" + name, Calendar: cal})
	}
	log := newLogger(c.m.Stderr, cfg.Log)
	a, err := openApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()

	log.Info("demo: emulator and sample feeds are up", "emulator", cfg.Google.Endpoint, "feeds", len(feeds))
	for pass := 1; pass <= 2; pass++ {
		for _, s := range cfg.Subscriptions {
			rep, err := a.runner.Sync(ctx, s, subscription.Options{})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.m.Stdout, "pass %d: %s: %s, created %d, updated %d, deleted %d, unchanged %d, deferred %d; calendar holds %d events\n",
				pass, s.ID, rep.Run.Outcome, rep.Run.Created, rep.Run.Updated, rep.Run.Deleted, rep.Run.Unchanged, rep.Run.Deferred,
				len(fake.Events(s.Calendar)))
			if rep.Err != nil {
				return errors.Join(fmt.Errorf("demo: %s failed", s.ID), rep.Err)
			}
		}
	}
	return nil
}

func fsSub() (fs.FS, error) { return fs.Sub(calsyncd.SampleFeeds, "testdata/feeds") }

func sampleFeedNames() ([]string, error) {
	sub, err := fsSub()
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}
