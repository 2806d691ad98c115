package feed_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

// BenchmarkParse measures parse + normalise + hash on every feedgen shape
// (the everyday mix at 1,000 and 100,000 events, the huge feed's 324,000
// minimal events in 20 MiB, many custom zones, long descriptions,
// recurrence). Per shape it reports:
//
//   - events/s and MB/s of ParseBytes (one goroutine);
//   - x-icaljs: events/s over ical.js's on the same file, measured right
//     after (bench/icaljs; skipped with a note without Node or its
//     node_modules), and icaljs-events/s;
//   - allocs/event and B/event allocated;
//   - peak-heap/B: the highest heap in use while parsing, over the file
//     size (sampled every 100µs, the body itself not counted);
//   - peak-RSS/B and stream-peak-RSS/B: the peak resident memory of a
//     fresh process that reads the file and parses it, with ParseBytes
//     (the body held, as the daemon does) and with Parse streaming the
//     file, over the file size; nothing is subtracted (the Go runtime's
//     few MiB count);
//   - retained-B/event: the heap the parsed calendar keeps.
//
// The machine is shared: compare ratios within a run, and repeat:
//
//	npm ci --prefix bench/icaljs   # once, for x-icaljs
//	go test -run '^$' -bench BenchmarkParse -benchtime 3x -count 5 ./internal/feed
//
// The last sub-benchmark, rss-summary, reports the worst and best
// stream-peak-RSS/B over the shapes, and limited-peak-RSS-MB: the peak
// resident memory of a fresh process that streams the largest minimal feed
// with MaxEvents at its default (20,000), refused once it is passed.
func BenchmarkParse(b *testing.B) {
	dir := b.TempDir()
	icaljs := findICALJS(b)
	worst, best := 0.0, 0.0
	var largest string
	for _, s := range feedgen.Shapes {
		for _, n := range s.Events {
			b.Run(fmt.Sprintf("%s/events=%d", s.Name, n), func(b *testing.B) {
				data := s.Generate(n)
				path := filepath.Join(dir, fmt.Sprintf("%s-%d.ics", s.Name, n))
				if err := os.WriteFile(path, data, 0o644); err != nil {
					b.Fatal(err)
				}
				if s.Name == "minimal" {
					largest = path
				}
				rss := benchParse(b, data, path, icaljs)
				if worst == 0 || rss > worst {
					worst = rss
				}
				if best == 0 || rss < best {
					best = rss
				}
			})
		}
	}
	b.Run("rss-summary", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(worst, "worst-stream-peak-RSS/B")
		b.ReportMetric(best, "best-stream-peak-RSS/B")
		if largest != "" {
			rss, err := peakRSS(largest, "limited")
			if err != nil {
				b.Fatalf("peak RSS (limited): %v", err)
			}
			b.ReportMetric(rss/(1<<20), "limited-peak-RSS-MB")
		}
	})
}

// benchParse reports the metrics of one shape and returns its
// stream-peak-RSS/B.
func benchParse(b *testing.B, data []byte, path string, icaljs func(string) (float64, error)) float64 {
	b.SetBytes(int64(len(data)))
	var cal *feed.Calendar
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	loops := 0
	for b.Loop() {
		var err error
		if cal, err = feed.ParseBytes(data, feed.Options{}); err != nil {
			b.Fatal(err)
		}
		loops++
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	n := len(cal.Events)
	events := float64(n * loops)
	rate := events / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/events, "B/event")
	cal = nil
	retained, peak := retainedAndPeak(data)
	b.ReportMetric(retained/float64(n), "retained-B/event")
	b.ReportMetric(peak/float64(len(data)), "peak-heap/B")
	var stream float64
	for _, mode := range []string{"bytes", "stream"} {
		rss, err := peakRSS(path, mode)
		if err != nil {
			b.Fatalf("peak RSS (%s): %v", mode, err)
		}
		unit := "peak-RSS/B"
		if mode == "stream" {
			unit, stream = "stream-peak-RSS/B", rss/float64(len(data))
		}
		b.ReportMetric(rss/float64(len(data)), unit)
	}
	if icaljs != nil {
		js, err := icaljs(path)
		if err != nil {
			b.Fatalf("ical.js: %v", err)
		}
		b.ReportMetric(js, "icaljs-events/s")
		b.ReportMetric(rate/js, "x-icaljs")
	}
	return stream
}

