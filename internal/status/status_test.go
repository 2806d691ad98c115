package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixture builds a store with two subscriptions' worth of history.
func fixture(t *testing.T) (*store.Store, *config.Config) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := t0
	st.Now = func() time.Time { return now }
	cfg := config.Default()
	cfg.Subscriptions = []config.Subscription{
		{ID: "team", URL: "https://calendar.example.com/ical/x/private-0123abcd/basic.ics?token=s3cret", Calendar: "team@group.calendar.google.com"},
		{ID: "holidays", URL: "webcal://user:pw@holidays.example.org/feed.ics", Calendar: "holidays@group.calendar.google.com"},
	}
	for _, s := range cfg.Subscriptions {
		if _, err := st.EnsureSubscription(ctx, s.ID, s.Calendar, "default"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		now = t0.Add(time.Duration(i-3) * time.Hour)
		id, _ := st.StartRun(ctx, "team", now)
		outcome, deferred := calsyncd.OutcomeOK, 0
		if i == 1 {
			outcome, deferred = calsyncd.OutcomeDeferred, 40
		}
		if err := st.FinishRun(ctx, calsyncd.Run{ID: id, FinishedAt: now.Add(90 * time.Second), Outcome: outcome,
			Created: 10 * i, Updated: 2, Unchanged: 100, Deferred: deferred, Filtered: i}); err != nil {
			t.Fatal(err)
		}
	}
	now = t0
	team, _ := st.Subscription(ctx, "team")
	team.HeldDeletes, team.GuardRuns, team.Filtered = 12, 1, 4
	if err := st.SaveSubscription(ctx, team); err != nil {
		t.Fatal(err)
	}
	if err := st.SetNextRun(ctx, "team", t0.Add(40*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		_ = st.PutMapping(ctx, "team", calsyncd.Mapping{Key: calsyncd.Key{UID: string(rune('a' + i))}, EventID: "evid" + string(rune('a'+i)), Hash: "h"})
	}
	_ = st.PutRejection(ctx, "team", calsyncd.Rejection{Key: calsyncd.Key{UID: "bad@example.com"}, Hash: "h", Reason: "HTTP 400 invalid: Invalid recurrence rule."})
	hol, _ := st.Subscription(ctx, "holidays")
	hol.State, hol.ConsecutiveErrors, hol.LastErrorClass = calsyncd.StateError, 3, "feed_rejected"
	hol.LastError = "feed: the feed server answered 401 Unauthorized"
	if err := st.SaveSubscription(ctx, hol); err != nil {
		t.Fatal(err)
	}
	_ = st.SaveAccount(ctx, calsyncd.AccountState{Name: "default", ThrottleUntil: t0.Add(10 * time.Minute), ThrottleClass: "rate_limited", Spacing: 400 * time.Millisecond})
	if _, ok, err := st.ClaimLease(ctx, "default", "node-a/4242/beef", time.Minute); !ok || err != nil {
		t.Fatalf("lease: %v %v", ok, err)
	}
	// holidays' error alert reached no webhook.
	u := calsyncd.UndeliveredAlert("error", "holidays")
	u.Since, u.NotifiedAt = t0.Add(-time.Hour), t0.Add(-10*time.Minute)
	if err := st.SaveAlertState(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveAlertState(ctx, calsyncd.AlertState{Condition: "error", Subject: "holidays", Since: t0, NotifiedAt: t0}); err != nil {
		t.Fatal(err)
	}
	return st, cfg
}

// TestStatusSaysWhichAlertsWereNotDelivered: the table and the page name
// an alert no webhook took.
func TestStatusSaysWhichAlertsWereNotDelivered(t *testing.T) {
	st, cfg := fixture(t)
	rep, err := status.Build(context.Background(), st, cfg, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.UndeliveredAlerts) != 1 || rep.UndeliveredAlerts[0].Condition != "error" || rep.UndeliveredAlerts[0].Subject != "holidays" {
		t.Fatalf("undelivered alerts = %+v, want holidays' error alert alone", rep.UndeliveredAlerts)
	}
	var table, page bytes.Buffer
	if err := status.WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "the error alert for holidays could not be delivered") {
		t.Errorf("the table does not name the undelivered alert:\n%s", table.String())
	}
	if err := status.RenderPage(&page, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "the error alert for holidays reached no webhook") {
		t.Errorf("the page does not name the undelivered alert")
	}
}

func TestStatusJSONGolden(t *testing.T) {
	st, cfg := fixture(t)
	rep, err := status.Build(context.Background(), st, cfg, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := status.WriteJSON(&got, rep); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "status.golden.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("status JSON differs from %s (run with -update if intended):\n%s", golden, got.String())
	}
	for _, secret := range []string{"private-0123abcd", "s3cret", "user:pw", "/ical/"} {
		if strings.Contains(got.String(), secret) {
			t.Errorf("status JSON leaks %q", secret)
		}
	}
}

type fakeDaemon struct {
	running bool
	err     error
	runID   int64
	got     []string
	opts    []subscription.Options
}

func (f *fakeDaemon) Running() bool            { return f.running }
func (f *fakeDaemon) NextRun(string) time.Time { return t0.Add(time.Hour) }
func (f *fakeDaemon) Trigger(id string, opts subscription.Options) (int64, error) {
	f.got = append(f.got, id)
	f.opts = append(f.opts, opts)
	return f.runID, f.err
}

func server(t *testing.T, d *fakeDaemon, token string) (*httptest.Server, *store.Store) {
	t.Helper()
	st, cfg := fixture(t)
	srv := status.NewServer(status.ServerOptions{Source: st, Config: func() *config.Config { return cfg }, Daemon: d,
		Metrics: status.NewMetrics(), Token: token, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return t0 }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, st
}

func do(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHealthz(t *testing.T) {
	d := &fakeDaemon{running: true}
	ts, st := server(t, d, "")
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("healthy: %d %q", code, body)
	}
	d.running = false
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 503 || !strings.Contains(body, "scheduler") {
		t.Errorf("scheduler stopped: %d %q", code, body)
	}
	d.running = true
	st.Close()
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 503 || !strings.Contains(body, "database") {
		t.Errorf("database closed: %d %q", code, body)
	}
}

// TestHealthzDegradesWhenTheStateDirectoryIsUnwritable (a lock
// directory the daemon could not write left /healthz ok).
func TestHealthzDegradesWhenTheStateDirectoryIsUnwritable(t *testing.T) {
	st, cfg := fixture(t)
	var writable error
	srv := status.NewServer(status.ServerOptions{Source: st, Config: func() *config.Config { return cfg }, Daemon: &fakeDaemon{running: true},
		Metrics: status.NewMetrics(), Log: slog.New(slog.DiscardHandler), StateWritable: func() error { return writable }})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 200 {
		t.Errorf("writable: %d %q", code, body)
	}
	writable = errors.New("subscription: lock directory: mkdir /var/lib/calsyncd/locks: permission denied")
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 503 || !strings.Contains(body, "state directory") {
		t.Errorf("unwritable: %d %q", code, body)
	}
}

func TestTriggerEndpoint(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int
	}{
		{"accepted", nil, http.StatusAccepted},
		{"unknown", subscription.ErrUnknownSubscription, http.StatusNotFound},
		{"busy", subscription.ErrBusy, http.StatusConflict},
		{"stopping", subscription.ErrStopping, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDaemon{running: true, err: tt.err, runID: 42}
			ts, _ := server(t, d, "")
			code, body := do(t, "POST", ts.URL+"/subscriptions/team/sync", "")
			if code != tt.code || len(d.got) != 1 || d.got[0] != "team" {
				t.Fatalf("code %d body %s triggered %v", code, body, d.got)
			}
			if tt.err == nil {
				var res struct {
					RunID int64 `json:"run_id"`
				}
				if err := json.Unmarshal([]byte(body), &res); err != nil || res.RunID != 42 {
					t.Fatalf("body %s", body)
				}
			}
		})
	}
	ts, _ := server(t, &fakeDaemon{running: true}, "")
	if code, _ := do(t, "GET", ts.URL+"/subscriptions/team/sync", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET on the trigger: %d, want 405", code)
	}
}

