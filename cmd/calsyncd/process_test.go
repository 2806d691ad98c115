package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
)

// TestMain lets the test binary stand in for calsyncd: with
// CALSYNCD_TEST_MAIN=1 it runs main() instead of the tests, so process
// tests exercise the real program (built with the same flags, -race
// included) without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("CALSYNCD_TEST_MAIN") == "1" {
		os.Args = append([]string{"calsyncd"}, strings.Fields(os.Getenv("CALSYNCD_TEST_ARGS"))...)
		profileNearPeak()
		main()
		return
	}
	os.Exit(m.Run())
}

// calsyncdCmd prepares the program as a child process.
func calsyncdCmd(t *testing.T, stderr io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CALSYNCD_TEST_MAIN=1", "CALSYNCD_TEST_ARGS="+strings.Join(args, " "))
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	return cmd
}

// generatedFeed is an ICS feed of n timed events.
func generatedFeed(n int) string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd tests//EN\r\n")
	start := time.Date(2027, 3, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		s := start.Add(time.Duration(i) * 3 * time.Hour)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:event-%04d@example.com\r\nDTSTAMP:20261129T000000Z\r\nDTSTART:%s\r\nDTEND:%s\r\nSUMMARY:Event %d\r\nEND:VEVENT\r\n",
			i, s.Format("20060102T150405Z"), s.Add(time.Hour).Format("20060102T150405Z"), i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.String()
}

type world struct {
	fake   *gcalfake.Server
	api    *httptest.Server
	feeds  *httptest.Server
	dir    string
	config string
}

// newWorld starts an emulator (which answers writes writeDelay after
// applying them) and a
// feed server for one subscription, and writes a config for them.
func newWorld(t *testing.T, feed string, writeDelay time.Duration, extra string) *world {
	t.Helper()
	w := &world{fake: gcalfake.New(gcalfake.Options{Seed: 11}), dir: t.TempDir()}
	w.fake.AddCalendar("team@example.com", "UTC")
	w.api = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || writeDelay == 0 {
			w.fake.ServeHTTP(rw, r)
			return
		}
		// Apply the write at once but answer late: a process killed in
		// between has a write in Google it never heard about.
		rec := httptest.NewRecorder()
		w.fake.ServeHTTP(rec, r)
		time.Sleep(writeDelay)
		for k, v := range rec.Header() {
			rw.Header()[k] = v
		}
		rw.WriteHeader(rec.Code)
		rw.Write(rec.Body.Bytes())
	}))
	t.Cleanup(w.api.Close)
	w.feeds = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(feed))
	}))
	t.Cleanup(w.feeds.Close)
	w.config = writeFile(t, w.dir, "config.yaml", `state_dir: state
listen: `+freeAddr(t)+`
log:
  format: json
google:
  endpoint: `+w.api.URL+gcalfake.BasePath+`
writer:
  spacing: 1ms
subscriptions:
  - id: team
    url: `+w.feeds.URL+`/team.ics
    calendar: team@example.com
`+extra)
	return w
}

// checkMirror asserts the calendar holds exactly the n feed events, once
// each.
func (w *world) checkMirror(t *testing.T, n int) {
	t.Helper()
	seen := map[string]string{}
	for _, ev := range w.fake.Events("team@example.com") {
		if sub, _, ok := gcalwriter.Marks(ev); !ok || sub != "team" {
			t.Errorf("unowned event in the calendar: %s", gcalfake.String(ev))
			continue
		}
		uid := ev.ExtendedProperties.Private[gcalwriter.PropUID]
		if prev, dup := seen[uid]; dup {
			t.Errorf("duplicate of %s: %s and %s", uid, prev, ev.Id)
		}
		seen[uid] = ev.Id
		var i int
		if _, err := fmt.Sscanf(uid, "event-%04d@example.com", &i); err != nil || ev.Summary != fmt.Sprintf("Event %d", i) {
			t.Errorf("event %s has summary %q", uid, ev.Summary)
		}
	}
	if len(seen) != n {
		t.Errorf("calendar holds %d distinct events, want %d", len(seen), n)
	}
}

func TestCrashSafetyUnderSIGKILL(t *testing.T) {
	const n = 250
	w := newWorld(t, generatedFeed(n), 2*time.Millisecond, "")
	rng := rand.New(rand.NewPCG(2026, 11))
	kills := 0
	for i := 0; i < 8; i++ {
		var out bytes.Buffer
		cmd := calsyncdCmd(t, &out, "sync", "--config", w.config)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until writes have begun, then kill at a random moment.
		before := w.fake.Stats().ByOp["insert"] + w.fake.Stats().ByOp["update"]
		deadline := time.Now().Add(10 * time.Second)
		for w.fake.Stats().ByOp["insert"]+w.fake.Stats().ByOp["update"] == before && time.Now().Before(deadline) {
			if cmd.ProcessState != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err == nil {
			kills++
		}
		cmd.Wait()
		t.Logf("run %d: inserts so far %d, 409s %d", i, w.fake.Stats().ByOp["insert"], w.fake.Stats().Errors[409])
	}
	var out bytes.Buffer
	if err := calsyncdCmd(t, &out, "sync", "--config", w.config).Run(); err != nil {
		t.Fatalf("final sync: %v\n%s", err, out.String())
	}
	if kills == 0 {
		t.Fatal("no run was killed mid-way; the test proved nothing")
	}
	w.checkMirror(t, n)
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(w.dir, "state", "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if m, _ := st.CountMappings(context.Background(), "team"); m != n {
		t.Errorf("mappings = %d, want %d", m, n)
	}
	t.Logf("%d runs killed mid-way; %d inserts, %d updates, %d answered 409", kills,
		w.fake.Stats().ByOp["insert"], w.fake.Stats().ByOp["update"], w.fake.Stats().Errors[409])
}

func TestLostStateDirectoryRebuildsWithoutDuplicates(t *testing.T) {
	const n = 40
	w := newWorld(t, generatedFeed(n), 0, "")
	var out bytes.Buffer
	if err := calsyncdCmd(t, &out, "sync", "--config", w.config).Run(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out.String())
	}
	if err := os.RemoveAll(filepath.Join(w.dir, "state")); err != nil {
		t.Fatal(err)
	}
	w.fake.ResetStats()
	out.Reset()
	if err := calsyncdCmd(t, &out, "sync", "--config", w.config).Run(); err != nil {
		t.Fatalf("sync after losing the state directory: %v\n%s", err, out.String())
	}
	w.checkMirror(t, n)
	// Rebuilt from one listing of what we own: no writes at all.
	if s := w.fake.Stats(); s.ByOp["insert"]+s.ByOp["update"]+s.ByOp["delete"] != 0 {
		t.Errorf("rebuilding wrote to Google: %v", s.ByOp)
	}
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(w.dir, "state", "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if m, _ := st.CountMappings(context.Background(), "team"); m != n {
		t.Errorf("mappings rebuilt = %d, want %d", m, n)
	}
}