// retainedAndPeak parses data once more and measures the heap the result
// keeps after a GC, and the highest heap in use seen while parsing.
func retainedAndPeak(data []byte) (retained, peak float64) {
	runtime.GC()
	base := heapInUse()
	var highest atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if h := heapInUse(); h > highest.Load() {
				highest.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	})
	cal, err := feed.ParseBytes(data, feed.Options{})
	if h := heapInUse(); h > highest.Load() {
		highest.Store(h)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		panic(err)
	}
	runtime.GC()
	kept := heapInUse()
	runtime.KeepAlive(cal)
	return float64(kept) - float64(base), float64(highest.Load()) - float64(base)
}

// heapInUse is the heap's spans in use (runtime.MemStats.HeapInuse),
// read without stopping the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// rssEnv names the feed a child process parses for peakRSS; rssModeEnv is
// "bytes" (read whole, ParseBytes) or "stream" (Parse on the open file).
const (
	rssEnv     = "CALSYNCD_BENCH_RSS_FEED"
	rssModeEnv = "CALSYNCD_BENCH_RSS_MODE"
)

// TestMain runs the child process of peakRSS when asked, else the tests.
func TestMain(m *testing.M) {
	if path := os.Getenv(rssEnv); path != "" {
		if err := rssChild(path, os.Getenv(rssModeEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func rssChild(path, mode string) error {
	var cal *feed.Calendar
	switch mode {
	case "bytes":
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if cal, err = feed.ParseBytes(data, feed.Options{}); err != nil {
			return err
		}
		runtime.KeepAlive(data)
	case "limited":
		// The daemon's default limits.max_events: the feed is refused
		// once it is passed, and what the read held until then is the
		// peak.
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var lim *feed.LimitError
		if _, err := feed.Parse(f, feed.Options{MaxEvents: 20_000}); !errors.As(err, &lim) {
			return fmt.Errorf("want a LimitError, got %v", err)
		}
		hwm, err := ownPeakRSS()
		if err != nil {
			return err
		}
		fmt.Printf("peak-rss %d\n", int64(hwm))
		return nil
	case "stream":
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if cal, err = feed.Parse(f, feed.Options{}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("mode %q", mode)
	}
	if len(cal.Events) == 0 {
		return errors.New("no events")
	}
	hwm, err := ownPeakRSS()
	if err != nil {
		return err
	}
	fmt.Printf("peak-rss %d\n", int64(hwm))
	return nil
}

// peakRSS runs this test binary as a child that parses the feed at path
// and returns its peak resident set in bytes, as the child reads it
// itself: the rusage of a child started with CLONE_VM carries the parent's
// high-water mark across exec.
func peakRSS(path, mode string) (float64, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), rssEnv+"="+path, rssModeEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	m := regexp.MustCompile(`peak-rss (\d+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no peak RSS in %q", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

var icaljsRate = regexp.MustCompile(`: (\d+) events/s`)

// findICALJS returns a function that parses a feed with ical.js
// (bench/icaljs/bench.js) and returns its events/s, or nil with a note
// when Node or ical.js is not installed.
func findICALJS(b *testing.B) func(string) (float64, error) {
	node, err := exec.LookPath("node")
	script, _ := filepath.Abs("../../bench/icaljs/bench.js")
	_, modErr := os.Stat("../../bench/icaljs/node_modules/ical.js")
	if err != nil || modErr != nil {
		b.Logf("x-icaljs not measured: needs node and `npm ci --prefix bench/icaljs` (%v %v)", err, modErr)
		return nil
	}
	return func(path string) (float64, error) {
		out, err := exec.Command(node, "--expose-gc", script, path).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, out)
		}
		m := icaljsRate.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("no events/s in %q", out)
		}
		return strconv.ParseFloat(string(m[1]), 64)
	}
}
