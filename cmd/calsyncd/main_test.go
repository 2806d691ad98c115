package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
)

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	code = exitCode(&errb, m.Run(context.Background(), args))
	return out.String(), errb.String(), code
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "state_dir: state\n")
	if out, _, code := run(t, "validate", "--config", good); code != 0 || !strings.HasPrefix(out, "OK") {
		t.Fatalf("valid config: code %d out %q", code, out)
	}
	bad := writeFile(t, dir, "bad.yaml", "state_dir: state\nsubscriptions:\n  - id: a\n    url: ftp://x/y\n")
	out, _, code := run(t, "validate", "--config", bad)
	if code != 1 || !strings.Contains(out, "bad.yaml:4: subscriptions[0].url") || !strings.Contains(out, "bad.yaml:3: subscriptions[0].calendar") {
		t.Fatalf("invalid config: code %d out %q", code, out)
	}
	if _, _, code := run(t, "validate"); code != 2 {
		t.Fatalf("missing --config: code %d, want 2", code)
	}
}

// validate reads the included files: it counts them when all is well,
// and names each error's own file, line and key.
func TestValidateIncludedFiles(t *testing.T) {
	dir := t.TempDir()
	main := writeFile(t, dir, "config.yaml", "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:1/\ninclude: [a.yaml, b.yaml]\nsubscriptions:\n  - id: m\n    url: https://feeds.example.invalid/m.ics\n    calendar: m@example.com\n")
	a := writeFile(t, dir, "a.yaml", "subscriptions:\n  - id: a\n    url: https://feeds.example.invalid/a.ics\n    calendar: a@example.com\n")
	b := writeFile(t, dir, "b.yaml", "subscriptions:\n  - id: b\n    url: https://feeds.example.invalid/b.ics\n    calendar: b@example.com\n")
	if out, _, code := run(t, "validate", "--config", main); code != 0 || !strings.HasPrefix(out, "OK: "+main+" (3 subscriptions from 3 files, 1 account)") {
		t.Fatalf("valid: code %d out %q", code, out)
	}
	os.WriteFile(b, []byte("subscriptions:\n  - id: a\n    url: ftp://feeds.example.invalid/b.ics\n    calendar: b@example.com\n"), 0o600)
	out, _, code := run(t, "validate", "--config", main)
	want := b + ":2: subscriptions[0].id: duplicate id \"a\" (also subscriptions[0].id, " + a + ":2)\n" +
		b + ":3: subscriptions[0].url: unsupported URL scheme \"ftp\" (use https, http, webcal or file)\n"
	if code != 1 || out != want {
		t.Fatalf("invalid: code %d out\n%s\nwant\n%s", code, out, want)
	}
}

func TestExampleConfigValidates(t *testing.T) {
	t.Setenv("TEAM_FEED_TOKEN", "x")
	if out, _, code := run(t, "validate", "--config", "../../config.example.yaml"); code != 0 {
		t.Fatalf("config.example.yaml: code %d\n%s", code, out)
	}
}

func TestSyncAndStatusCommands(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	api := httptest.NewServer(fake)
	defer api.Close()
	feedBody, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(feedBody) }))
	defer feeds.Close()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
subscriptions:
  - id: team
    url: `+feeds.URL+`/private-token/team.ics
    calendar: team@example.com
  - id: broken
    url: `+feeds.URL+`/other.ics
    calendar: missing@example.com
`)
	out, stderr, code := run(t, "sync", "--config", cfg, "--json", "team")
	if code != 0 {
		t.Fatalf("sync team: code %d\n%s\n%s", code, out, stderr)
	}
	var doc status.SyncDoc
	err = json.Unmarshal([]byte(out), &doc)
	res := doc.Subscriptions
	if err != nil || len(res) != 1 || res[0].Run.Created != 9 || res[0].State != "ACTIVE" || res[0].Run.Outcome != "ok" {
		t.Fatalf("sync --json = %s (%v)", out, err)
	}
	// A subscription whose calendar does not exist fails the run: exit 1.
	_, stderr, code = run(t, "sync", "--config", cfg)
	if code != 1 {
		t.Fatalf("sync with a broken subscription: code %d, want 1\n%s", code, stderr)
	}
	if strings.Contains(stderr, "private-token") {
		t.Errorf("logs leak the feed URL:\n%s", stderr)
	}
	out, _, code = run(t, "status", "--config", cfg, "--json")
	if code != 0 {
		t.Fatalf("status: code %d", code)
	}
	var st status.Report
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Subscriptions) != 2 {
		t.Fatalf("status --json = %s (%v)", out, err)
	}
	for _, s := range st.Subscriptions {
		if s.ID == "team" && (s.EventsMapped != 9 || s.State != "ACTIVE") {
			t.Errorf("team status = %+v", s)
		}
		if s.ID == "broken" && (s.ConsecutiveErrors != 1 || s.LastError == nil || s.LastError.Class != "auth") {
			t.Errorf("broken status = %+v", s)
		}
	}
	if _, _, code := run(t, "sync", "--config", cfg, "nosuch"); code != 2 {
		t.Errorf("unknown subscription id: code %d, want 2", code)
	}
}

func TestUnknownCommand(t *testing.T) {
	_, stderr, code := run(t, "frobnicate")
	if code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
	var ee *exitError
	if !errors.As(&exitError{code: 3}, &ee) {
		t.Fatal("exitError")
	}
}

func TestRunRefusesToListenBeyondLoopbackWithoutAToken(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\nlisten: 0.0.0.0:8765\n")
	_, stderr, code := run(t, "run", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, "requires status.token") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Error("the daemon created its state before refusing")
	}
}
