package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/status"
)

// `calsyncd demo --config` runs a person's own subscriptions — a file://
// feed and an http one, on calendar ids of their choosing — against the
// built-in emulator, with the status page, while their credentials,
// store, state directory and alerts stay untouched.
func TestDemoWithConfig(t *testing.T) {
	dir := t.TempDir()
	team, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	outlook, err := os.ReadFile("../../testdata/feeds/outlook.ics")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "team.ics", string(team))
	var feedHits, alertHits atomic.Int32
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/gone.ics") {
			http.NotFound(w, r)
			return
		}
		feedHits.Add(1)
		w.Write(outlook)
	}))
	defer feeds.Close()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { alertHits.Add(1) }))
	defer hooks.Close()
	// The real state: a database and a token that must come out as they
	// went in.
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	writeFile(t, state, "calsyncd.db", "not a database: opening it would fail")
	writeFile(t, state, "token-default.json", `{"access_token":"demo-access-secret","refresh_token":"demo-refresh-secret"}`)
	before := stateHash(t, state)
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  credentials_file: /nonexistent/client.json
accounts:
  - name: work
    credentials_file: ${CALSYNCD_DEMO_TEST_UNSET}
store:
  driver: postgres
  dsn: postgres://calsyncd:${CALSYNCD_DEMO_TEST_UNSET}@127.0.0.1:1/calsyncd
alerts:
  - url: `+hooks.URL+`/hook
# One failure turns a subscription ERROR, which the alerts would announce.
sync:
  error_threshold: 1
subscriptions:
  - id: team
    url: file://`+filepath.Join(dir, "team.ics")+`
    calendar: primary
  - id: outlook
    url: `+feeds.URL+`/secret-token/outlook.ics
    calendar: anything-at-all@group.calendar.google.com
    account: work
  - id: gone
    url: `+feeds.URL+`/gone.ics
    calendar: primary
`)

	pr, pw := io.Pipe()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var stderr syncBuffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []string{"demo", "--config", cfg, "--listen", "127.0.0.1:0"})
		pw.Close()
	}()

	var out []string
	found := map[string]string{}
	patterns := map[string]*regexp.Regexp{
		"page":     regexp.MustCompile(`^status page: (http://127\.0\.0\.1:\d+/)$`),
		"emulator": regexp.MustCompile(`^emulator: +(http://127\.0\.0\.1:\d+/calendar/v3/) `),
		"tmp":      regexp.MustCompile(`keeps its state in (\S+), removed at exit`),
	}
	for l := range lines {
		out = append(out, l)
		for k, re := range patterns {
			if m := re.FindStringSubmatch(l); m != nil {
				found[k] = m[1]
			}
		}
		if strings.HasPrefix(l, "first sync done") {
			break
		}
	}
	text := strings.Join(out, "\n")
	if len(found) != len(patterns) {
		t.Fatalf("stdout lacks the status page, the emulator or the state directory (%v):\n%s\n%s", found, text, stderr.String())
	}
	for _, want := range []string{
		"first sync done: 2 of 3 subscriptions synced",
		"gone → primary: failed: ",
		"team → primary: 9 created",
		"outlook → anything-at-all@group.calendar.google.com: 4 created",
		"the Google credentials (google:, accounts:): not read",
		"store: not opened",
		"alerts: 1 configured, none is sent",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks %q:\n%s", want, text)
		}
	}

	// The emulator holds the events, as the real client reads them.
	svc, err := calendar.NewService(ctx, option.WithEndpoint(found["emulator"]), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	for cal, want := range map[string]string{"primary": "Team sync", "anything-at-all@group.calendar.google.com": ""} {
		evs, err := svc.Events.List(cal).Do()
		if err != nil || len(evs.Items) == 0 {
			t.Fatalf("the emulator's %s: %v, %v", cal, evs, err)
		}
		if want != "" && !strings.Contains(evs.Items[0].Summary+evs.Items[len(evs.Items)-1].Summary, want) {
			t.Errorf("%s holds %q … %q", cal, evs.Items[0].Summary, evs.Items[len(evs.Items)-1].Summary)
		}
	}
	// The status page answers, and so does its JSON.
	resp, err := http.Get(found["page"])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "outlook") {
		t.Errorf("status page: %d\n%.300s", resp.StatusCode, body)
	}
	resp, err = http.Get(found["page"] + "status")
	if err != nil {
		t.Fatal(err)
	}
	var rep status.Report
	err = json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if err != nil || len(rep.Subscriptions) != 3 {
		t.Fatalf("/status: %+v %v", rep, err)
	}
	for _, s := range rep.Subscriptions {
		if s.ID == "gone" {
			if s.State != "ERROR" {
				t.Errorf("/status: gone is %s, want ERROR", s.State)
			}
			continue
		}
		if s.State != "ACTIVE" || s.EventsMapped == 0 {
			t.Errorf("/status: %s is %s with %d events", s.ID, s.State, s.EventsMapped)
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	for range lines {
	}
	if after := stateHash(t, state); after != before {
		t.Error("the demo changed the configuration's state_dir")
	}
	if _, err := os.Stat(found["tmp"]); !os.IsNotExist(err) {
		t.Errorf("the demo's own state %s is left behind (%v)", found["tmp"], err)
	}
	if n := feedHits.Load(); n != 1 {
		t.Errorf("the http feed was fetched %d times, want 1", n)
	}
	if n := alertHits.Load(); n != 0 {
		t.Errorf("%d alerts were sent", n)
	}
	all := text + stderr.String()
	for _, secret := range []string{"secret-token", "demo-access-secret", "demo-refresh-secret"} {
		if strings.Contains(all, secret) {
			t.Errorf("the demo prints %q", secret)
		}
	}
}

// The demo's flags that cannot go together are refused before anything
// starts, and the configuration's state_dir is never the demo's.
func TestDemoConfigFlags(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "state"), 0o700)
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--for", "1m"}, "--for needs --config"},
		{[]string{"--config", cfg, "--once", "--for", "1m"}, "exclude each other"},
		{[]string{"--config", cfg, "--state-dir", filepath.Join(dir, "state")}, "the configuration's state_dir"},
		{[]string{"--config", cfg, "--listen", "0.0.0.0:0"}, "--listen"},
		{[]string{"--config", cfg, "extra"}, "unexpected arguments: extra"},
	}
	for _, tt := range tests {
		_, stderr, code := run(t, append([]string{"demo"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("demo %v: code %d, want 2 and %q\n%s", tt.args, code, tt.want, stderr)
		}
	}
}
