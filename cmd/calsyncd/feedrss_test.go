package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
)

// hugeFeedBytes is the size of the largest feed of each shape the
// whole-process memory benchmark sweeps (feed.max_size's default).
// (CALSYNCD_BENCH_FEED_MIB sets another, for a quicker look).
var hugeFeedBytes = 20 << 20

func init() {
	if mib, err := strconv.Atoi(os.Getenv("CALSYNCD_BENCH_FEED_MIB")); err == nil && mib > 0 {
		hugeFeedBytes = mib << 20
	}
}

// feedOfSize is shape s with as many events as fit in about size bytes.
func feedOfSize(s feedgen.Shape, size int) []byte {
	const sample = 200
	per := float64(len(s.Generate(sample))) / sample
	return s.Generate(max(1, int(float64(size)/per)))
}

// feedWorld is one subscription mirroring one feed into the emulator. The
// feed server answers with no validators; after reread its body differs
// from the first one in a calendar property alone, so the next sync reads
// the feed in full and plans it (every event unchanged) rather than
// stopping at an unchanged body.
type feedWorld struct {
	fake   *gcalfake.Server
	dir    string
	config string
	body   atomic.Pointer[[]byte]
}

func newFeedWorld(tb testing.TB, body []byte, maxEvents int) *feedWorld {
	tb.Helper()
	w := &feedWorld{fake: gcalfake.New(gcalfake.Options{Seed: 23}), dir: tb.TempDir()}
	w.body.Store(&body)
	w.fake.AddCalendar("huge@example.com", "UTC")
	api := httptest.NewServer(w.fake)
	tb.Cleanup(api.Close)
	feeds := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.Write(*w.body.Load()) }))
	tb.Cleanup(feeds.Close)
	cfg := fmt.Sprintf(`state_dir: state
listen: 127.0.0.1:1
log:
  format: json
  level: warn
google:
  endpoint: %s%s
writer:
  spacing: 1ns
  concurrency: 16
feed:
  max_size: 64MiB
window:
  past: 20000h
limits:
  max_events: %d
  max_instances_expanded: 1000000
subscriptions:
  - id: huge
    url: %s/huge.ics
    calendar: huge@example.com
`, api.URL, gcalfake.BasePath, maxEvents, feeds.URL)
	w.config = filepath.Join(w.dir, "config.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return w
}

// reread serves the feed again with one calendar property added: the
// same events, another body.
func (w *feedWorld) reread() {
	b := bytes.Replace(*w.body.Load(), []byte("VERSION:2.0\r\n"), []byte("VERSION:2.0\r\nX-CALSYNCD-BENCH:reread\r\n"), 1)
	w.body.Store(&b)
}

// syncPeak runs `calsyncd sync --json` as a child process and returns its
// peak resident set (VmHWM, sampled until it exits: getrusage's maxrss
// would count the parent's, which the child shares until it execs) and
// what it printed. With profile set, the child writes a heap profile near
// its peak there (profileNearPeak).
func (w *feedWorld) syncPeak(tb testing.TB, profile string) (int64, []byte, time.Duration) {
	tb.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CALSYNCD_TEST_MAIN=1", "CALSYNCD_TEST_ARGS=sync --json --config "+w.config)
	if profile != "" {
		cmd.Env = append(cmd.Env, "CALSYNCD_BENCH_MEMPROFILE="+profile)
	}
	cmd.Stdout, cmd.Stderr, cmd.Dir = &out, &errOut, w.dir
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	stop := make(chan struct{})
	peak := watchProcess(cmd.Process.Pid, stop)
	_ = cmd.Wait() // a refused feed exits 1: the output says so
	took := time.Since(start)
	close(stop)
	if out.Len() == 0 {
		tb.Fatalf("sync printed nothing: %.2000s", errOut.String())
	}
	return peak().hwm, out.Bytes(), took
}

// profileNearPeak, in a child started with CALSYNCD_BENCH_MEMPROFILE,
// writes a heap profile each time the heap in use grows past the last one
// written by a tenth: the last profile is the heap near its peak.
func profileNearPeak() {
	profileCPU()
	path := os.Getenv("CALSYNCD_BENCH_MEMPROFILE")
	if path == "" {
		return
	}
	runtime.MemProfileRate = 64 << 10
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var written uint64
		for {
			time.Sleep(5 * time.Millisecond)
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > written+written/10+1<<20 {
				written = v
				runtime.GC() // the profile shows the heap as of the last GC
				if f, err := os.Create(path); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		}
	}()
}

// profileCPU, with CALSYNCD_BENCH_CPUPROFILE=FILE, profiles the program's
// CPU from CALSYNCD_BENCH_CPUPROFILE_AFTER (default 10s) after it starts,
// in spans of CALSYNCD_BENCH_CPUPROFILE_FOR (default 30s), each written to
// FILE.1, FILE.2, …: a daemon is stopped by a signal, which leaves no
// chance to stop a profile at exit, so only the span it cuts is lost.
func profileCPU() {
	path := os.Getenv("CALSYNCD_BENCH_CPUPROFILE")
	if path == "" {
		return
	}
	duration := func(env string, def time.Duration) time.Duration {
		if d, err := time.ParseDuration(os.Getenv(env)); err == nil {
			return d
		}
		return def
	}
	after, span := duration("CALSYNCD_BENCH_CPUPROFILE_AFTER", 10*time.Second), duration("CALSYNCD_BENCH_CPUPROFILE_FOR", 30*time.Second)
	go func() {
		time.Sleep(after)
		for i := 1; ; i++ {
			f, err := os.Create(fmt.Sprintf("%s.%d", path, i))
			if err != nil {
				return
			}
			if pprof.StartCPUProfile(f) != nil {
				f.Close()
				return
			}
			time.Sleep(span)
			pprof.StopCPUProfile()
			f.Close()
		}
	}()
}

