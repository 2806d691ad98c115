package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
)

// scaleWorld is one emulator and one feed server for many subscriptions,
// spread over a few accounts, and a configuration naming them all.
type scaleWorld struct {
	fake      *gcalfake.Server
	dir       string
	config    string
	calendars map[string]string // subscription id → calendar
}

// newScaleWorld serves subs subscriptions of events events each over
// accounts accounts. The feeds are the same text (the ids of the events
// they make differ by subscription).
func newScaleWorld(tb testing.TB, subs, events, accounts int) *scaleWorld {
	tb.Helper()
	w := &scaleWorld{fake: gcalfake.New(gcalfake.Options{Seed: 16}), dir: tb.TempDir(), calendars: map[string]string{}}
	api := httptest.NewServer(w.fake)
	tb.Cleanup(api.Close)
	body := []byte(generatedFeed(events))
	feeds := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.Write(body) }))
	tb.Cleanup(feeds.Close)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "state_dir: state\nlisten: 127.0.0.1:1\nlog:\n  format: json\n  level: warn\ngoogle:\n  endpoint: %s%s\n",
		api.URL, gcalfake.BasePath)
	cfg.WriteString("writer:\n  spacing: 1ms\naccounts:\n")
	for a := 1; a < accounts; a++ {
		fmt.Fprintf(&cfg, "  - name: a%d\n", a)
	}
	cfg.WriteString("subscriptions:\n")
	for i := range subs {
		id, cal := fmt.Sprintf("s%04d", i), fmt.Sprintf("s%04d@example.com", i)
		w.fake.AddCalendar(cal, "UTC")
		w.calendars[id] = cal
		account := "default"
		if a := i % accounts; a > 0 {
			account = fmt.Sprintf("a%d", a)
		}
		fmt.Fprintf(&cfg, "  - id: %s\n    url: %s/%s.ics\n    calendar: %s\n    account: %s\n", id, feeds.URL, id, cal, account)
	}
	w.config = filepath.Join(w.dir, "config.yaml")
	if err := os.WriteFile(w.config, []byte(cfg.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return w
}

// scaleOutcome is what one `calsyncd sync` over every subscription left.
type scaleOutcome struct {
	failed     int // subscriptions whose run did not end ok (or did not run)
	errors     map[string]int
	events     int // live events in Google
	mapped     int // mappings in the database
	unrecorded int // events in Google that no mapping names
}

// check compares what Google holds with what the database recorded, and
// reads the runs out of `calsyncd sync --json`.
func (w *scaleWorld) check(tb testing.TB, syncJSON []byte) scaleOutcome {
	tb.Helper()
	var doc status.SyncDoc
	if err := json.Unmarshal(syncJSON, &doc); err != nil {
		tb.Fatalf("sync --json: %v\n%.2000s", err, syncJSON)
	}
	results := doc.Subscriptions
	o := scaleOutcome{errors: map[string]int{}}
	ran := map[string]bool{}
	for _, r := range results {
		ran[r.Subscription] = true
		if r.Run.Outcome != "ok" {
			o.failed++
			if r.Error != nil {
				o.errors[firstWords(r.Error.Detail)]++
			}
		}
	}
	for id := range w.calendars {
		if !ran[id] {
			o.failed++
			o.errors["did not run"]++
		}
	}
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(w.dir, "state", "calsyncd.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	for id, cal := range w.calendars {
		ms, err := st.Mappings(context.Background(), id)
		if err != nil {
			tb.Fatal(err)
		}
		mapped := map[string]bool{}
		for _, m := range ms {
			mapped[m.EventID] = true
		}
		o.mapped += len(ms)
		for _, ev := range w.fake.Events(cal) {
			o.events++
			if !mapped[ev.Id] {
				o.unrecorded++
			}
		}
	}
	return o
}

var subscriptionID = regexp.MustCompile(`s[0-9]{4}`)

// firstWords keeps the gist of an error for a tally.
func firstWords(s string) string {
	s = subscriptionID.ReplaceAllString(s, "sNNNN")
	if strings.Contains(s, "database is locked") {
		s = "... database is locked: " + s[:min(len(s), 50)]
	}
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// procSample is what a process's /proc status says of it.
type procSample struct {
	hwm     int64 // VmHWM, bytes
	threads int
}

func readProc(pid int) (procSample, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procSample{}, false
	}
	var s procSample
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))
		switch string(k) {
		case "VmHWM":
			kb, _ := strconv.ParseInt(string(v), 10, 64)
			s.hwm = kb << 10
		case "Threads":
			s.threads, _ = strconv.Atoi(string(v))
		}
	}
	return s, true
}

