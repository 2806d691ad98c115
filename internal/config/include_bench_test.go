package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

// scaleStyles are the subscriptions a large configuration is made of:
// the README's minimal one (a feed token in ${VAR}), and one that sets
// what a subscription can (headers, filters, title, reminders, window,
// limits) and so costs the decoder and the rules most. Its filters are
// its own (no two subscriptions share a pattern) and its zone one of a
// few, as a real configuration's would be.
var scaleStyles = map[string]func(b *strings.Builder, i int){
	"minimal": func(b *strings.Builder, i int) {
		id := fmt.Sprintf("feed-%06d", i)
		fmt.Fprintf(b, "  - id: %s\n    url: https://calendar.example.com/ical/%s/private-${FEED_TOKEN}/basic.ics\n    calendar: %s@group.calendar.google.com\n", id, id, id)
	},
	"rich": func(b *strings.Builder, i int) {
		id := fmt.Sprintf("feed-%06d", i)
		zone := []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "UTC"}[i%5]
		fmt.Fprintf(b, `  - id: %s
    url: https://calendar.example.com/ical/%s/basic.ics
    calendar: %s@group.calendar.google.com
    account: work
    headers: {Authorization: "Bearer ${FEED_TOKEN}"}
    time_zone: %s
    window: {past: 7d, future: 365d}
    limits: {max_events: 50000}
    filters: [{include: {categories: "(?i)^(work|%s)$"}}, {exclude: {summary: "(?i)^(canceled|cancelled|%s):"}}]
    title: "[%s] {summary}"
    color: banana
    privacy: busy
    reminders: {timed: [{popup: 10m}], all_day: none}
`, id, id, id, zone, id, id, id)
	},
}

// writeScale writes a configuration of n subscriptions of style spread
// evenly over files included files (the main file holds none) and
// returns the main file.
func writeScale(tb testing.TB, dir, style string, n, files int) string {
	tb.Helper()
	write := scaleStyles[style]
	sub := filepath.Join(dir, "subscriptions.d")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		tb.Fatal(err)
	}
	for f := range files {
		var b strings.Builder
		b.WriteString("subscriptions:\n")
		for i := f * n / files; i < (f+1)*n/files; i++ {
			write(&b, i)
		}
		if b.Len() > config.MaxFileSize {
			tb.Fatalf("%s: %d subscriptions in a file are %d bytes, over the cap", style, n/files, b.Len())
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("%05d.yaml", f)), []byte(b.String()), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	main := filepath.Join(dir, "config.yaml")
	body := "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:1/\naccounts:\n  - name: work\ninclude: [subscriptions.d]\n"
	if err := os.WriteFile(main, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	return main
}

// BenchmarkLoadScale loads 100,000 subscriptions spread over included
// files, sweeping how many files and how much each subscription says: the
// time and bytes allocated per load, per subscription, and the heap the
// loaded configuration keeps. A daemon loads at start and at each reload.
//
//	go test ./internal/config -run '^$' -bench LoadScale -benchtime 3x
func BenchmarkLoadScale(b *testing.B) {
	const n = 100_000
	b.Setenv("FEED_TOKEN", "tok")
	for _, sweep := range []struct {
		style string
		files []int
	}{
		{"minimal", []int{20, 100, 1000, 10_000}},
		// A rich subscription is about 560 bytes: 20 files would pass
		// the 1 MiB cap.
		{"rich", []int{100, 1000, 10_000}},
	} {
		style := sweep.style
		for _, files := range sweep.files {
			b.Run(fmt.Sprintf("%s/files=%d", style, files), func(b *testing.B) {
				main := writeScale(b, b.TempDir(), style, n, files)
				var size int64
				filepath.Walk(filepath.Dir(main), func(_ string, fi os.FileInfo, _ error) error {
					if fi.Mode().IsRegular() {
						size += fi.Size()
					}
					return nil
				})
				b.ReportAllocs()
				b.ResetTimer()
				var cfg *config.Config
				start, cpu0 := time.Now(), cpuTime(b)
				for b.Loop() {
					var err error
					if cfg, err = config.Load(main); err != nil {
						b.Fatal(err)
					}
				}
				elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
				b.StopTimer()
				// The CPU the process spent (the GC's included): on a
				// shared machine the wall time also counts others' work.
				b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/load")
				if len(cfg.Subscriptions) != n {
					b.Fatalf("%d subscriptions", len(cfg.Subscriptions))
				}
				b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/load")
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/n, "ns/sub")
				b.ReportMetric(float64(size)/(1<<20), "MiB-of-yaml")
				// What the loaded configuration keeps: the heap with it
				// alive, less the heap without it.
				runtime.GC()
				var with, without runtime.MemStats
				runtime.ReadMemStats(&with)
				runtime.KeepAlive(cfg)
				cfg = nil
				runtime.GC()
				runtime.ReadMemStats(&without)
				b.ReportMetric(float64(int64(with.HeapAlloc)-int64(without.HeapAlloc))/n, "kept-B/sub")
			})
		}
	}
}

// cpuTime is the CPU time the process has spent, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLoadScale loads 100,000 subscriptions over 20 files: what the
// benchmark measures holds, each subscription where its file puts it.
func TestLoadScale(t *testing.T) {
	t.Setenv("FEED_TOKEN", "tok")
	main := writeScale(t, t.TempDir(), "minimal", 100_000, 20)
	cfg, err := config.Load(main)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Subscriptions) != 100_000 || len(cfg.Files) != 21 {
		t.Fatalf("%d subscriptions from %d files", len(cfg.Subscriptions), len(cfg.Files))
	}
	for _, i := range []int{0, 4_999, 5_000, 99_999} {
		file, key := cfg.SubscriptionSource(i)
		if want := filepath.Join(filepath.Dir(main), "subscriptions.d", fmt.Sprintf("%05d.yaml", i/5000)); file != want || key != fmt.Sprintf("subscriptions[%d]", i%5000) {
			t.Errorf("SubscriptionSource(%d) = %s %s", i, file, key)
		}
		if s := cfg.Subscriptions[i]; s.ID != fmt.Sprintf("feed-%06d", i) || !strings.Contains(s.URL, "private-tok/") {
			t.Errorf("subscription %d = %+v", i, s)
		}
	}
}
