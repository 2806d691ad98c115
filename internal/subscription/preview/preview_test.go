package preview_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/subscription"
	"github.com/calsyncd/calsyncd/internal/subscription/preview"
)

// sample is a preview with one of each kind of change and of failure.
func sample() []preview.Advised {
	start := feed.Time{T: time.Date(2027, 1, 4, 9, 30, 0, 0, time.UTC), Zone: "Europe/Berlin"}
	day := feed.Time{T: time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC), AllDay: true}
	ok := preview.Advised{Preview: subscription.Preview{
		Subscription: "team",
		Creates: []subscription.Change{{Key: calsyncd.Key{UID: "standup"}, Summary: "Stand-up", Start: start,
			Recurrence: []string{"RRULE:FREQ=WEEKLY;BYDAY=MO"},
			Look:       subscription.Look{Color: "banana", Free: true, Reminders: &feed.Reminders{Overrides: []feed.Reminder{{Method: "popup", Minutes: 10}}}}}},
		Updates: []subscription.Change{{Key: calsyncd.Key{UID: "retro"}, Summary: "Retro", Start: day}},
		Deletes: []subscription.Change{{Key: calsyncd.Key{UID: "gone"}, Reason: "left the feed"}},
		Excluded: []subscription.Change{{Key: calsyncd.Key{UID: "oncall"}, Summary: "On-call", Start: day,
			Filter: &subscription.Filtered{Text: `filters[0] exclude.summary matched "^On-call"`, Match: "exclude",
				Rules: []subscription.FilterRule{{Key: "filters[0]", Kind: "exclude", Field: "summary", Pattern: "^On-call"}}}}},
		Unchanged:        3,
		ReconcileSkipped: errors.New("calendar not found"),
		Vacate:           []subscription.Vacating{{At: calsyncd.Location{Calendar: "old@example.com", Account: "default"}, Err: errors.New("refused")}},
	},
		ReconcileAdvice: preview.Advice{What: "calendar not found", Do: "share it"},
		VacateAdvice:    map[int]preview.Advice{0: {What: "refused", Do: "log in again"}},
	}
	failed := preview.Advised{Preview: subscription.Preview{Subscription: "rota", Err: errors.New("feed gone")},
		ErrAdvice: preview.Advice{What: "the feed answers 404", Do: "fix subscriptions[1].url"}}
	return []preview.Advised{ok, failed}
}

// TestWriteText: the counts, each event on a line of its own with its
// details, each failure with its advice, and the closing line.
func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := preview.WriteText(&b, sample()); err != nil {
		t.Fatal(err)
	}
	// The table's columns are aligned by spaces: compare words.
	var lines []string
	for l := range strings.Lines(b.String()) {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	out := strings.Join(lines, "\n") + "\n"
	for _, want := range []string{
		"team: 1 to create, 1 to update, 1 to delete, 0 held by the mass-delete guard, 1 excluded by filters, 3 unchanged\n",
		"moved from old@example.com (account default): its events there cannot be listed: refused → log in again\n",
		"reconcile skipped (the sync goes on without it): calendar not found → share it\n",
		"create 2027-01-04 10:30 Europe/Berlin Stand-up banana, free, reminders popup 10m; weekly on Mon\n",
		"update 2027-01-05 (all day) Retro fields unknown\n",
		"delete - (title unknown) uid gone left the feed\n",
		`excluded 2027-01-05 (all day) On-call filters[0] exclude.summary matched "^On-call"` + "\n",
		"rota: cannot be previewed: the feed answers 404 → fix subscriptions[1].url\n",
		"(dry run: nothing was written to Google or to the state database)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text has no %q:\n%s", want, out)
		}
	}
}

// TestWriteJSON: the document's fields as docs/operations.md gives them.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := preview.WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DryRun        bool                  `json:"dry_run"`
		Subscriptions []preview.PreviewJSON `json:"subscriptions"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.DryRun || len(doc.Subscriptions) != 2 {
		t.Fatalf("document %s", b.String())
	}
	team, rota := doc.Subscriptions[0], doc.Subscriptions[1]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"create's start", team.Create[0].Start, "2027-01-04T10:30:00+01:00"},
		{"create's series", team.Create[0].Series, "weekly on Mon"},
		{"create's transparency", team.Create[0].Look.Transparency, "free"},
		{"create's reminder", (*team.Create[0].Look.Reminders)[0], preview.ReminderJSON{Method: "popup", Minutes: 10}},
		{"update's fields", strings.Join(team.Update[0].Fields, ","), "unknown"},
		{"update's all-day start", team.Update[0].Start, "2027-01-05"},
		{"delete's reason", team.Delete[0].Reason, "left the feed"},
		{"excluded count", team.Excluded, 1},
		{"excluded's filter", team.ExcludedEvents[0].Filter.Rules[0].Pattern, "^On-call"},
		{"reconcile skipped", team.Reconcile.SkippedRemedy, "share it"},
		{"vacate's remedy", team.Vacate[0].Remedy, "log in again"},
		{"an update has fields, a create none", team.Create[0].Fields == nil, true},
		{"error's problem", rota.Error.Problem, "the feed answers 404"},
		{"error's remedy", rota.Error.Remedy, "fix subscriptions[1].url"},
		{"error's class", rota.Error.Class, calsyncd.ClassInternal},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}
