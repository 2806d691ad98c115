package gcalwriter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// gerr builds a Google error as the Go client returns it.
func gerr(code int, reason, msg string, header ...string) error {
	e := &googleapi.Error{Code: code, Message: msg, Header: http.Header{}}
	if reason != "" {
		e.Errors = []googleapi.ErrorItem{{Reason: reason, Message: msg}}
	}
	for i := 0; i+1 < len(header); i += 2 {
		e.Header.Set(header[i], header[i+1])
	}
	// The client hands it back wrapped by whatever called it.
	return fmt.Errorf("insert event: %w", e)
}

func retrieveErr(status int, code, body string) error {
	return &url.Error{Op: "Post", URL: "https://www.googleapis.com/calendar/v3/calendars/x/events",
		Err: &oauth2.RetrieveError{Response: &http.Response{StatusCode: status}, ErrorCode: code, Body: []byte(body)}}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	now := time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC)
	const perDay = "Quota exceeded for quota group 'default' and limit 'Queries per day' of service 'calendar-json.googleapis.com' for consumer 'project_number:1'."
	tests := []struct {
		name       string
		err        error
		class      calsyncd.ErrorClass
		daily      bool
		retryAfter time.Duration
		reason     string
	}{
		// Rate limits: retried, then deferred. Never auth.
		{"403 rateLimitExceeded", gerr(403, "rateLimitExceeded", "Rate Limit Exceeded"), calsyncd.ClassRateLimited, false, 0, "rateLimitExceeded"},
		{"403 userRateLimitExceeded", gerr(403, "userRateLimitExceeded", "User Rate Limit Exceeded"), calsyncd.ClassRateLimited, false, 0, "userRateLimitExceeded"},
		{"429 rateLimitExceeded", gerr(429, "rateLimitExceeded", "Rate Limit Exceeded"), calsyncd.ClassRateLimited, false, 0, "rateLimitExceeded"},
		{"429 without a reason", gerr(429, "", "Too Many Requests"), calsyncd.ClassRateLimited, false, 0, ""},
		{"429 with Retry-After seconds", gerr(429, "rateLimitExceeded", "Rate Limit Exceeded", "Retry-After", "7"), calsyncd.ClassRateLimited, false, 7 * time.Second, "rateLimitExceeded"},
		{"403 with Retry-After HTTP date", gerr(403, "rateLimitExceeded", "Rate Limit Exceeded",
			"Retry-After", now.Add(90*time.Second).Format(http.TimeFormat)), calsyncd.ClassRateLimited, false, 90 * time.Second, "rateLimitExceeded"},
		{"Retry-After date read against the Date header", gerr(403, "rateLimitExceeded", "Rate Limit Exceeded",
			"Retry-After", now.Add(time.Hour+30*time.Second).Format(http.TimeFormat), "Date", now.Add(time.Hour).Format(http.TimeFormat)),
			calsyncd.ClassRateLimited, false, 30 * time.Second, "rateLimitExceeded"},
		{"Retry-After date in the past", gerr(429, "rateLimitExceeded", "x", "Retry-After", now.Add(-time.Minute).Format(http.TimeFormat)), calsyncd.ClassRateLimited, false, 0, "rateLimitExceeded"},
		{"Retry-After garbage", gerr(429, "rateLimitExceeded", "x", "Retry-After", "soon"), calsyncd.ClassRateLimited, false, 0, "rateLimitExceeded"},
		{"Retry-After absurd is capped at a day", gerr(429, "rateLimitExceeded", "x", "Retry-After", "99999999999999999999"), calsyncd.ClassRateLimited, false, 24 * time.Hour, "rateLimitExceeded"},
		{"reason only in the raw body", &googleapi.Error{Code: 403, Body: `{"error":{"errors":[{"reason":"rateLimitExceeded"}]}}`}, calsyncd.ClassRateLimited, false, 0, "rateLimitExceeded"},

		// Usage limits: the account's window opens at once.
		{"403 quotaExceeded", gerr(403, "quotaExceeded", "Calendar usage limits exceeded."), calsyncd.ClassUsageLimited, false, 0, "quotaExceeded"},
		{"403 dailyLimitExceeded", gerr(403, "dailyLimitExceeded", "Daily Limit Exceeded"), calsyncd.ClassUsageLimited, true, 0, "dailyLimitExceeded"},
		{"403 dailyLimitExceededUnreg", gerr(403, "dailyLimitExceededUnreg", "Daily Limit for Unauthenticated Use Exceeded."), calsyncd.ClassUsageLimited, true, 0, "dailyLimitExceededUnreg"},
		{"403 rateLimitExceeded Queries per day", gerr(403, "rateLimitExceeded", perDay), calsyncd.ClassUsageLimited, true, 0, "rateLimitExceeded"},
		{"Queries per day only in errors[].message", &googleapi.Error{Code: 403, Message: "Rate Limit Exceeded",
			Errors: []googleapi.ErrorItem{{Reason: "rateLimitExceeded", Message: perDay}}}, calsyncd.ClassUsageLimited, true, 0, "rateLimitExceeded"},
		{"429 Queries per day", gerr(429, "rateLimitExceeded", perDay), calsyncd.ClassUsageLimited, true, 0, "rateLimitExceeded"},

		// Auth: stops the subscription. Never a rate limit.
		{"401 authError", gerr(401, "authError", "Invalid Credentials"), calsyncd.ClassAuth, false, 0, "authError"},
		{"401 that says rate limit is still auth", gerr(401, "rateLimitExceeded", "Rate Limit Exceeded"), calsyncd.ClassAuth, false, 0, "rateLimitExceeded"},
		{"403 forbidden", gerr(403, "forbidden", "Forbidden"), calsyncd.ClassAuth, false, 0, "forbidden"},
		{"403 insufficientPermissions", gerr(403, "insufficientPermissions", "Insufficient Permission"), calsyncd.ClassAuth, false, 0, "insufficientPermissions"},
		{"403 accessNotConfigured", gerr(403, "accessNotConfigured", "Access Not Configured."), calsyncd.ClassAuth, false, 0, "accessNotConfigured"},
		{"403 forbidden whose message mentions rate limits", gerr(403, "forbidden", "Rate Limit Exceeded? no: you may not write here"), calsyncd.ClassAuth, false, 0, "forbidden"},
		{"403 with no reason", gerr(403, "", "Forbidden"), calsyncd.ClassAuth, false, 0, ""},
		{"403 unknown reason", gerr(403, "somethingNew", "?"), calsyncd.ClassAuth, false, 0, "somethingNew"},
		{"403 forbidden with Retry-After is still auth", gerr(403, "forbidden", "Forbidden", "Retry-After", "5"), calsyncd.ClassAuth, false, 5 * time.Second, "forbidden"},
		{"invalid_grant", retrieveErr(400, "invalid_grant", ""), calsyncd.ClassAuth, false, 0, "invalid_grant"},
		{"invalid_grant in the body (service account path)", retrieveErr(400, "", `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`), calsyncd.ClassAuth, false, 0, "invalid_grant"},
		{"unauthorized_client in the body", retrieveErr(401, "", `{"error":"unauthorized_client"}`), calsyncd.ClassAuth, false, 0, "unauthorized_client"},
		{"token endpoint 400 without a code", retrieveErr(400, "", "bad"), calsyncd.ClassAuth, false, 0, ""},

		// Transient: retried, then failed for this run.
		{"token endpoint 503", retrieveErr(503, "", "unavailable"), calsyncd.ClassTransient, false, 0, ""},
		{"token endpoint 500 with a code", retrieveErr(500, "server_error", ""), calsyncd.ClassTransient, false, 0, "server_error"},
		{"token endpoint 429", retrieveErr(429, "", ""), calsyncd.ClassTransient, false, 0, ""},
		{"500 backendError", gerr(500, "backendError", "Backend Error"), calsyncd.ClassTransient, false, 0, "backendError"},
		{"502", gerr(502, "", "Bad Gateway"), calsyncd.ClassTransient, false, 0, ""},
		{"503", gerr(503, "backendError", "The service is currently unavailable."), calsyncd.ClassTransient, false, 0, "backendError"},
		{"504", gerr(504, "", "Gateway Timeout"), calsyncd.ClassTransient, false, 0, ""},
		{"408", gerr(408, "", "Request Timeout"), calsyncd.ClassTransient, false, 0, ""},
		{"deadline exceeded", fmt.Errorf("do: %w", context.DeadlineExceeded), calsyncd.ClassTransient, false, 0, ""},
		{"unexpected EOF (lost response)", &url.Error{Op: "Post", URL: "https://x", Err: io.ErrUnexpectedEOF}, calsyncd.ClassTransient, false, 0, ""},
		{"EOF", &url.Error{Op: "Post", URL: "https://x", Err: io.EOF}, calsyncd.ClassTransient, false, 0, ""},
		{"connection reset", &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "read", Net: "tcp",
			Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}, calsyncd.ClassTransient, false, 0, ""},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, calsyncd.ClassTransient, false, 0, ""},
		{"net timeout", &url.Error{Op: "Post", URL: "https://x", Err: timeoutErr{}}, calsyncd.ClassTransient, false, 0, ""},
		{"dns", &net.DNSError{Err: "no such host", Name: "www.googleapis.com", IsTemporary: true}, calsyncd.ClassTransient, false, 0, ""},
		{"unknown transport error", errors.New("tls: handshake failure"), calsyncd.ClassTransient, false, 0, ""},
		{"googleapi error without a status", &googleapi.Error{Message: "?"}, calsyncd.ClassTransient, false, 0, ""},

		// Per-event outcomes.
		{"404", gerr(404, "notFound", "Not Found"), calsyncd.ClassGone, false, 0, "notFound"},
		{"410 deleted", gerr(410, "deleted", "Resource has been deleted"), calsyncd.ClassGone, false, 0, "deleted"},
		{"409 duplicate", gerr(409, "duplicate", "The requested identifier already exists."), calsyncd.ClassConflict, false, 0, "duplicate"},
		{"412 conditionNotMet", gerr(412, "conditionNotMet", "Precondition Failed"), calsyncd.ClassPrecondition, false, 0, "conditionNotMet"},
		{"400 invalid", gerr(400, "invalid", "Invalid recurrence rule."), calsyncd.ClassInvalid, false, 0, "invalid"},
		{"400 timeRangeEmpty", gerr(400, "timeRangeEmpty", "The specified time range is empty."), calsyncd.ClassInvalid, false, 0, "timeRangeEmpty"},
		{"400 that mentions a rate limit is still invalid", gerr(400, "badRequest", "Rate Limit Exceeded"), calsyncd.ClassInvalid, false, 0, "badRequest"},
		{"403 forbiddenForNonOrganizer", gerr(403, "forbiddenForNonOrganizer", "Shared properties can only be changed by the organizer of the event."), calsyncd.ClassInvalid, false, 0, "forbiddenForNonOrganizer"},
		{"413", gerr(413, "", "Request Entity Too Large"), calsyncd.ClassInvalid, false, 0, ""},

		// Shutdown.
		{"canceled", fmt.Errorf("do: %w", context.Canceled), calsyncd.ClassCanceled, false, 0, ""},
		{"nil", nil, calsyncd.ClassNone, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := gcalwriter.ClassifyAt(tt.err, now)
			if c.Class != tt.class || c.Daily != tt.daily || c.RetryAfter != tt.retryAfter || c.Reason != tt.reason {
				t.Errorf("ClassifyAt = %+v, want class %s daily %v retry-after %s reason %q", c, tt.class, tt.daily, tt.retryAfter, tt.reason)
			}
		})
	}
}

// The seeds' failure loop came from one confusion; check it both ways over
// every reason we know.
func TestRateLimitsAndAuthNeverMix(t *testing.T) {
	limits := []string{"rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded", "dailyLimitExceeded"}
	auth := []string{"forbidden", "insufficientPermissions", "accessNotConfigured", "authError", ""}
	for _, code := range []int{403, 429} {
		for _, r := range limits {
			if c := gcalwriter.ClassifyAt(gerr(code, r, "x"), time.Now()); c.Class == calsyncd.ClassAuth {
				t.Errorf("%d %s classified as auth", code, r)
			}
		}
	}
	for _, code := range []int{401, 403} {
		for _, r := range auth {
			c := gcalwriter.ClassifyAt(gerr(code, r, "x"), time.Now())
			if c.Class == calsyncd.ClassRateLimited || c.Class == calsyncd.ClassUsageLimited {
				t.Errorf("%d %q classified as %s", code, r, c.Class)
			}
		}
	}
	for _, r := range limits {
		if c := gcalwriter.ClassifyAt(gerr(401, r, "x"), time.Now()); c.Class != calsyncd.ClassAuth {
			t.Errorf("401 %s classified as %s, want auth", r, c.Class)
		}
	}
}
