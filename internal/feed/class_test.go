package feed_test

import (
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// TestClassVisibility: PUBLIC, PRIVATE and CONFIDENTIAL map to Google's
// visibilities (in any case); any other value, an x-name or an
// iana-token, is treated as PRIVATE, as RFC 5545 §3.8.1.3 requires, and
// kept as the feed wrote it (upper-cased) for filters; no CLASS, or an
// empty one, leaves the calendar's default.
func TestClassVisibility(t *testing.T) {
	for _, tc := range []struct {
		line       string // "" for no CLASS line
		visibility string
		class      string // Details.Class
	}{
		{"CLASS:PUBLIC", feed.VisibilityPublic, ""},
		{"CLASS:public", feed.VisibilityPublic, ""},
		{"CLASS:PRIVATE", feed.VisibilityPrivate, ""},
		{"CLASS:Private", feed.VisibilityPrivate, ""},
		{"CLASS:CONFIDENTIAL", feed.VisibilityConfidential, ""},
		{"CLASS:X-SECRET", feed.VisibilityPrivate, "X-SECRET"},
		{"CLASS:x-foo", feed.VisibilityPrivate, "X-FOO"},
		{"CLASS:RESTRICTED", feed.VisibilityPrivate, "RESTRICTED"}, // an iana-token we do not know
		{"CLASS: X-SECRET ", feed.VisibilityPrivate, "X-SECRET"},
		{"CLASS:", feed.VisibilityDefault, ""},
		{"", feed.VisibilityDefault, ""},
	} {
		t.Run(tc.line, func(t *testing.T) {
			ev := "BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270111T100000Z\r\nSUMMARY:x\r\n"
			if tc.line != "" {
				ev += tc.line + "\r\n"
			}
			cal, err := feed.ParseBytes(calendarOf(ev+"END:VEVENT\r\n"), feed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cal.Events) != 1 {
				t.Fatalf("%d events, warnings %v", len(cal.Events), cal.Warnings)
			}
			got := cal.Events[0]
			if got.Visibility != tc.visibility {
				t.Errorf("visibility %q, want %q", got.Visibility, tc.visibility)
			}
			class := ""
			if got.Details != nil {
				class = got.Details.Class
			}
			if class != tc.class {
				t.Errorf("details class %q, want %q", class, tc.class)
			}
		})
	}
}
