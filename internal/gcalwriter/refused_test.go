package gcalwriter_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// Only a failure of the account itself counts as refused credentials: a
// calendar that is missing, not shared or read-only is the subscription's
// problem, and a token endpoint in trouble is nobody's.
func TestErrorCredentialsRefused(t *testing.T) {
	api := func(code int, reason string) error {
		return &googleapi.Error{Code: code, Errors: []googleapi.ErrorItem{{Reason: reason}}}
	}
	token := func(status int, code string) error {
		return fmt.Errorf("Get \"…\": %w", &oauth2.RetrieveError{Response: &http.Response{StatusCode: status}, ErrorCode: code})
	}
	tests := map[string]struct {
		err  error
		want bool
	}{
		"401 after a refresh":       {api(401, "authError"), true},
		"scopes missing":            {api(403, "insufficientPermissions"), true},
		"API not enabled":           {api(403, "accessNotConfigured"), true},
		"revoked refresh token":     {token(400, "invalid_grant"), true},
		"delegation not authorised": {token(401, "unauthorized_client"), true},
		"token endpoint down":       {token(503, ""), false},
		"calendar read-only":        {api(403, "requiredAccessLevel"), false},
		"calendar forbidden":        {api(403, "forbidden"), false},
		"rate limited":              {api(403, "rateLimitExceeded"), false},
		"usage limited":             {api(403, "quotaExceeded"), false},
		"invalid event":             {api(400, "invalid"), false},
		"canceled":                  {context.Canceled, false},
	}
	for name, tt := range tests {
		c := gcalwriter.ClassifyAt(tt.err, time.Now())
		err := &gcalwriter.Error{Subscription: "team", Op: "insert", Class: c.Class, Code: c.Code, Reason: c.Reason, Msg: c.Message, Err: tt.err}
		if got := calsyncd.CredentialsRefused(err); got != tt.want {
			t.Errorf("%s (class %s): CredentialsRefused = %v, want %v", name, c.Class, got, tt.want)
		}
	}
	missing := &gcalwriter.Error{Op: "calendars.get", Class: calsyncd.ClassAuth, Code: 404, Msg: gcalwriter.ErrCalendarNotFound.Error(), Err: gcalwriter.ErrCalendarNotFound}
	if calsyncd.CredentialsRefused(missing) || !errors.Is(missing, gcalwriter.ErrCalendarNotFound) {
		t.Error("a missing calendar is not a refusal of the account's credentials")
	}
}
