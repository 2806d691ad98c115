package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
	"github.com/robfig/cron/v3"
)

// daemonScaleSizes are the daemons BenchmarkDaemonScale builds: the
// largest has tiny feeds so its first sync stays in minutes.
var daemonScaleSizes = []struct{ subs, events, accounts int }{
	{1000, 20, 10},
	{10000, 20, 10},
	{100000, 2, 100},
}

// subscriptionsPerFile is how many subscriptions each included file of a
// large configuration holds (well inside the 1 MiB a file may have).
const subscriptionsPerFile = 5000

// daemonWorld is one emulator, one feed server that sends no validators
// (no ETag, no Last-Modified: every run fetches the whole body, as with
// file:// feeds) and a configuration of many subscriptions, included from
// files of subscriptionsPerFile each.
type daemonWorld struct {
	dir, config, listen string
	subs                int
	changed             atomic.Bool // every 100th feed serves its changed body
}

func newDaemonWorld(tb testing.TB, subs, events, accounts int) *daemonWorld {
	tb.Helper()
	w := &daemonWorld{dir: tb.TempDir(), subs: subs}
	fake := gcalfake.New(gcalfake.Options{Seed: 27})
	api := httptest.NewServer(fake)
	tb.Cleanup(api.Close)
	body := []byte(generatedFeed(events))
	edited := bytes.Replace(body, []byte("SUMMARY:Event 0\r\n"), []byte("SUMMARY:Event 0 (moved)\r\n"), 1)
	feeds := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/s"), ".ics"))
		if w.changed.Load() && n%100 == 0 {
			rw.Write(edited)
			return
		}
		rw.Write(body)
	}))
	tb.Cleanup(feeds.Close)
	w.listen = freeAddr(tb)

	var cfg strings.Builder
	fmt.Fprintf(&cfg, "state_dir: state\nlisten: %s\nlog:\n  format: json\n  level: warn\ngoogle:\n  endpoint: %s%s\n",
		w.listen, api.URL, gcalfake.BasePath)
	cfg.WriteString("writer:\n  spacing: 1ms\naccounts:\n")
	for a := 1; a < accounts; a++ {
		fmt.Fprintf(&cfg, "  - name: a%d\n", a)
	}
	var list strings.Builder
	flush := func(file int) {
		name := filepath.Join(w.dir, fmt.Sprintf("subscriptions-%03d.yaml", file))
		if err := os.WriteFile(name, []byte("subscriptions:\n"+list.String()), 0o600); err != nil {
			tb.Fatal(err)
		}
		list.Reset()
	}
	for i := range subs {
		id, cal := fmt.Sprintf("s%06d", i), fmt.Sprintf("s%06d@example.com", i)
		fake.AddCalendar(cal, "UTC")
		account := "default"
		if a := i % accounts; a > 0 {
			account = fmt.Sprintf("a%d", a)
		}
		fmt.Fprintf(&list, "  - id: %s\n    url: %s/%s.ics\n    calendar: %s\n    account: %s\n", id, feeds.URL, id, cal, account)
		if subs > subscriptionsPerFile && (i+1)%subscriptionsPerFile == 0 {
			flush(i / subscriptionsPerFile)
		}
	}
	if subs > subscriptionsPerFile {
		if list.Len() > 0 {
			flush(subs / subscriptionsPerFile)
		}
		cfg.WriteString("include:\n  - subscriptions-*.yaml\n")
	} else {
		cfg.WriteString("subscriptions:\n" + list.String())
	}
	w.config = filepath.Join(w.dir, "config.yaml")
	if err := os.WriteFile(w.config, []byte(cfg.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return w
}

// spreadLastRuns makes each subscription's last run the one a daemon
// running for hours would have made: at its last hourly tick shifted by
// its phase. (Just after the first sync, every subscription ran in the
// last minutes, and none would be due for half an hour.)
func (w *daemonWorld) spreadLastRuns(tb testing.TB) {
	tb.Helper()
	base, err := cron.ParseStandard("@hourly")
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	cadence := subscription.NewCadence(base, now)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(w.dir, "state", "calsyncd.db")+"?_busy_timeout=10000")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	hour := now.Truncate(time.Hour)
	for i := range w.subs {
		id := fmt.Sprintf("s%06d", i)
		last := hour.Add(cadence.Phase(id))
		if last.After(now) {
			last = last.Add(-time.Hour)
		}
		if _, err := tx.Exec("UPDATE subscriptions SET updated_at = ? WHERE id = ?", last.UnixMilli(), id); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// child is calsyncd as a child process of the benchmark.
func (w *daemonWorld) child(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CALSYNCD_TEST_MAIN=1", "CALSYNCD_TEST_ARGS="+strings.Join(append(args, "--config", w.config), " "))
	cmd.Dir = w.dir
	return cmd
}

func (w *daemonWorld) db(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(w.dir, "state", "calsyncd.db")+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

func count(tb testing.TB, db *sql.DB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// procStat is a process's CPU time and memory as /proc tells them.
type procStat struct {
	cpu     time.Duration // user + system
	rss     int64         // VmRSS, bytes
	hwm     int64         // VmHWM, bytes
	threads int
}

func readProcStat(tb testing.TB, pid int) procStat {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The fields after the command's name (which may hold spaces, in
	// parentheses): state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	s := procStat{cpu: time.Duration(utime+stime) * time.Second / clockTicks}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.SplitSeq(string(st), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "VmRSS":
			s.rss = n << 10
		case "VmHWM":
			s.hwm = n << 10
		case "Threads":
			s.threads = int(n)
		}
	}
	return s
}

// get fetches a status endpoint of the daemon, timing it.
func (w *daemonWorld) get(tb testing.TB, path string) ([]byte, time.Duration) {
	tb.Helper()
	start := time.Now()
	resp, err := http.Get("http://" + w.listen + path)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %s %v: %.300s", path, resp.Status, err, b)
	}
	return b, time.Since(start)
}

// walkStatus reads every subscription through /status a page at a time
// (limit 1000, following next_after), and says how many it saw.
func (w *daemonWorld) walkStatus(tb testing.TB) (int, time.Duration) {
	tb.Helper()
	seen, took := 0, time.Duration(0)
	after := ""
	for {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after", after)
		}
		b, d := w.get(tb, "/status?"+q.Encode())
		took += d
		var page struct {
			Subscriptions []json.RawMessage `json:"subscriptions"`
			NextAfter     string            `json:"next_after"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			tb.Fatal(err)
		}
		seen += len(page.Subscriptions)
		if page.NextAfter == "" || len(page.Subscriptions) == 0 {
			return seen, took
		}
		after = page.NextAfter
	}
}

// waitHealthy waits until the daemon's status endpoint answers.
func (w *daemonWorld) waitHealthy(tb testing.TB, cmd *exec.Cmd, errOut *bytes.Buffer) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + w.listen + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("the daemon's status endpoint never answered: %.2000s", errOut.String())
}

// settle waits out the runs a restarted daemon makes at once (those whose
// run was due while it was down, or within the jitter of its start), until
// a 5-second span starts no more runs than three times the hourly
// schedule's rate, and says how many there were.
func (w *daemonWorld) settle(tb testing.TB, db *sql.DB, started time.Time) int {
	tb.Helper()
	const span = 5 * time.Second
	steady := max(3, 3*w.subs*int(span/time.Second)/3600)
	from := started.UnixMilli()
	runs := func() int { return count(tb, db, "SELECT COUNT(*) FROM runs WHERE started_at >= ?", from) }
	// The daemon answers before it has scheduled every subscription: wait
	// for its first run, then for the rate to fall.
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); {
		before := runs()
		time.Sleep(span)
		if n := runs(); n > 0 && n-before <= steady {
			break
		}
	}
	return count(tb, db, "SELECT COUNT(*) FROM runs WHERE started_at >= ?", from)
}

// benchWindow is how long BenchmarkDaemonScale watches the daemon
// (CALSYNCD_BENCH_WINDOW, default 3m).
func benchWindow(tb testing.TB) time.Duration {
	if s := os.Getenv("CALSYNCD_BENCH_WINDOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			tb.Fatal(err)
		}
		return d
	}
	return 3 * time.Minute
}

// BenchmarkDaemonScale builds one daemon of 1,000, 10,000 and 100,000
// subscriptions (the configuration in included files of 5,000), runs the
// first `calsyncd sync` (the real program, a child process), changes 1%
// of the feeds, starts `calsyncd run` and watches it for a window of wall
// time (CALSYNCD_BENCH_WINDOW, default 3m) as it runs its hourly
// schedule, spread over the hour. It reports:
//
//   - sync-s, sync-peak-RSS-MB: the first sync's wall time and peak RSS;
//   - restart-runs, restart-s: the runs the started daemon makes at once
//     (those due while it was down or within the jitter of its start) and
//     how long until they are done (see settle); the window starts after;
//   - core-%: the daemon's CPU (user + system) over the window, in
//     percent of one core; runs: the runs it finished in the window;
//     cpu-ms/run: that CPU over those runs (idle time included, so an
//     upper bound of what one run costs);
//   - rss-MB, peak-RSS-MB, threads: at the end of the window;
//   - status-ms, status-KB: one GET /status (its first page);
//     walk-s: every subscription through /status, 1,000 a page;
//     page-ms: GET / (the status page); metrics-ms, metrics-KB: one
//     scrape; rss-after-MB: the daemon's RSS after these;
//   - db-B/mapping: the state database's size over its mappings.
//
// Run (the largest size's first sync takes minutes):
//
//	go test -run '^$' -bench 'DaemonScale/subs=10000$' -benchtime 1x -timeout 60m ./cmd/calsyncd
//
// CALSYNCD_BENCH_DAEMON_CPUPROFILE=FILE profiles the daemon's CPU (see
// profileCPU for when).
func BenchmarkDaemonScale(b *testing.B) {
	for _, size := range daemonScaleSizes {
		b.Run(fmt.Sprintf("subs=%d", size.subs), func(b *testing.B) {
			for b.Loop() {
				daemonScale(b, size.subs, size.events, size.accounts)
			}
		})
	}
}

func daemonScale(b *testing.B, subs, events, accounts int) {
	w := newDaemonWorld(b, subs, events, accounts)

	var out, errOut bytes.Buffer
	first := w.child("sync", "--json")
	first.Stdout, first.Stderr = &out, &errOut
	start := time.Now()
	if err := first.Start(); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	peak := watchProcess(first.Process.Pid, stop)
	_ = first.Wait() // a failed subscription exits 1; counted below
	syncWall := time.Since(start)
	close(stop)
	syncPeak := peak()
	var doc status.SyncDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		b.Fatalf("sync --json: %v\n%.2000s", err, errOut.String())
	}
	failed := subs - len(doc.Subscriptions)
	for _, r := range doc.Subscriptions {
		if r.Run.Outcome != "ok" {
			failed++
		}
	}
	db := w.db(b)
	defer db.Close()
	mappings := count(b, db, "SELECT COUNT(*) FROM mappings")
	if failed > 0 || mappings != subs*events {
		b.Fatalf("first sync: %d runs did not end ok, %d mappings of %d events: %.2000s", failed, mappings, subs*events, errOut.String())
	}

	w.spreadLastRuns(b)
	w.changed.Store(true)
	errOut.Reset()
	daemon := w.child("run")
	if p := os.Getenv("CALSYNCD_BENCH_DAEMON_CPUPROFILE"); p != "" {
		daemon.Env = append(daemon.Env, "CALSYNCD_BENCH_CPUPROFILE="+p)
	}
	daemon.Stdout, daemon.Stderr = &errOut, &errOut
	if err := daemon.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		daemon.Process.Signal(syscall.SIGTERM)
		daemon.Wait()
	}()
	w.waitHealthy(b, daemon, &errOut)
	pid := daemon.Process.Pid
	started, startCPU := time.Now(), readProcStat(b, pid).cpu
	burst := w.settle(b, db, started)
	settled := time.Since(started)
	startCPU = readProcStat(b, pid).cpu - startCPU
	window := benchWindow(b)
	t0, s0 := time.Now(), readProcStat(b, pid)
	time.Sleep(window)
	s1 := readProcStat(b, pid)
	wall := time.Since(t0)
	runs := count(b, db, "SELECT COUNT(*) FROM runs WHERE started_at >= ? AND finished_at > 0", t0.UnixMilli())
	updated := count(b, db, "SELECT COUNT(*) FROM runs WHERE started_at >= ? AND updated > 0", t0.UnixMilli())
	failedRuns := count(b, db, "SELECT COUNT(*) FROM runs WHERE started_at >= ? AND finished_at > 0 AND outcome NOT IN ('ok', 'not_modified')", t0.UnixMilli())
	unchanged := count(b, db, "SELECT COUNT(*) FROM runs WHERE started_at >= ? AND outcome = 'not_modified'", t0.UnixMilli())
	cpu := s1.cpu - s0.cpu

	first1, statusTook := w.get(b, "/status")
	walked, walkTook := w.walkStatus(b)
	if walked != subs {
		b.Errorf("walking /status saw %d subscriptions of %d", walked, subs)
	}
	_, pageTook := w.get(b, "/")
	metrics, metricsTook := w.get(b, "/metrics")
	after := readProcStat(b, pid)

	var dbBytes int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(filepath.Join(w.dir, "state", "calsyncd.db"+suffix)); err == nil {
			dbBytes += fi.Size()
		}
	}

	const mb = 1 << 20
	b.ReportMetric(syncWall.Seconds(), "sync-s")
	b.ReportMetric(float64(burst), "restart-runs")
	b.ReportMetric(settled.Seconds(), "restart-s")
	b.ReportMetric(float64(syncPeak.hwm)/mb, "sync-peak-RSS-MB")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "core-%")
	b.ReportMetric(float64(runs), "runs")
	if runs > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(runs), "cpu-ms/run")
	}
	b.ReportMetric(float64(s1.rss)/mb, "rss-MB")
	b.ReportMetric(float64(s1.hwm)/mb, "peak-RSS-MB")
	b.ReportMetric(float64(s1.threads), "threads")
	b.ReportMetric(float64(statusTook.Microseconds())/1000, "status-ms")
	b.ReportMetric(float64(len(first1))/1024, "status-KB")
	b.ReportMetric(walkTook.Seconds(), "walk-s")
	b.ReportMetric(float64(pageTook.Microseconds())/1000, "page-ms")
	b.ReportMetric(float64(metricsTook.Microseconds())/1000, "metrics-ms")
	b.ReportMetric(float64(len(metrics))/1024, "metrics-KB")
	b.ReportMetric(float64(after.rss)/mb, "rss-after-MB")
	b.ReportMetric(float64(dbBytes)/float64(mappings), "db-B/mapping")
	b.Logf("restarted, it ran %d subscriptions at once, in %s and %s of CPU", burst, settled.Round(time.Second), startCPU)
	b.Logf("%d subscriptions × %d events: first sync %s; %d runs in %s (%d unchanged, %d wrote an update, %d neither ok nor unchanged), %s CPU",
		subs, events, syncWall.Round(time.Second), runs, wall.Round(time.Second), unchanged, updated, failedRuns, cpu)
	if failedRuns > 0 {
		b.Logf("daemon output: %.2000s", errOut.String())
	}
}
