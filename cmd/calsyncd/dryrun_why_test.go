package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription/preview"
)

// TestSyncDryRunSaysWhy: the dry-run names the filter rule behind each
// exclusion, shows the look a create or an update writes and a series in
// words, names a deleted event by the title it was last written with
// (or says the title is unknown), and gives a calendar Google refuses and
// a feed that is not there check's remedy. Text and
// --json alike.
func TestSyncDryRunSaysWhy(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	for _, c := range []string{"team@example.com", "holidays@example.com", "gone@example.com"} {
		fake.AddCalendar(c, "UTC")
	}
	fake.Share("tema@example.com", gcalfake.RoleNone) // not shared: Google answers 404
	api := httptest.NewServer(fake)
	defer api.Close()
	team, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	holidays, err := os.ReadFile("../../testdata/feeds/holidays.ics")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	bodies := map[string]string{"/team.ics": string(team), "/holidays.ics": string(holidays), "/gone.ics": goneFeed(true)}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, ok := bodies[r.URL.Path]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(b))
	}))
	defer feeds.Close()
	setFeed := func(path, body string) { mu.Lock(); bodies[path] = body; mu.Unlock() }

	dir := t.TempDir()
	head := "state_dir: state\ngoogle:\n  endpoint: " + api.URL + gcalfake.BasePath + "\nsubscriptions:\n"
	sub := func(id, path, cal string) string {
		return "  - id: " + id + "\n    url: " + feeds.URL + path + "\n    calendar: " + cal + "\n"
	}
	cfg := writeFile(t, dir, "config.yaml", head+sub("gone", "/gone.ics", "gone@example.com"))
	mustSync := func() {
		t.Helper()
		if _, stderr, code := run(t, "sync", "--config", cfg); code != 0 {
			t.Fatalf("sync: code %d\n%s", code, stderr)
		}
	}
	// gone's first run wrote its events; a second writes nothing; the
	// retention then lets the first go, and with it the titles it wrote.
	mustSync()
	mustSync()
	db, err := store.Open(t.Context(), "sqlite", filepath.Join(dir, "state", "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PruneRuns(t.Context(), 0, 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg = writeFile(t, dir, "config.yaml", head+sub("gone", "/gone.ics", "gone@example.com")+sub("team", "/team.ics", "team@example.com"))
	mustSync()
	// Release 4.2 and gone's "Dentist" leave their feeds.
	setFeed("/team.ics", strings.Replace(string(team), "UID:release-4.2@example.com", "UID:release-4.2@example.com\nSTATUS:CANCELLED", 1))
	setFeed("/gone.ics", goneFeed(false))
	writeFile(t, dir, "config.yaml", head+sub("gone", "/gone.ics", "gone@example.com")+
		sub("team", "/team.ics", "team@example.com")+`    filters:
      - include: {summary: "."}
      - exclude: {summary: "^On-call"}
    color: banana
    reminders: {timed: [{popup: 10m}, {email: 1d}], all_day: none}
`+sub("holidays", "/holidays.ics", "holidays@example.com")+`    filters:
      - include: {categories: "^DE$"}
    visibility: private
    transparency: free
`+sub("typo", "/team.ics", "tema@example.com")+sub("missing", "/missing.ics", "team@example.com"))

	text, _, code := run(t, "sync", "--config", cfg, "--dry-run")
	if code != 1 {
		t.Fatalf("dry-run: code %d, want 1 (typo and missing fail)\n%s", code, text)
	}
	out, _, code := run(t, "sync", "--config", cfg, "--dry-run", "--json")
	if code != 1 {
		t.Fatalf("dry-run --json: code %d, want 1\n%s", code, out)
	}
	var doc previewDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byID := map[string]preview.PreviewJSON{}
	for _, s := range doc.Subscriptions {
		byID[s.ID] = s
	}
	find := func(list []preview.ChangeJSON, summary string) preview.ChangeJSON {
		t.Helper()
		for _, c := range list {
			if c.Summary == summary {
				return c
			}
		}
		t.Fatalf("no %q in %+v", summary, list)
		return preview.ChangeJSON{}
	}
	line := func(prefix string) string {
		t.Helper()
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.Join(strings.Fields(l), " "), prefix) {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		t.Fatalf("no line starting %q in:\n%s", prefix, text)
		return ""
	}
	for _, tc := range []struct {
		name string
		// text is a line of the text output, its fields single-spaced
		// (prefix: its start; want: the whole line).
		prefix, want string
		// json checks the JSON form.
		json func() bool
	}{
		{
			name:   "an exclude that matched",
			prefix: "excluded 2027-02-01 09:00 Europe/Berlin On-call handover",
			want:   `excluded 2027-02-01 09:00 Europe/Berlin On-call handover filters[1] exclude.summary matched "^On-call"`,
			json: func() bool {
				f := find(byID["team"].ExcludedEvents, "On-call handover").Filter
				return f != nil && f.Match == "exclude" && f.Why == `filters[1] exclude.summary matched "^On-call"` &&
					len(f.Rules) == 1 && f.Rules[0] == preview.FilterRuleJSON{Key: "filters[1]", Kind: "exclude", Field: "summary", Pattern: "^On-call"}
			},
		},
		{
			name:   "a delete of an event a filter now excludes",
			prefix: "delete 2027-02-01 09:00 Europe/Berlin On-call handover",
			want:   `delete 2027-02-01 09:00 Europe/Berlin On-call handover excluded: filters[1] exclude.summary matched "^On-call"`,
			json: func() bool {
				c := find(byID["team"].Delete, "On-call handover")
				return c.Reason == "excluded by a filter" && c.Filter != nil && c.Filter.Rules[0].Key == "filters[1]"
			},
		},
		{
			name:   "no include matched",
			prefix: "excluded 2026-12-25 (all day) Noël (FR)",
			want:   `excluded 2026-12-25 (all day) Noël (FR) no include matched (filters[0] include.categories "^DE$")`,
			json: func() bool {
				f := find(byID["holidays"].ExcludedEvents, "Noël (FR)").Filter
				return f != nil && f.Match == "no_include" && len(f.Rules) == 1 && f.Rules[0] == preview.FilterRuleJSON{Key: "filters[0]", Kind: "include", Field: "categories", Pattern: "^DE$"}
			},
		},
		{
			name:   "a create's look: visibility and transparency",
			prefix: "create 2027-01-01 (all day) Neujahr (DE)",
			want:   "create 2027-01-01 (all day) Neujahr (DE) private, free",
			json: func() bool {
				l := find(byID["holidays"].Create, "Neujahr (DE)").Look
				return l != nil && l.Visibility == "private" && l.Transparency == "free" && l.Color == "" && l.Reminders == nil
			},
		},
		{
			name:   "an update's look: colour and reminders, and a series in words",
			prefix: "update 2026-12-07 09:30 Europe/Berlin Team sync ",
			want:   "update 2026-12-07 09:30 Europe/Berlin Team sync color, reminders; banana, reminders popup 10m, email 1d; weekly on Mon, 26 times",
			json: func() bool {
				c := find(byID["team"].Update, "Team sync")
				l := c.Look
				return l != nil && l.Color == "banana" && l.Reminders != nil && len(*l.Reminders) == 2 && (*l.Reminders)[1] == preview.ReminderJSON{Method: "email", Minutes: 1440} &&
					c.Series == "weekly on Mon, 26 times" && strings.Join(c.Recurrence, "|") == "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=26"
			},
		},
		{
			name:   "no reminders, on the feed's own transparency",
			prefix: "update 2027-02-08 (all day) Team offsite",
			want:   "update 2027-02-08 (all day) Team offsite color, reminders; banana, free, no reminders",
			json: func() bool {
				l := find(byID["team"].Update, "Team offsite").Look
				return l != nil && l.Transparency == "free" && l.Reminders != nil && len(*l.Reminders) == 0
			},
		},
		{
			name:   "a delete named by the title it was written with",
			prefix: "delete 2027-01-15 15:00 UTC Release 4.2 go/no-go",
			want:   "delete 2027-01-15 15:00 UTC Release 4.2 go/no-go no longer in the feed",
			json: func() bool {
				c := find(byID["team"].Delete, "Release 4.2 go/no-go")
				return c.TitleFrom == "written" && c.Start == "2027-01-15T15:00:00Z" && c.Reason == "no longer in the feed"
			},
		},
		{
			name:   "a delete whose title no kept run recorded",
			prefix: "delete - (title unknown) uid dentist@example.com",
			want:   "delete - (title unknown) uid dentist@example.com no longer in the feed",
			json: func() bool {
				c := find(byID["gone"].Delete, "")
				return c.UID == "dentist@example.com" && c.TitleFrom == ""
			},
		},
		{
			name:   "a calendar Google refuses, with check's remedy",
			prefix: "typo:",
			want: `typo: cannot be previewed: calendar tema@example.com does not exist or is not shared with account default → ` +
				`share the calendar with the account ("Make changes to events"), or fix subscriptions[3].calendar`,
			json: func() bool {
				e := byID["typo"].Error
				return e != nil && e.Problem == "calendar tema@example.com does not exist or is not shared with account default" &&
					strings.HasSuffix(e.Remedy, "or fix subscriptions[3].calendar") && strings.Contains(e.Message, "404")
			},
		},
		{
			name:   "a feed that is not there, with check's remedy",
			prefix: "missing:",
			want:   `missing: cannot be previewed: feed: the feed is not there (404 Not Found) — check the URL → see subscriptions[4] (url, headers, basic_auth)`,
			json: func() bool {
				e := byID["missing"].Error
				return e != nil && e.Class == "feed_rejected" && e.Remedy == "see subscriptions[4] (url, headers, basic_auth)" && e.Problem == ""
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := line(tc.prefix); got != tc.want {
				t.Errorf("text:\n got  %s\n want %s", got, tc.want)
			}
			if !tc.json() {
				t.Errorf("--json does not say it:\n%s", out)
			}
		})
	}
	if t.Failed() {
		t.Logf("text:\n%s", text)
	}
}

// goneFeed is a feed of three events, or of two once the dentist's
// appointment left it (fewer than half gone: the guard lets it go).
func goneFeed(dentist bool) string {
	ev := func(uid, start, summary string) string {
		return "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTAMP:20261120T090000Z\r\nDTSTART:" + start + "\r\nDTEND:" + start[:9] + "235900Z\r\nSUMMARY:" + summary + "\r\nEND:VEVENT\r\n"
	}
	b := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + ev("gym@example.com", "20270110T180000Z", "Gym") + ev("book@example.com", "20270112T190000Z", "Book club")
	if dentist {
		b += ev("dentist@example.com", "20270114T080000Z", "Dentist")
	}
	return b + "END:VCALENDAR\r\n"
}
