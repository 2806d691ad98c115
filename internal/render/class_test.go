package render_test

import (
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// TestUnknownClassIsPrivate: a CLASS other than PUBLIC, PRIVATE and
// CONFIDENTIAL (an x-name or an iana-token, in any case) is treated as
// PRIVATE everywhere, as RFC 5545 §3.8.1.3 requires: the feed's
// visibility, privacy: busy, and filters on class. No CLASS, or an empty
// one, is PUBLIC for filters and the calendar's default for Google.
func TestUnknownClassIsPrivate(t *testing.T) {
	excludePrivate := &render.Policy{Filters: []render.Rule{rule(t, true, "class", "^PRIVATE$")}}
	includePublic := &render.Policy{Filters: []render.Rule{rule(t, false, "class", "^PUBLIC$")}}
	includeOwn := &render.Policy{Filters: []render.Rule{rule(t, false, "class", "^X-SECRET$")}}
	busy := &render.Policy{Privacy: render.Busy}
	for _, tc := range []struct {
		class      string // the CLASS line's value; "-" for no line
		visibility string // with no policy (the feed's)
		private    bool   // excluded by exclude ^PRIVATE$
		public     bool   // kept by include ^PUBLIC$
		own        bool   // kept by include ^X-SECRET$
	}{
		{"PUBLIC", feed.VisibilityPublic, false, true, false},
		{"PRIVATE", feed.VisibilityPrivate, true, false, false},
		{"CONFIDENTIAL", feed.VisibilityConfidential, false, false, false},
		{"X-SECRET", feed.VisibilityPrivate, true, false, true},
		{"x-secret", feed.VisibilityPrivate, true, false, true},
		{"x-foo", feed.VisibilityPrivate, true, false, false},
		{"RESTRICTED", feed.VisibilityPrivate, true, false, false},
		{"", feed.VisibilityDefault, false, true, false},
		{"-", feed.VisibilityDefault, false, true, false},
	} {
		t.Run(tc.class, func(t *testing.T) {
			body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270111T100000Z\r\n" +
				"SUMMARY:Appointment\r\nDESCRIPTION:who and why\r\n"
			if tc.class != "-" {
				body += "CLASS:" + tc.class + "\r\n"
			}
			cal, err := feed.ParseBytes([]byte(body+"END:VEVENT\r\nEND:VCALENDAR\r\n"), feed.Options{})
			if err != nil || len(cal.Events) != 1 {
				t.Fatalf("parse: %v, %d events", err, len(cal.Events))
			}
			evs := cal.Events
			if got := mustRender(t, evs, nil, render.Context{}).Events[0].Visibility; got != tc.visibility {
				t.Errorf("visibility %q, want %q", got, tc.visibility)
			}
			if got := mustRender(t, evs, &render.Policy{ColorID: "1"}, render.Context{}).Events[0].Visibility; got != tc.visibility {
				t.Errorf("visibility under a policy %q, want %q", got, tc.visibility)
			}
			b := mustRender(t, evs, busy, render.Context{}).Events[0]
			if b.Summary != "Busy" || b.Description != "" || b.Visibility != feed.VisibilityPrivate {
				t.Errorf("privacy busy shows %q / %q / %s", b.Summary, b.Description, b.Visibility)
			}
			if got := len(mustRender(t, evs, excludePrivate, render.Context{}).Excluded) == 1; got != tc.private {
				t.Errorf("exclude class ^PRIVATE$ takes it out: %v, want %v", got, tc.private)
			}
			if got := len(mustRender(t, evs, includePublic, render.Context{}).Events) == 1; got != tc.public {
				t.Errorf("include class ^PUBLIC$ keeps it: %v, want %v", got, tc.public)
			}
			if got := len(mustRender(t, evs, includeOwn, render.Context{}).Events) == 1; got != tc.own {
				t.Errorf("include class ^X-SECRET$ keeps it: %v, want %v", got, tc.own)
			}
		})
	}
}