func TestSIGTERMFinishesInFlightWritesAndExitsZero(t *testing.T) {
	const n = 300
	w := newWorld(t, generatedFeed(n), 4*time.Millisecond, "schedule: '@every 1s'\n")
	var out bytes.Buffer
	cmd := calsyncdCmd(t, &out, "run", "--config", w.config)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for w.fake.Stats().ByOp["insert"] < 20 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the daemon never started writing\n%s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the daemon did not stop after SIGTERM\n%s", out.String())
	}
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(w.dir, "state", "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.Mappings(context.Background(), "team")
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[string]bool{}
	for _, m := range ms {
		mapped[m.EventID] = true
	}
	live := w.fake.Events("team@example.com")
	for _, ev := range live {
		if !mapped[ev.Id] {
			t.Errorf("event %s is in Google but was not persisted", ev.Id)
		}
	}
	if len(live) != len(ms) {
		t.Errorf("Google holds %d events, the database maps %d", len(live), len(ms))
	}
	if len(live) >= n {
		t.Errorf("all %d events were written: SIGTERM did not interrupt the run, so the test proved nothing", n)
	}
	runs, _ := st.Runs(context.Background(), "team", 1)
	if len(runs) != 1 || runs[0].Outcome != calsyncd.OutcomeDeferred || runs[0].FinishedAt.IsZero() {
		t.Errorf("interrupted run recorded as %+v, want a finished deferred run", runs)
	}
	if !strings.Contains(out.String(), "calsyncd stopped") {
		t.Errorf("no clean stop in the log:\n%s", out.String())
	}
}

func TestSIGHUPReloadsTheConfiguration(t *testing.T) {
	w := newWorld(t, generatedFeed(5), 0, "schedule: '@every 1s'\n")
	w.fake.AddCalendar("second@example.com", "UTC")
	out := &syncBuffer{}
	cmd := calsyncdCmd(t, out, "run", "--config", w.config)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the first subscription", func() bool { return len(w.fake.Events("team@example.com")) == 5 })
	// A broken file is refused and the running configuration kept.
	good, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(w.config, []byte(strings.Replace(string(good), "subscriptions:\n", "subscriptions:\n  - id: Broken ID\n", 1)), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the broken reload to be refused", func() bool { return strings.Contains(out.String(), "reload refused") })
	// A second subscription is added.
	os.WriteFile(w.config, []byte(strings.Replace(string(good), "subscriptions:\n",
		"subscriptions:\n  - id: second\n    url: "+w.feeds.URL+"/second.ics\n    calendar: second@example.com\n", 1)), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the added subscription", func() bool { return len(w.fake.Events("second@example.com")) == 5 })
	if !strings.Contains(out.String(), "configuration reloaded") {
		t.Errorf("no reload in the log:\n%s", out.String())
	}
}

// A reload reads the included files again: a subscription added to one
// is synced, and an error in one refuses the reload naming that file,
// its line and its key.
func TestSIGHUPReloadsIncludedFiles(t *testing.T) {
	w := newWorld(t, generatedFeed(5), 0, "schedule: '@every 1s'\ninclude: [subscriptions.d]\n")
	w.fake.AddCalendar("second@example.com", "UTC")
	if err := os.Mkdir(filepath.Join(w.dir, "subscriptions.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	included := writeFile(t, w.dir, "subscriptions.d/more.yaml", "subscriptions: []\n")
	out := &syncBuffer{}
	cmd := calsyncdCmd(t, out, "run", "--config", w.config)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the main file's subscription", func() bool { return len(w.fake.Events("team@example.com")) == 5 })
	second := "subscriptions:\n  - id: second\n    url: " + w.feeds.URL + "/second.ics\n    calendar: second@example.com\n"
	os.WriteFile(included, []byte(second), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the included subscription", func() bool { return len(w.fake.Events("second@example.com")) == 5 })
	os.WriteFile(included, []byte(second+"  - id: Broken ID\n    url: "+w.feeds.URL+"/third.ics\n    calendar: second@example.com\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the broken reload to be refused", func() bool { return strings.Contains(out.String(), "reload refused") })
	if want := included + ":5: subscriptions[1].id: must be lowercase"; !strings.Contains(out.String(), want) {
		t.Errorf("the refusal does not say %q:\n%s", want, out.String())
	}
}
