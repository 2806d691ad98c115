package subscription_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestFeedWithoutEndVCalendarIsMirroredAndNeverDeletes: a feed that never
// writes END:VCALENDAR is mirrored run after run,
// ACTIVE, with a note: its complete events are created and updated, its
// deletes held. Those of a body that stops between events are the
// operator's to allow; a body that stops inside an event deletes nothing,
// even then. What is no calendar at all still fails.
func TestFeedWithoutEndVCalendarIsMirroredAndNeverDeletes(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(defectsDir, "no-end-vcalendar.ics"))
	if err != nil {
		t.Fatal(err)
	}
	feed := string(body)
	// The second shift is gone and the third renamed: a delete and an
	// update, the body still without END:VCALENDAR.
	changed := strings.Replace(feed, "On call: Edsger", "On call: Barbara", 1)
	i := strings.Index(changed, "BEGIN:VEVENT\r\nUID:shift-2")
	j := strings.Index(changed, "BEGIN:VEVENT\r\nUID:shift-3")
	changed = changed[:i] + changed[j:]
	// Cut inside the third shift: its END:VEVENT never came.
	inside := changed[:strings.LastIndex(changed, "SUMMARY")]
	tests := map[string]struct {
		body string
		// want is what Google shows after the changed body's runs, then
		// after a run with --allow-deletes.
		want, allowed []string
		note          string
		held          int
	}{
		"stops after an event": {body: changed, held: 1, note: "the download stopped between two events",
			want:    []string{`"On call: Ada"`, `"On call: Grace"`, `"On call: Barbara"`},
			allowed: []string{`"On call: Ada"`, `"On call: Barbara"`}},
		"stops inside an event": {body: inside, held: 2, note: "stops inside an event",
			want:    []string{`"On call: Ada"`, `"On call: Grace"`, `"On call: Edsger"`},
			allowed: []string{`"On call: Ada"`, `"On call: Grace"`, `"On call: Edsger"`}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMirror(t)
			m.setFeed(body)
			if rep := m.sync(); rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Created != 3 {
				t.Fatalf("first sync: %s, created %d (%v)", rep.Run.Outcome, rep.Run.Created, rep.Err)
			}
			m.setFeed([]byte(tt.body))
			// Run after run, more than the guard's confirm_runs: the same
			// shape is a note, never an error, and never a delete.
			for run := 1; run <= m.cfg.Sync.DeleteGuard.ConfirmRuns+1; run++ {
				rep := m.sync()
				st, err := m.store.Subscription(t.Context(), "team")
				if err != nil {
					t.Fatal(err)
				}
				if rep.Run.Outcome != calsyncd.OutcomeOK || st.State != calsyncd.StateActive || st.ConsecutiveErrors != 0 || st.LastError != "" {
					t.Fatalf("run %d: %s, state %s, %d errors (%q)", run, rep.Run.Outcome, st.State, st.ConsecutiveErrors, st.LastError)
				}
				if rep.Run.Deleted != 0 || rep.Run.HeldDeletes != tt.held || st.HeldDeletes != tt.held {
					t.Fatalf("run %d: deleted %d, held %d (state %d), want %d held", run, rep.Run.Deleted, rep.Run.HeldDeletes, st.HeldDeletes, tt.held)
				}
				if !hasNote(st.Notes, tt.note) {
					t.Fatalf("run %d: notes %q do not say %q", run, st.Notes, tt.note)
				}
				if got := titlesShown(m); !slicesEqual(got, tt.want) {
					t.Fatalf("run %d: Google shows %v, want %v", run, got, tt.want)
				}
			}
			rep := m.syncWith(subscription.Options{AllowDeletes: true})
			if got := titlesShown(m); !slicesEqual(got, tt.allowed) {
				t.Fatalf("with --allow-deletes Google shows %v, want %v (%+v)", got, tt.allowed, rep.Run)
			}
			// The feed whole again: the note goes.
			m.setFeed([]byte(tt.body[:strings.LastIndex(tt.body, "BEGIN:VEVENT")]))
			m.setFeed(append(m.feed(), "END:VCALENDAR\r\n"...))
			m.syncWith(subscription.Options{AllowDeletes: true})
			if st, _ := m.store.Subscription(t.Context(), "team"); hasNote(st.Notes, "END:VCALENDAR") {
				t.Errorf("a whole feed kept the note: %q", st.Notes)
			}
			// An HTML page is still refused.
			m.setFeed([]byte("<!DOCTYPE html><html><head><title>Sign in</title></head></html>"))
			if rep := m.sync(); rep.Run.Outcome != calsyncd.OutcomeFailed {
				t.Errorf("an HTML page: %s", rep.Run.Outcome)
			}
		})
	}
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// titlesShown is the quoted titles of what Google shows in the window, in
// time order.
func titlesShown(m *mirror) []string {
	var out []string
	for _, s := range shownBy(m.fake, m.lo, m.hi) {
		out = append(out, s[strings.Index(s, " ")+1:])
	}
	return out
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }
