package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// TestSubscriptionByID: a loaded configuration finds each subscription by
// id — the main file's and the included ones' — and still answers right
// once Subscriptions is edited in place, appended to or replaced, as
// tests and the demo do.
func TestSubscriptionByID(t *testing.T) {
	dir := tree(t, map[string]string{
		"config.yaml": "include: [more.yaml]\nsubscriptions:\n" + subs("a", "b"),
		"more.yaml":   "subscriptions:\n" + subs("c", "d"),
	})
	cfg, err := config.Load(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := func(t *testing.T, id, calendar string) {
		t.Helper()
		s, ok := cfg.Subscription(id)
		switch {
		case calendar == "" && ok:
			t.Errorf("Subscription(%q) found %q, want none", id, s.ID)
		case calendar != "" && (!ok || s.ID != id || s.Calendar != calendar):
			t.Errorf("Subscription(%q) = %q %q %v, want its calendar %q", id, s.ID, s.Calendar, ok, calendar)
		}
	}
	steps := []struct {
		name string
		edit func()
		want map[string]string // id → calendar ("": none)
	}{
		{"as loaded", func() {}, map[string]string{"a": "a@example.com", "d": "d@example.com", "e": ""}},
		{"an id edited in place", func() { cfg.Subscriptions[1].ID = "e" }, map[string]string{"b": "", "e": "b@example.com", "c": "c@example.com"}},
		{"a calendar edited in place", func() { cfg.Subscriptions[0].Calendar = "z@example.com" }, map[string]string{"a": "z@example.com"}},
		{"appended", func() {
			cfg.Subscriptions = append(cfg.Subscriptions, config.Subscription{ID: "f", Calendar: "f@example.com"})
		}, map[string]string{"f": "f@example.com", "d": "d@example.com"}},
		{"replaced", func() {
			cfg.Subscriptions = []config.Subscription{{ID: "g", Calendar: "g@example.com"}}
		}, map[string]string{"g": "g@example.com", "a": "", "f": ""}},
		{"emptied", func() { cfg.Subscriptions = nil }, map[string]string{"g": ""}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.edit()
			for id, cal := range st.want {
				want(t, id, cal)
			}
		})
	}
	// A Config that was never parsed scans.
	lit := &config.Config{Subscriptions: []config.Subscription{{ID: "x", Calendar: "x@example.com"}}}
	if s, ok := lit.Subscription("x"); !ok || s.Calendar != "x@example.com" {
		t.Errorf("a literal Config: %v %v", s, ok)
	}
}

// BenchmarkSubscriptionByID looks up every subscription of a loaded
// configuration once, as a daemon's start does (which of the database's
// subscriptions are still configured): O(1) each, where a scan made it
// quadratic (minutes of CPU at 100,000).
//
//	go test ./internal/config -run '^$' -bench SubscriptionByID
func BenchmarkSubscriptionByID(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("s%06d", i)
			}
			for i := 0; i < n; i += 5000 {
				name := filepath.Join(dir, fmt.Sprintf("s%03d.yaml", i/5000))
				var lines []byte
				for _, id := range ids[i:min(i+5000, n)] {
					lines = fmt.Appendf(lines, "  - {id: %s, url: 'https://feeds.example.com/%s.ics', calendar: %s@example.com}\n", id, id, id)
				}
				if err := os.WriteFile(name, append([]byte("subscriptions:\n"), lines...), 0o600); err != nil {
					b.Fatal(err)
				}
			}
			main := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(main, []byte("include: ['"+dir+"/s*.yaml']\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			cfg, err := config.Load(main)
			if err != nil {
				b.Fatal(err)
			}
			if len(cfg.Subscriptions) != n {
				b.Fatalf("%d subscriptions loaded", len(cfg.Subscriptions))
			}
			for b.Loop() {
				for _, id := range ids {
					if _, ok := cfg.Subscription(id); !ok {
						b.Fatal(id)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/lookup")
		})
	}
}
