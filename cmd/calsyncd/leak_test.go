package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestNoSecretLeaks runs the daemon through fetch failures, an HTML answer,
// Google errors and a clean run, for a feed whose URL, header and password
// are secret, then searches every log line, the status JSON, the page and the
// metrics for any part of those secrets.
func TestNoSecretLeaks(t *testing.T) {
	secrets := []string{"private-0123abcd", "s3cret", "h3ader-secret-value", "b4sic-secret", "st4tus-token", "/calendar/ical/",
		"w3bhook-path", "w3bhook-key", "w3bhook-header"}

	// A webhook whose URL and header are secret too: the subscription's
	// two failures put it in ERROR (error_threshold 2), the clean run
	// takes it out.
	var hookMu sync.Mutex
	var alerts []string
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hookMu.Lock()
		defer hookMu.Unlock()
		if r.URL.Path != "/w3bhook-path" || r.URL.Query().Get("key") != "w3bhook-key" || r.Header.Get("X-Hook-Token") != "w3bhook-header" {
			t.Errorf("the webhook was called as %s %v", r.URL, r.Header)
		}
		alerts = append(alerts, string(b))
	}))
	defer hooks.Close()

	var feedMode atomic.Int32 // 0: 500, 1: HTML login page, 2: the feed
	team, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	var feedBody atomic.Value
	feedBody.Store(team)
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/calendar/ical/x/private-0123abcd/basic.ics" || r.URL.Query().Get("token") != "s3cret" ||
			r.Header.Get("X-Api-Key") != "h3ader-secret-value" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if _, pw, ok := r.BasicAuth(); !ok || pw != "b4sic-secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch feedMode.Load() {
		case 0:
			http.Error(w, "internal error", http.StatusInternalServerError)
		case 1:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!DOCTYPE html><html><head><title>Sign in</title></head><body>token=s3cret</body></html>")
		default:
			w.Write(feedBody.Load().([]byte))
		}
	}))
	defer feeds.Close()

	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	var googleMode atomic.Int32 // 1: rate-limit every insert
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if googleMode.Load() == 1 && (r.Method == http.MethodPost || r.Method == http.MethodPut) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":{"errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}],"code":403,"message":"Rate Limit Exceeded"}}`)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer api.Close()

	dir := t.TempDir()
	listen := freeAddr(t)
	t.Setenv("TEAM_FEED_URL", feeds.URL+"/calendar/ical/x/private-0123abcd/basic.ics?token=s3cret")
	t.Setenv("TEAM_KEY", "h3ader-secret-value")
	t.Setenv("TEAM_PASSWORD", "b4sic-secret")
	t.Setenv("STATUS_TOKEN", "st4tus-token")
	t.Setenv("HOOK_URL", hooks.URL+"/w3bhook-path?key=w3bhook-key")
	t.Setenv("HOOK_TOKEN", "w3bhook-header")
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
listen: `+listen+`
schedule: "@every 24h"
log:
  format: json
  level: debug
status:
  token: ${STATUS_TOKEN}
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
writer:
  spacing: 1ms
  max_attempts: 2
  max_retry_wait: 10ms
sync:
  error_threshold: 2
subscriptions:
  - id: team
    url: ${TEAM_FEED_URL}
    calendar: team@example.com
    headers:
      X-Api-Key: ${TEAM_KEY}
    basic_auth:
      username: me
      password: ${TEAM_PASSWORD}
alerts:
  - url: ${HOOK_URL}
    headers:
      X-Hook-Token: ${HOOK_TOKEN}
`)
	logs := &syncBuffer{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: logs, Stderr: logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{"run", "--config", cfg}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}()

	base := "http://" + listen
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer st4tus-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitUp := time.Now().Add(10 * time.Second)
	for {
		if _, err := http.Get(base + "/healthz"); err == nil {
			break
		}
		if time.Now().After(waitUp) {
			t.Fatalf("status endpoint never came up\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// syncNow triggers a run and waits for it to be recorded.
	syncNow := func(stage string) status.Run {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		var runID int64
		for runID == 0 {
			req, _ := http.NewRequest("POST", base+"/subscriptions/team/sync", nil)
			req.Header.Set("Authorization", "Bearer st4tus-token")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				RunID int64 `json:"run_id"`
			}
			json.NewDecoder(resp.Body).Decode(&res)
			resp.Body.Close()
			runID = res.RunID
			if time.Now().After(deadline) {
				t.Fatalf("%s: could not trigger a run", stage)
			}
			if runID == 0 {
				time.Sleep(5 * time.Millisecond) // a scheduled run holds the lock
			}
		}
		for {
			var rep status.Report
			if err := json.Unmarshal([]byte(get("/status")), &rep); err != nil {
				t.Fatal(err)
			}
			if r := rep.Subscriptions[0].LastRun; r != nil && r.ID == runID && r.FinishedAt != nil {
				return *r
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: run %d never finished\n%s", stage, runID, logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if r := syncNow("feed 500"); r.Outcome != "failed" {
		t.Errorf("feed 500: outcome %s", r.Outcome)
	}
	feedMode.Store(1)
	if r := syncNow("HTML"); r.Outcome != "failed" {
		t.Errorf("HTML: outcome %s", r.Outcome)
	}
	feedMode.Store(2)
	if r := syncNow("clean"); r.Outcome != "ok" || r.Created != 9 {
		t.Errorf("clean: outcome %s created %d", r.Outcome, r.Created)
	}
	// A change Google rate-limits is deferred (and the account's throttle
	// window opens, so this is the last stage).
	feedBody.Store([]byte(strings.Replace(string(team), "SUMMARY:Team offsite", "SUMMARY:Team offsite (moved)", 1)))
	googleMode.Store(1)
	if r := syncNow("rate limited"); r.Outcome != "deferred" || r.Deferred == 0 {
		t.Errorf("rate limited: outcome %s deferred %d", r.Outcome, r.Deferred)
	}

	// The alerts are delivered in the background.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		hookMu.Lock()
		n := len(alerts)
		hookMu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d alerts arrived, want 2 (error_entered, error_cleared)\n%s", n, logs.String())
		}
	}
	hookMu.Lock()
	alertText := strings.Join(alerts, "\n")
	if len(alerts) != 2 || !strings.Contains(alerts[0], `"error_entered"`) || !strings.Contains(alerts[1], `"error_cleared"`) {
		t.Errorf("alerts:\n%s", alertText)
	}
	hookMu.Unlock()

	surfaces := map[string]string{
		"alerts":   alertText,
		"logs":     logs.String(),
		"/status":  get("/status"),
		"/":        get("/"),
		"/metrics": get("/metrics"),
	}
	for name, text := range surfaces {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				i := strings.Index(text, s)
				t.Errorf("%s leaks %q: …%s…", name, s, text[max(0, i-80):min(len(text), i+40)])
			}
		}
	}
	feedHost := strings.TrimPrefix(feeds.URL, "http://")
	if !strings.Contains(surfaces["logs"], "http://"+feedHost+"/…") {
		t.Errorf("logs do not name the feed by scheme and host")
	}
	metrics := surfaces["/metrics"]
	for _, want := range []string{
		`calsyncd_feed_fetches_total{result="error",subscription="team"} 2`,
		`calsyncd_feed_fetches_total{result="ok",subscription="team"} 2`,
		`calsyncd_runs_total{outcome="deferred",subscription="team"} 1`,
		`calsyncd_runs_total{outcome="failed",subscription="team"} 2`,
		`calsyncd_subscription_state{state="ACTIVE",subscription="team"} 1`,
		`calsyncd_sync_duration_seconds_count{subscription="team"} 4`,
		`calsyncd_writes_total{op="create",outcome="ok",subscription="team"} 9`,
		`calsyncd_writes_total{op="update",outcome="deferred",subscription="team"} 1`,
		`calsyncd_deferred_writes_total{subscription="team"} 1`,
		`calsyncd_google_responses_total{account="default",class="rate_limited"}`,
		`calsyncd_pacer_spacing_seconds{account="default"}`,
		`calsyncd_alerts_sent_total{event="error_entered",result="sent"} 1`,
		`calsyncd_alerts_sent_total{event="auth_failed",result="sent"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		fmt.Println(metrics)
	}
}
