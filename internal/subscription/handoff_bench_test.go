package subscription

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// handOffURLEnv names the feed a child process fetches and parses for
// BenchmarkFeedHandOff.
const handOffURLEnv = "CALSYNCD_BENCH_HANDOFF_URL"

// TestMain runs the hand-off child when asked, else the tests.
func TestMain(m *testing.M) {
	if url := os.Getenv(handOffURLEnv); url != "" {
		if err := handOffChild(url); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// handOffChild runs the pass's fetch and parse stages on one feed, as the
// daemon does, and prints its peak resident set.
func handOffChild(url string) error {
	cfg := config.Default()
	cfg.Window = config.Window{}
	sub := config.Subscription{ID: "big", URL: url, Calendar: "big@example.com"}
	r := &Runner{Config: cfg, Fetcher: fetch.NewFetcher(0, 0, 64<<20, feed.CheckBody),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	p := pass{begun: begun{sub: sub, cfg: cfg, log: r.log()}}
	var end *ending
	if p.fetched, p.parsed, end = r.read(context.Background(), p); end != nil {
		return fmt.Errorf("pass ended: %s %v", end.outcome, end.err)
	}
	if len(p.parsed.cal.Events) == 0 {
		return fmt.Errorf("no events")
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		return fmt.Errorf("no VmHWM")
	}
	fmt.Printf("peak-rss %s\n", m[1])
	return nil
}

// BenchmarkFeedHandOff is the pass's fetch and parse stages on the huge
// feed (324,000 minimal events in 20 MiB) served over HTTP, in a fresh
// process: peak-RSS/B is that process's peak resident set over the feed's
// size (the Go runtime's few MiB included).
//
// Run: go test ./internal/subscription -run '^$' -bench FeedHandOff -benchtime 1x
func BenchmarkFeedHandOff(b *testing.B) {
	body := feedgen.GenerateMinimal(324_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer srv.Close()
	var peak float64
	for b.Loop() {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), handOffURLEnv+"="+srv.URL+"/big.ics")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %s", err, out.String())
		}
		m := regexp.MustCompile(`peak-rss (\d+)`).FindSubmatch(out.Bytes())
		if m == nil {
			b.Fatalf("no peak RSS in %q", out.String())
		}
		kb, _ := strconv.ParseFloat(string(m[1]), 64)
		peak = kb * 1024
	}
	b.ReportMetric(peak/float64(len(body)), "peak-RSS/B")
	b.ReportMetric(float64(len(body))/(1<<20), "feed-MiB")
}
