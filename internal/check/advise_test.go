package check_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/check"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// TestAdvise: a failure outside check (a dry-run's, a run's) gets check's
// advice, naming the configuration key to fix, and says when Google
// refuses the calendar itself.
func TestAdvise(t *testing.T) {
	cfg := &config.Config{Subscriptions: []config.Subscription{{ID: "team", Calendar: "team@example.com"}, {ID: "typo", Calendar: "tema@example.com"}}}
	typo := cfg.Subscriptions[1]
	for _, tc := range []struct {
		name     string
		err      error
		what, do string // substrings
		calendar bool
	}{
		{"calendar not found", fmt.Errorf("gcalwriter: list owned events of typo: %w", &googleapi.Error{Code: 404, Message: "Not Found", Errors: []googleapi.ErrorItem{{Reason: "notFound"}}}),
			"calendar tema@example.com does not exist or is not shared with account default", "fix subscriptions[1].calendar", true},
		{"calendar refused", fmt.Errorf("list: %w", &googleapi.Error{Code: 403, Message: "Forbidden", Errors: []googleapi.ErrorItem{{Reason: "forbidden"}}}),
			"refuses account default", "Make changes to events", true},
		{"rate limited is no refusal", fmt.Errorf("list: %w", &googleapi.Error{Code: 403, Message: "Rate", Errors: []googleapi.ErrorItem{{Reason: "rateLimitExceeded"}}}),
			"Rate", "retry on their own", false},
		{"feed 404", &fetch.Error{Kind: fetch.Rejected, StatusCode: 404, Msg: "HTTP 404 Not Found"},
			"404", "see subscriptions[1] (url, headers, basic_auth)", false},
		{"feed unreachable", &fetch.Error{Kind: fetch.Unreachable, Msg: "dial tcp"}, "dial tcp", "curl -I", false},
		{"credentials", &googleauth.Error{Account: "default", Op: "load", Err: errors.New("no credentials"), Hint: "run `calsyncd auth login`"},
			"googleauth: account default: load: no credentials", "run `calsyncd auth login`", false},
		{"not a calendar", fmt.Errorf("parse: %w", calsyncd.NewError(calsyncd.ClassFeedInvalid, "not an iCalendar feed")),
			"not an iCalendar feed", "check subscriptions[1].url", false},
		{"over limit", calsyncd.NewError(calsyncd.ClassFeedOverLimit, "30000 events, over limits.max_events 20000"),
			"30000 events", "raise limits", false},
		{"internal: nothing better to say", errors.New("store: disk I/O error"), "disk I/O error", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := check.Advise(cfg, typo, tc.err)
			if !strings.Contains(a.What, tc.what) || (tc.do == "") != (a.Do == "") || !strings.Contains(a.Do, tc.do) || a.Calendar != tc.calendar {
				t.Errorf("Advise = %+v, want what ~ %q, do ~ %q, calendar %v", a, tc.what, tc.do, tc.calendar)
			}
			if tc.do != "" && !strings.Contains(a.String(), " → ") {
				t.Errorf("String() = %q, want what → do", a.String())
			}
		})
	}
}
