package check_test

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
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/check"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

const (
	secretPath   = "private-s3cretfeedtoken"
	secretHeader = "Bearer s3cretheadervalue"
)

// env is the emulator behind the real client, a feed server, a token
// endpoint that refuses every refresh, and a configuration of one
// subscription per case.
type env struct {
	fake *gcalfake.Server
	cfg  *config.Config
}

func newEnv(t *testing.T) *env {
	t.Helper()
	fake := gcalfake.New(gcalfake.Options{})
	for _, cal := range []string{"good@example.com", "readonly@example.com", "silent@example.com"} {
		fake.AddCalendar(cal, "Europe/Berlin")
	}
	fake.Share("readonly@example.com", gcalfake.RoleReader)
	api := httptest.NewServer(withoutAccessRole(fake, "silent@example.com"))
	t.Cleanup(api.Close)

	team, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/messy.ics": "testdata/messy.ics", "/login": "testdata/login.html"}
	// A feed whose every event but one is broken (no DTSTART).
	var broken strings.Builder
	broken.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//broken//EN\r\n")
	for i := range 300 {
		fmt.Fprintf(&broken, "BEGIN:VEVENT\r\nUID:broken-%d@example.com\r\nSUMMARY:Broken %d\r\nEND:VEVENT\r\n", i, i)
	}
	broken.WriteString("BEGIN:VEVENT\r\nUID:fine@example.com\r\nDTSTART:20261215T100000Z\r\nDTEND:20261215T110000Z\r\nSUMMARY:Fine\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/"+secretPath+"/team.ics" {
			if r.Header.Get("Authorization") != secretHeader {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Write(team)
			return
		}
		if r.URL.Path == "/broken.ics" {
			io.WriteString(w, broken.String())
			return
		}
		if f, ok := files[r.URL.Path]; ok {
			http.ServeFile(w, r, f)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(feeds.Close)

	// Google's token endpoint, for a person whose grant was revoked.
	oauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`))
	}))
	t.Cleanup(oauth.Close)

	// An address nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	cfg := writeConfig(t, api.URL, feeds.URL, oauth.URL, dead)
	return &env{fake: fake, cfg: cfg}
}

// writeConfig lays out a configuration with one subscription per case,
// the person's OAuth client and expired token beside it, and loads it.
func writeConfig(t *testing.T, apiURL, feedsURL, oauthURL, dead string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("client.json", `{"installed":{"client_id":"1234-test.apps.googleusercontent.com","client_secret":"test-secret",`+
		`"auth_uri":"`+oauthURL+`/auth","token_uri":"`+oauthURL+`/token","redirect_uris":["http://localhost"]}}`)
	tok, _ := json.Marshal(map[string]any{"access_token": "stale", "token_type": "Bearer", "refresh_token": "refresh-1",
		"expiry": time.Now().Add(-time.Hour)})
	write("person-token.json", string(tok))
	good := feedsURL + "/" + secretPath + "/team.ics"
	write("config.yaml", `state_dir: state
google:
  endpoint: `+apiURL+gcalfake.BasePath+`
accounts:
  - name: person
    credentials_file: client.json
    token_file: person-token.json
subscriptions:
  - {id: good, url: "`+good+`", calendar: good@example.com, headers: {Authorization: "`+secretHeader+`"}}
  - {id: unreachable, url: "http://`+dead+`/feed.ics", calendar: good@example.com}
  - {id: html, url: "`+feedsURL+`/login", calendar: good@example.com}
  - {id: missing, url: "`+good+`", calendar: missing@example.com, headers: {Authorization: "`+secretHeader+`"}}
  - {id: readonly, url: "`+good+`", calendar: readonly@example.com, headers: {Authorization: "`+secretHeader+`"}}
  - {id: revoked, url: "`+good+`", calendar: good@example.com, account: person, headers: {Authorization: "`+secretHeader+`"}}
  - {id: messy, url: "`+feedsURL+`/messy.ics", calendar: good@example.com, window: {past: 0}}
  - {id: silent, url: "`+good+`", calendar: silent@example.com, headers: {Authorization: "`+secretHeader+`"}}
  - {id: refused, url: "`+feedsURL+`/`+secretPath+`/team.ics", calendar: good@example.com}
  - {id: broken, url: "`+feedsURL+`/broken.ics", calendar: good@example.com}
`)
	cfg, err := config.Load(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// withoutAccessRole drops accessRole from one calendar's events lists, as
// a Google that did not fill it in would.
func withoutAccessRole(h http.Handler, calendarID string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/calendars/"+calendarID+"/events") {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var body map[string]any
		json.Unmarshal(rec.Body.Bytes(), &body)
		delete(body, "accessRole")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		json.NewEncoder(w).Encode(body)
	})
}

func (e *env) run(t *testing.T) check.Report {
	t.Helper()
	c := &check.Checker{Config: e.cfg, Fetcher: fetch.NewFetcher(2*time.Second, 10*time.Second, 20<<20, feed.CheckBody),
		Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
	return c.Run(context.Background(), e.cfg.Subscriptions)
}

func TestCheck(t *testing.T) {
	e := newEnv(t)
	rep := e.run(t)
	byID := map[string]check.Result{}
	for _, r := range rep.Subscriptions {
		byID[r.ID] = r
	}
	tests := []struct {
		id    string
		ok    bool
		words []string // in the problems (or, when ok, the notes)
		more  func(r check.Result) bool
	}{
		{id: "good", ok: true, more: func(r check.Result) bool {
			return r.Feed.Status == 200 && r.Feed.Events > 0 && r.Feed.Bytes > 1000 && len(r.Feed.Skipped) == 0 &&
				r.Calendar.Exists && r.Calendar.AccessRole == "owner" && r.Calendar.Writable == check.WritableYes &&
				r.Account.OK && r.Feed.URL == strings.SplitN(e.cfg.Subscriptions[0].URL, "/"+secretPath, 2)[0]+"/…"
		}},
		{id: "unreachable", words: []string{"cannot reach the feed server", "check the host name"}},
		{id: "html", words: []string{"not a calendar", "a login page?", "see subscriptions[2]"}, more: func(r check.Result) bool {
			return r.Feed.Status == 0 && r.Calendar.Writable == check.WritableYes // the calendar is checked all the same
		}},
		{id: "missing", words: []string{"calendar missing@example.com does not exist or is not shared with unauthenticated", "subscriptions[3].calendar"},
			more: func(r check.Result) bool { return !r.Calendar.Exists && r.Feed.Events > 0 }},
		{id: "readonly", words: []string{"may only read calendar readonly@example.com (access role reader)", "Make changes to events"},
			more: func(r check.Result) bool { return r.Calendar.Exists && r.Calendar.Writable == check.WritableNo }},
		{id: "revoked", words: []string{"account person cannot get an access token", "invalid_grant", "calsyncd auth login"},
			more: func(r check.Result) bool {
				return !r.Account.OK && r.Account.Identity != "" && r.Calendar.Writable == check.WritableCannotTell
			}},
		{id: "messy", ok: true, words: []string{"1 event of the feed skipped", `"Atlantis Standard Time"`}, more: func(r check.Result) bool {
			return r.Feed.Events == 2 && len(r.Feed.Skipped) == 1 && r.Feed.Skipped[0].UID == "nostart@example.com" &&
				len(r.Feed.UnresolvedZones) == 1 && r.Feed.UnresolvedZones[0] == "Atlantis Standard Time"
		}},
		{id: "silent", ok: true, words: []string{"cannot tell whether the account may write to calendar silent@example.com"},
			more: func(r check.Result) bool { return r.Calendar.Writable == check.WritableCannotTell && r.Calendar.Exists }},
		{id: "refused", words: []string{"refused access (401 Unauthorized)", "see subscriptions[8] (url, headers, basic_auth)"},
			more: func(r check.Result) bool { return r.Feed.Status == 401 }},
		{id: "broken", ok: true, words: []string{"300 events of the feed skipped (--json lists the first 100 with their reasons)"},
			more: func(r check.Result) bool {
				return r.Feed.Events == 1 && r.Feed.SkippedTotal == 300 && len(r.Feed.Skipped) == check.MaxSkips &&
					r.Feed.Skipped[0].UID == "broken-0@example.com"
			}},
	}
	for _, tt := range tests {
		r, ok := byID[tt.id]
		if !ok {
			t.Fatalf("no result for %s", tt.id)
		}
		if r.OK != tt.ok || (tt.ok && len(r.Problems) > 0) || (!tt.ok && len(r.Problems) == 0) {
			t.Errorf("%s: ok %v, problems %q; want ok %v", tt.id, r.OK, r.Problems, tt.ok)
		}
		text := strings.Join(r.Problems, "\n")
		if tt.ok {
			text = strings.Join(r.Notes, "\n")
		}
		for _, w := range tt.words {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", tt.id, text, w)
			}
		}
		if tt.more != nil && !tt.more(r) {
			t.Errorf("%s: %+v", tt.id, r)
		}
		line := r.Line()
		if !strings.HasPrefix(line, tt.id+": OK") && !strings.HasPrefix(line, tt.id+": FAIL") || strings.Contains(line, "\n") {
			t.Errorf("%s: line %q", tt.id, line)
		}
	}
	if rep.OK() {
		t.Error("the report is OK with failing subscriptions")
	}
}

// The check writes nothing, to Google or to the state directory, and its
// report, as text or JSON, holds no secret.
func TestCheckWritesNothingAndShowsNoSecret(t *testing.T) {
	e := newEnv(t)
	rep := e.run(t)

	// Nothing was written to Google.
	st := e.fake.Stats()
	if st.AcceptedWrites != 0 || st.ByOp["insert"]+st.ByOp["update"]+st.ByOp["patch"]+st.ByOp["delete"] != 0 {
		t.Errorf("check wrote to Google: %+v", st.ByOp)
	}
	// One read per calendar and account, however many subscriptions share
	// it; none for the account without a token.
	if n := st.ByOp["calendars.get"]; n != 4 {
		t.Errorf("%d calendars.get, want 4", n)
	}
	// Nor to the state directory: no database appears.
	if _, err := os.Stat(e.cfg.StateDir); !os.IsNotExist(err) {
		t.Errorf("check created the state directory: %v", err)
	}

	// No secret in the report.
	var text, js bytes.Buffer
	rep.WriteText(&text)
	rep.WriteJSON(&js)
	for _, out := range []string{text.String(), js.String()} {
		if strings.Contains(out, "s3cret") || strings.Contains(out, "refresh-1") || strings.Contains(out, "test-secret") {
			t.Errorf("the report holds a secret:\n%s", out)
		}
	}
	var parsed struct {
		Subscriptions []struct {
			ID       string   `json:"id"`
			OK       *bool    `json:"ok"`
			Problems []string `json:"problems"`
		} `json:"subscriptions"`
	}
	if err := json.Unmarshal(js.Bytes(), &parsed); err != nil || len(parsed.Subscriptions) != len(e.cfg.Subscriptions) || parsed.Subscriptions[0].OK == nil ||
		parsed.Subscriptions[0].Problems == nil {
		t.Errorf("json %s (%v)", js.String(), err)
	}
}