// watchProcess samples a child's peak resident set (the kernel's
// high-water mark) and its most threads until stop is closed.
func watchProcess(pid int, stop <-chan struct{}) func() procSample {
	var (
		mu   sync.Mutex
		peak procSample
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if s, ok := readProc(pid); ok {
				mu.Lock()
				peak.hwm = max(peak.hwm, s.hwm)
				peak.threads = max(peak.threads, s.threads)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() procSample {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// BenchmarkSyncScale runs one `calsyncd sync` (the real program, as a
// child process) over 1,000 subscriptions spread over 10 accounts against
// the emulator (writer.spacing 1ms, so Google's pacing does not hide the
// process's own limits), and reports:
//
//   - failed-runs: subscriptions whose run did not end ok;
//   - unrecorded: events Google holds that no mapping in the database
//     names (writes Google accepted that were not recorded);
//   - peak-RSS-MB: the process's resident high-water mark;
//   - peak-threads: the most OS threads it had at once (sampled every 2 ms);
//   - writes/s: events written per second of wall time.
//
// Run: go test -run '^$' -bench 'SyncScale/subs' -benchtime 1x ./cmd/calsyncd
//
// Its huge-feed sub-benchmarks measure one subscription of a feed of
// about 20 MiB of each feedgen shape instead (hugeFeeds):
//
//	go test -run '^$' -bench 'SyncScale/huge' -benchtime 1x -timeout 1h ./cmd/calsyncd
func BenchmarkSyncScale(b *testing.B) {
	b.Run("huge-feed", hugeFeeds)
	for _, events := range []int{200, 20} {
		b.Run(fmt.Sprintf("subs=1000/events=%d", events), func(b *testing.B) {
			var (
				o      scaleOutcome
				peak   procSample
				wall   time.Duration
				total  int
				errOut bytes.Buffer
			)
			for b.Loop() {
				w := newScaleWorld(b, 1000, events, 10)
				var out bytes.Buffer
				errOut.Reset()
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), "CALSYNCD_TEST_MAIN=1", "CALSYNCD_TEST_ARGS=sync --json --config "+w.config)
				cmd.Stdout, cmd.Stderr = &out, &errOut
				cmd.Dir = w.dir
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				stop := make(chan struct{})
				result := watchProcess(cmd.Process.Pid, stop)
				_ = cmd.Wait() // a failed subscription exits 1; check counts it
				wall = time.Since(start)
				close(stop)
				peak = result()
				if out.Len() == 0 {
					b.Fatalf("sync printed nothing: %.2000s", errOut.String())
				}
				o = w.check(b, out.Bytes())
				total = o.events
			}
			b.ReportMetric(float64(o.failed), "failed-runs")
			b.ReportMetric(float64(o.unrecorded), "unrecorded")
			b.ReportMetric(float64(peak.hwm)/(1<<20), "peak-RSS-MB")
			b.ReportMetric(float64(peak.threads), "peak-threads")
			b.ReportMetric(float64(total)/wall.Seconds(), "writes/s")
			if o.failed > 0 && len(o.errors) == 0 {
				b.Logf("stderr: %.2000s", errOut.String())
			}
			if len(o.errors) > 0 {
				b.Logf("failures by error: %v", o.errors)
			}
			b.Logf("%d events in Google, %d mappings, %d unrecorded, %s", o.events, o.mapped, o.unrecorded, wall.Round(time.Millisecond))
		})
	}
}

// TestAThousandSubscriptionsLoseNoRecord: one `calsyncd sync` over 1,000
// subscriptions of 10 accounts ends every run ok, and every write Google
// accepted is recorded: the emulator's accepted writes (all inserts, in a
// first sync) equal the database's mappings, and every event in Google is
// named by one.
func TestAThousandSubscriptionsLoseNoRecord(t *testing.T) {
	w := newScaleWorld(t, 1000, 3, 10)
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	if err := m.Run(context.Background(), []string{"sync", "--json", "--config", w.config}); err != nil {
		t.Errorf("sync: %v\n%.3000s", err, errOut.String())
	}
	o := w.check(t, out.Bytes())
	if o.failed != 0 {
		t.Errorf("%d runs did not end ok: %v", o.failed, o.errors)
	}
	accepted := w.fake.Stats().AcceptedWrites
	if o.unrecorded != 0 || o.mapped != accepted || o.events != 3000 {
		t.Errorf("Google accepted %d writes and holds %d events; the database maps %d, %d events unrecorded",
			accepted, o.events, o.mapped, o.unrecorded)
	}
}
