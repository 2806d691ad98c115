package status_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// `calsyncd sync` prints the runs it recorded, as a table or as JSON in
// /status's shapes; a subscription that recorded no run (busy, handed to
// the daemon) has no row and no entry.
func TestSyncOutput(t *testing.T) {
	reports := []subscription.Report{
		{Subscription: "team", State: calsyncd.StateActive,
			Run: calsyncd.Run{ID: 7, Outcome: calsyncd.OutcomeOK, Created: 9, Unchanged: 3, HeldDeletes: 2}},
		{Subscription: "busy"},
		{Subscription: "holidays", State: calsyncd.StateError, Transition: subscription.Transition{ConsecutiveErrors: 3},
			Run: calsyncd.Run{ID: 8, Outcome: calsyncd.OutcomeFailed, ErrorClass: calsyncd.ClassAuth, Error: "HTTP 401"}},
	}
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		check func(t *testing.T, out string)
	}{
		{"table", func(b *bytes.Buffer) error { return status.WriteSyncTable(b, reports) }, func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 3 {
				t.Fatalf("%d lines, want a header and two rows:\n%s", len(lines), out)
			}
			if f := strings.Fields(lines[0]); len(f) != 11 || f[0] != "SUBSCRIPTION" || f[10] != "HELD" {
				t.Errorf("header %q", lines[0])
			}
			want := []string{"team", "ok", "ACTIVE", "9", "0", "0", "3", "0", "0", "0", "2"}
			if f := strings.Fields(lines[1]); strings.Join(f, " ") != strings.Join(want, " ") {
				t.Errorf("row %q, want %q", f, want)
			}
			if strings.Contains(out, "busy") {
				t.Error("a subscription without a run has a row")
			}
		}},
		{"json", func(b *bytes.Buffer) error { return status.WriteSyncJSON(b, reports) }, func(t *testing.T, out string) {
			var doc status.SyncDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Subscriptions) != 2 {
				t.Fatalf("%d entries, want 2: %s", len(doc.Subscriptions), out)
			}
			team, hol := doc.Subscriptions[0], doc.Subscriptions[1]
			if team.Subscription != "team" || team.Run.Created != 9 || team.Run.HeldDeletes != 2 || team.Error != nil {
				t.Errorf("team: %+v", team)
			}
			if hol.State != calsyncd.StateError || hol.ConsecutiveErrors != 3 || hol.Error == nil ||
				hol.Error.Class != calsyncd.ClassAuth || hol.Error.Message != status.Explain(calsyncd.ClassAuth) || hol.Error.Detail != "HTTP 401" {
				t.Errorf("holidays: %+v (error %+v)", hol, hol.Error)
			}
		}},
		{"json without runs is an empty list, not null", func(b *bytes.Buffer) error {
			return status.WriteSyncJSON(b, reports[1:2])
		}, func(t *testing.T, out string) {
			if !strings.Contains(out, `"subscriptions": []`) {
				t.Errorf("got %s", out)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			tc.check(t, b.String())
		})
	}
}
