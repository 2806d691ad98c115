package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// `calsyncd calendars` lists every calendar of the account through the
// real client, over more than one page of calendarList.list, in text and
// as JSON, telling writable calendars from read-only ones.
func TestCalendarsCommand(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.Add(gcalfake.Calendar{ID: "me@example.com", Summary: "Me", TimeZone: "Europe/Berlin"})
	fake.SetPrimary("", "me@example.com")
	fake.Add(gcalfake.Calendar{ID: "holidays@group.v.calendar.google.com", Summary: "Holidays in Germany", TimeZone: "Europe/Berlin", Role: gcalfake.RoleReader})
	fake.Add(gcalfake.Calendar{ID: "boss@example.com", Summary: "Boss", Role: gcalfake.RoleFreeBusyReader})
	const extra = calendarsPageSize + 10
	for i := range extra {
		fake.Add(gcalfake.Calendar{ID: fmt.Sprintf("c%03d@group.calendar.google.com", i), Summary: fmt.Sprintf("Team %d", i)})
	}
	total := extra + 3
	api := httptest.NewServer(fake)
	defer api.Close()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\ngoogle:\n  endpoint: "+api.URL+gcalfake.BasePath+"\n")

	tests := []struct {
		name string
		args []string
		// check inspects stdout.
		check func(t *testing.T, out string)
	}{
		{"text", nil, func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if !strings.HasPrefix(lines[0], fmt.Sprintf("account default (unauthenticated (emulator endpoint)): %d calendars", total)) {
				t.Errorf("header %q", lines[0])
			}
			if !strings.HasPrefix(lines[2], "ID ") || !strings.Contains(lines[2], "TIME ZONE") {
				t.Errorf("no column heads: %q", lines[2])
			}
			rows := map[string]string{}
			for _, l := range lines[3:] {
				if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[0], "@") {
					rows[f[0]] = l
				}
			}
			if len(rows) != total {
				t.Errorf("%d rows, want %d (every page)", len(rows), total)
			}
			for id, want := range map[string][]string{
				"me@example.com":                                        {"(primary)", "Me", "Europe/Berlin", "owner (writable)"},
				"holidays@group.v.calendar.google.com":                  {"Holidays in Germany", "reader (read-only"},
				"boss@example.com":                                      {"freeBusyReader (read-only"},
				fmt.Sprintf("c%03d@group.calendar.google.com", extra-1): {fmt.Sprintf("Team %d", extra-1), "UTC", "owner (writable)"},
			} {
				for _, w := range want {
					if !strings.Contains(rows[id], w) {
						t.Errorf("row of %s = %q, want %q in it", id, rows[id], w)
					}
				}
			}
			if !strings.Contains(out, "under a subscription's calendar: key") {
				t.Errorf("no next step:\n%s", out)
			}
		}},
		{"json", []string{"--json"}, func(t *testing.T, out string) {
			var got struct {
				Account   string          `json:"account"`
				Calendars []calendarEntry `json:"calendars"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			byID := map[string]calendarEntry{}
			for _, c := range got.Calendars {
				byID[c.ID] = c
			}
			if got.Account != "default" || len(got.Calendars) != total || len(byID) != total {
				t.Errorf("account %q, %d calendars (%d distinct), want %d", got.Account, len(got.Calendars), len(byID), total)
			}
			want := map[string]calendarEntry{
				"me@example.com": {ID: "me@example.com", Name: "Me", TimeZone: "Europe/Berlin", AccessRole: "owner", Writable: true, Primary: true},
				"holidays@group.v.calendar.google.com": {ID: "holidays@group.v.calendar.google.com", Name: "Holidays in Germany",
					TimeZone: "Europe/Berlin", AccessRole: "reader"},
				"boss@example.com": {ID: "boss@example.com", Name: "Boss", TimeZone: "UTC", AccessRole: "freeBusyReader"},
			}
			for id, w := range want {
				if byID[id] != w {
					t.Errorf("%s = %+v, want %+v", id, byID[id], w)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.ResetStats()
			out, stderr, code := run(t, append([]string{"calendars", "--config", cfg}, tt.args...)...)
			if code != 0 {
				t.Fatalf("code %d\n%s", code, stderr)
			}
			tt.check(t, out)
			if n := fake.Stats().ByOp["calendarList.list"]; n != 2 {
				t.Errorf("%d calendarList.list pages, want 2", n)
			}
		})
	}
}

// Whatever keeps `calendars` from listing, it says what to do, and never
// prints a secret.
func TestCalendarsCommandFailures(t *testing.T) {
	tokens, _ := fakeTokenEndpoint(t)
	// Google's answer to a token without the calendar list's scope.
	scopeless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"code":403,"message":"Request had insufficient authentication scopes.","status":"PERMISSION_DENIED",` +
			`"errors":[{"message":"Insufficient Permission","domain":"global","reason":"insufficientPermissions"}]}}`))
	}))
	defer scopeless.Close()

	tests := []struct {
		name   string
		config string
		files  map[string]string
		args   []string
		code   int
		want   []string
	}{
		{"no credentials", "state_dir: state\n", nil, nil, 1,
			[]string{"cannot list the calendars of account default", "credentials_file is not set"}},
		{"no login yet", "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
			map[string]string{"client.json": desktopClient(tokens.URL)}, nil, 1,
			[]string{"cannot list the calendars of account default", "run `calsyncd auth login --config CONFIG`"}},
		{"token without the list scope", "state_dir: state\ngoogle:\n  credentials_file: client.json\n  endpoint: " + scopeless.URL + "/calendar/v3/\n",
			map[string]string{"client.json": desktopClient(tokens.URL),
				"state/token-default.json": `{"access_token":"cal-access-secret","refresh_token":"cal-refresh-secret","expiry":"2999-01-01T00:00:00Z"}`},
			nil, 1, []string{"insufficient authentication scopes", "calendar.calendarlist.readonly", "run `calsyncd auth login --config CONFIG` and allow it"}},
		{"unknown account", "state_dir: state\n", nil, []string{"--account", "work"}, 2, []string{`no account "work"`, "accounts: default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "state"), 0o700)
			for name, body := range tt.files {
				writeFile(t, dir, name, body)
			}
			cfg := writeFile(t, dir, "config.yaml", tt.config)
			out, stderr, code := run(t, append([]string{"calendars", "--config", cfg}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("code %d, want %d\n%s%s", code, tt.code, out, stderr)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "CONFIG", cfg); !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, secret := range []string{"desk-secret", "cal-access-secret", "cal-refresh-secret", "cmd-access-secret"} {
				if strings.Contains(out+stderr, secret) {
					t.Errorf("prints the secret %q", secret)
				}
			}
		})
	}
}
