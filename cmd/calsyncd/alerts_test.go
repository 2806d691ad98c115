package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// `calsyncd sync` sends the alerts its runs call for before it exits, once
// per transition across invocations.
func TestSyncSendsAlerts(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	api := httptest.NewServer(fake)
	defer api.Close()
	feedBody, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(feedBody) }))
	defer feeds.Close()
	var mu sync.Mutex
	var got []map[string]any
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	defer hooks.Close()
	cfg := writeFile(t, t.TempDir(), "config.yaml", `state_dir: state
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
sync:
  error_threshold: 1
subscriptions:
  - id: team
    url: `+feeds.URL+`/team.ics
    calendar: missing@example.com
alerts:
  - url: `+hooks.URL+`/hook/secret-path
`)
	for range 2 {
		if _, stderr, code := run(t, "sync", "--config", cfg); code != 1 {
			t.Fatalf("sync into a missing calendar: code %d\n%s", code, stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0]["event"] != "error_entered" || got[0]["subscription"] != "team" ||
		!strings.Contains(got[0]["message"].(string), "calendar not found or not shared") {
		t.Fatalf("alerts = %v, want one error_entered for team", got)
	}
}
