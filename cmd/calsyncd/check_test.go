package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// snapshot is every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
		return nil
	})
	return out
}

// `calsyncd check` says, one line per subscription, whether it would work,
// exits 1 when one would not, and writes nothing: not to Google, not to
// the state database, which stays byte for byte as it was.
func TestCheckCommand(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	api := httptest.NewServer(fake)
	defer api.Close()
	feedBody, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/private-token") {
			w.Write(feedBody)
			return
		}
		w.Write([]byte("<html><body>Please sign in</body></html>"))
	}))
	defer feeds.Close()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
subscriptions:
  - id: team
    url: `+feeds.URL+`/private-token/team.ics
    calendar: team@example.com
  - id: login
    url: `+feeds.URL+`/login
    calendar: missing@example.com
`)
	if _, stderr, code := run(t, "sync", "--config", cfg, "team"); code != 0 {
		t.Fatalf("sync: %d\n%s", code, stderr)
	}
	before, writes := snapshot(t, filepath.Join(dir, "state")), fake.Stats().AcceptedWrites
	if len(before) == 0 {
		t.Fatal("sync left no database")
	}

	out, _, code := run(t, "check", "--config", cfg)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 3 || !strings.HasPrefix(lines[0], "config "+cfg+": valid") ||
		!strings.HasPrefix(lines[1], "team: OK — feed http://127.0.0.1:") || !strings.HasPrefix(lines[2], "login: FAIL — ") ||
		!strings.Contains(lines[2], "HTML page") || !strings.Contains(lines[2], "missing@example.com does not exist") {
		t.Fatalf("check: code %d\n%s", code, out)
	}
	out, _, code = run(t, "check", "--config", cfg, "--json", "team")
	var rep struct {
		Subscriptions []struct {
			ID       string   `json:"id"`
			OK       bool     `json:"ok"`
			Problems []string `json:"problems"`
			Feed     struct {
				Events int `json:"events"`
			} `json:"feed"`
		} `json:"subscriptions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Subscriptions) != 1 || !rep.Subscriptions[0].OK ||
		rep.Subscriptions[0].Feed.Events != 9 || rep.Subscriptions[0].Problems == nil {
		t.Fatalf("check --json team: code %d, %v\n%s", code, err, out)
	}
	if strings.Contains(out, "private-token") {
		t.Errorf("check shows the feed URL's path:\n%s", out)
	}

	if got := fake.Stats().AcceptedWrites; got != writes {
		t.Errorf("check wrote %d times to Google", got-writes)
	}
	after := snapshot(t, filepath.Join(dir, "state"))
	if len(after) != len(before) {
		t.Errorf("state files before %d, after %d", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("check changed %s", p)
		}
	}

	// An invalid configuration: its errors, as validate prints them.
	bad := writeFile(t, dir, "bad.yaml", "state_dir: state\nalerts:\n  - url: ftp://example.com/x\n")
	out, _, code = run(t, "check", "--config", bad)
	if code != 1 || !strings.Contains(out, "bad.yaml:3: alerts[0].url: must be an http or https URL") {
		t.Fatalf("check on an invalid config: code %d\n%s", code, out)
	}
	out, _, code = run(t, "check", "--config", bad, "--json")
	var js struct {
		ConfigErrors []string `json:"config_errors"`
	}
	if json.Unmarshal([]byte(out), &js); code != 1 || len(js.ConfigErrors) != 1 {
		t.Fatalf("check --json on an invalid config: code %d\n%s", code, out)
	}
	if _, _, code := run(t, "check", "--config", cfg, "nosuch"); code != 2 {
		t.Errorf("unknown id: code %d, want 2", code)
	}
}