// feedRun is one sync's outcome and peak.
type feedRun struct {
	peak    int64
	outcome string
	created int
	took    time.Duration
}

func (w *feedWorld) run(tb testing.TB, profile string) feedRun {
	tb.Helper()
	peak, out, took := w.syncPeak(tb, profile)
	var doc status.SyncDoc
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Subscriptions) != 1 {
		tb.Fatalf("sync --json: %v\n%.2000s", err, out)
	}
	results := doc.Subscriptions
	return feedRun{peak: peak, outcome: string(results[0].Run.Outcome), created: results[0].Run.Created, took: took}
}

// hugeFeeds measures the whole process where an operator sees it: the
// peak resident set of one `calsyncd sync` mirroring a feed of each shape
// feedgen sweeps, at about 20 MiB, into the emulator (limits raised so it
// is accepted), first the backfill and then a sync that reads the same
// events in a new body (so it loads the mappings and plans every event).
// A feed of no events measures the process's own fixed cost (the Go
// runtime, the database, the HTTP clients): the baseline. Per shape it
// reports, over the feed's size in bytes:
//
//   - first-RSS/B and second-RSS/B: the peak resident set, raw;
//   - first-net-RSS/B and second-net-RSS/B: less the baseline's peak;
//
// and the summary the worst and best of each over the shapes, the
// baseline in MB, and limited-RSS-MB: the peak of a sync of the 20 MiB
// minimal feed refused at limits.max_events' default (20,000).
func hugeFeeds(b *testing.B) {
	type shape struct {
		name string
		body []byte
	}
	var (
		shapes  []shape
		minimal feedgen.Shape
	)
	for _, s := range feedgen.Shapes {
		if s.Name == "minimal" {
			minimal = s
		}
		shapes = append(shapes, shape{s.Name, feedOfSize(s, hugeFeedBytes)})
	}
	profiles := os.Getenv("CALSYNCD_BENCH_PROFILES") // a directory for the children's heap profiles
	profile := func(name string) string {
		if profiles == "" {
			return ""
		}
		return filepath.Join(profiles, name+".pprof")
	}
	var base [2]int64
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			w := newFeedWorld(b, feedgen.GenerateMinimal(0), 400_000)
			base[0] = w.run(b, "").peak
			w.reread()
			base[1] = w.run(b, "").peak
		}
		b.ReportMetric(float64(base[0])/(1<<20), "first-RSS-MB")
		b.ReportMetric(float64(base[1])/(1<<20), "second-RSS-MB")
	})
	type extreme struct{ worst, best float64 }
	var ratios [4]extreme // first, second, first-net, second-net
	note := func(i int, v float64) {
		if ratios[i].worst == 0 || v > ratios[i].worst {
			ratios[i].worst = v
		}
		if ratios[i].best == 0 || v < ratios[i].best {
			ratios[i].best = v
		}
	}
	for _, s := range shapes {
		b.Run(fmt.Sprintf("%s/MiB=%.0f", s.name, float64(len(s.body))/(1<<20)), func(b *testing.B) {
			var first, second feedRun
			for b.Loop() {
				w := newFeedWorld(b, s.body, 400_000)
				first = w.run(b, profile(s.name+"-first"))
				w.reread()
				second = w.run(b, profile(s.name+"-second"))
			}
			if first.outcome != "ok" || second.outcome != "ok" {
				b.Fatalf("outcomes %s, %s", first.outcome, second.outcome)
			}
			size := float64(len(s.body))
			r := [4]float64{float64(first.peak) / size, float64(second.peak) / size,
				float64(first.peak-base[0]) / size, float64(second.peak-base[1]) / size}
			for i, v := range r {
				note(i, v)
			}
			b.ReportMetric(r[0], "first-RSS/B")
			b.ReportMetric(r[1], "second-RSS/B")
			b.ReportMetric(r[2], "first-net-RSS/B")
			b.ReportMetric(r[3], "second-net-RSS/B")
			b.ReportMetric(float64(first.peak)/(1<<20), "first-RSS-MB")
			b.ReportMetric(float64(second.peak)/(1<<20), "second-RSS-MB")
			b.Logf("%d events created in %s; second sync %s", first.created, first.took.Round(time.Millisecond), second.took.Round(time.Millisecond))
		})
	}
	b.Run("summary", func(b *testing.B) {
		var limited feedRun
		for b.Loop() {
			w := newFeedWorld(b, feedOfSize(minimal, hugeFeedBytes), 20_000)
			limited = w.run(b, "")
		}
		if limited.outcome != "failed" {
			b.Fatalf("the feed over limits.max_events ended %s", limited.outcome)
		}
		for i, name := range []string{"first-RSS/B", "second-RSS/B", "first-net-RSS/B", "second-net-RSS/B"} {
			b.ReportMetric(ratios[i].worst, "worst-"+name)
			b.ReportMetric(ratios[i].best, "best-"+name)
		}
		b.ReportMetric(float64(base[0])/(1<<20), "baseline-RSS-MB")
		b.ReportMetric(float64(limited.peak)/(1<<20), "limited-RSS-MB")
	})
}
