package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// policyFeed is n all-day events titled prefix and a number.
func policyFeed(n int, prefix string) string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//policy//EN\r\n")
	for i := range n {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:p%02d@example.com\r\nDTSTART;VALUE=DATE:202705%02d\r\nSUMMARY:%s %d\r\nEND:VEVENT\r\n", i, 1+i, prefix, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.String()
}

// TestDryRunShowsWhatThePolicyKeeps: with deletes: never or updates:
// never, `sync --dry-run` says how many deletes and updates mirroring
// would make that the policy keeps from Google, in text and in JSON.
func TestDryRunShowsWhatThePolicyKeeps(t *testing.T) {
	for _, tc := range []struct {
		name, keys               string
		deletes, updates         int // planned
		keptDeletes, keptUpdates int
		line                     string // in the text, "" none
	}{
		{name: "mirror", deletes: 5, updates: 7},
		{name: "deletes never", keys: "    deletes: never\n", updates: 7, keptDeletes: 5, line: "  kept: 5 deletes not made (deletes: never)\n"},
		{name: "updates never", keys: "    updates: never\n", deletes: 5, keptUpdates: 7, line: "  kept: 7 updates not made (updates: never)\n"},
		{name: "both", keys: "    deletes: never\n    updates: never\n", keptDeletes: 5, keptUpdates: 7,
			line: "  kept: 5 deletes not made (deletes: never), 7 updates not made (updates: never)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := gcalfake.New(gcalfake.Options{})
			fake.AddCalendar("team@example.com", "UTC")
			api := httptest.NewServer(fake)
			defer api.Close()
			var body atomic.Value
			body.Store(policyFeed(12, "Day"))
			feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body.Load().(string))) }))
			defer feeds.Close()
			dir := t.TempDir()
			cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  endpoint: `+api.URL+gcalfake.BasePath+`
subscriptions:
  - id: team
    url: `+feeds.URL+`/team.ics
    calendar: team@example.com
`+tc.keys)
			if _, stderr, code := run(t, "sync", "--config", cfg); code != 0 {
				t.Fatalf("sync: code %d\n%s", code, stderr)
			}
			// Five events leave the feed, the seven left are renamed.
			body.Store(policyFeed(7, "Renamed day"))
			out, stderr, code := run(t, "sync", "--config", cfg, "--dry-run", "--json")
			if code != 0 {
				t.Fatalf("dry-run: code %d\n%s", code, stderr)
			}
			var doc previewDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Subscriptions) != 1 {
				t.Fatalf("dry-run --json = %s (%v)", out, err)
			}
			pv := doc.Subscriptions[0]
			if len(pv.Delete) != tc.deletes || len(pv.Update) != tc.updates || pv.KeptDeletes != tc.keptDeletes || pv.KeptUpdates != tc.keptUpdates || pv.HeldDeletes != 0 {
				t.Errorf("preview: %d deletes, %d updates, kept %d deletes and %d updates, %d held; want %d, %d, %d, %d, 0",
					len(pv.Delete), len(pv.Update), pv.KeptDeletes, pv.KeptUpdates, pv.HeldDeletes, tc.deletes, tc.updates, tc.keptDeletes, tc.keptUpdates)
			}
			for _, key := range []string{`"kept_deletes"`, `"kept_updates"`} {
				if !strings.Contains(out, key) {
					t.Errorf("the JSON has no %s:\n%s", key, out)
				}
			}
			text, _, code := run(t, "sync", "--config", cfg, "--dry-run")
			if code != 0 {
				t.Fatalf("dry-run: code %d", code)
			}
			if got := strings.Contains(text, "  kept: "); got != (tc.line != "") || tc.line != "" && !strings.Contains(text, tc.line) {
				t.Errorf("the text does not say %q:\n%s", tc.line, text)
			}
		})
	}
}