func TestTokenIsEnforced(t *testing.T) {
	ts, _ := server(t, &fakeDaemon{running: true, runID: 1}, "let-me-in")
	for _, path := range []string{"/status", "/metrics", "/", "/subscriptions/team/sync"} {
		method := "GET"
		if strings.HasSuffix(path, "/sync") {
			method = "POST"
		}
		if code, _ := do(t, method, ts.URL+path, ""); code != 401 {
			t.Errorf("%s without token: %d, want 401", path, code)
		}
		if code, _ := do(t, method, ts.URL+path, "wrong"); code != 401 {
			t.Errorf("%s with a wrong token: %d, want 401", path, code)
		}
		if code, _ := do(t, method, ts.URL+path, "let-me-in"); code != 200 && code != 202 {
			t.Errorf("%s with the token: %d", path, code)
		}
	}
	if code, _ := do(t, "GET", ts.URL+"/healthz", ""); code != 200 {
		t.Errorf("/healthz needs no token: %d", code)
	}
}

func TestCheckListen(t *testing.T) {
	for _, tt := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8765", "", true}, {"[::1]:8765", "", true}, {"localhost:8765", "", true},
		{"0.0.0.0:8765", "", false}, {":8765", "", false}, {"192.0.2.10:8765", "", false},
		{"0.0.0.0:8765", "tok", true},
	} {
		err := status.CheckListen(tt.addr, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckListen(%q, token=%v) = %v", tt.addr, tt.token != "", err)
		}
	}
}

func TestStatusPage(t *testing.T) {
	ts, _ := server(t, &fakeDaemon{running: true}, "")
	code, body := do(t, "GET", ts.URL+"/", "")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	for _, want := range []string{`id="sub-team"`, `id="sub-holidays"`, "<svg", `class="d"`, "12 deletes held", "ERROR",
		"https://calendar.example.com/…", "4 filtered out"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "s3cret") || strings.Contains(body, "private-0123abcd") {
		t.Error("page leaks the feed URL")
	}
	// Three runs of team: three bar groups in its chart.
	row := body[strings.Index(body, `id="sub-team"`):]
	row = row[:strings.Index(row, "</section>")]
	if n := strings.Count(row, `<g class="run `); n != 3 {
		t.Errorf("team's chart has %d bars, want 3", n)
	}
}

func TestWriteTable(t *testing.T) {
	st, cfg := fixture(t)
	rep, err := status.Build(context.Background(), st, cfg, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := status.WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"SUBSCRIPTION", "FILTERED", "team", "holidays", "ERROR", "feed_rejected", "rejected by Google", "rate_limited", "400ms", "node-a/4242/beef"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
