package gcalwriter

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/retryafter"
)

// Classification is the verdict on one error.
type Classification struct {
	Class calsyncd.ErrorClass
	// Code is the HTTP status, when there was one.
	Code int
	// Reason is Google's errors[0].reason (or the OAuth error code), when
	// there was one.
	Reason string
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Daily is set for the project's daily quota ("Queries per day",
	// dailyLimitExceeded): it clears at Google's daily reset, not sooner.
	Daily bool
	// Message is Google's message, for people.
	Message string
}

// ClassifyAt sorts an error into a Class. It is conservative both ways: an
// auth failure is never taken for a rate limit (that would stall a broken
// subscription silently) and a rate limit never for an auth failure. The
// current time is given, so it does no I/O and
// reads no clock: an HTTP-date Retry-After is measured from the response's
// Date header when there is one, else from now.
func ClassifyAt(err error, now time.Time) Classification {
	if err == nil {
		return Classification{}
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return classifyAPI(gerr, now)
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return classifyRetrieve(rerr)
	}
	if errors.Is(err, context.Canceled) {
		return Classification{Class: calsyncd.ClassCanceled, Message: "canceled"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Classification{Class: calsyncd.ClassTransient, Message: "request timed out"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, net.ErrClosed) {
		return Classification{Class: calsyncd.ClassTransient, Message: "connection lost: " + err.Error()}
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return Classification{Class: calsyncd.ClassTransient, Message: "network error: " + nerr.Error()}
	}
	// Anything else came from the transport (a TLS failure, a garbled
	// answer): retrying is the safe choice, retries are bounded, and a run
	// that only fails this way still counts toward ERROR.
	return Classification{Class: calsyncd.ClassTransient, Message: err.Error()}
}

// Google's reasons, as documented on "Handle API errors" and seen in the
// wild (docs/google.md §1.2).
const (
	reasonRateLimit     = "rateLimitExceeded"
	reasonUserRateLimit = "userRateLimitExceeded"
	reasonQuota         = "quotaExceeded"
	reasonDaily         = "dailyLimitExceeded"
	reasonDailyUnreg    = "dailyLimitExceededUnreg"
	reasonNonOrganizer  = "forbiddenForNonOrganizer"
)

func classifyAPI(e *googleapi.Error, now time.Time) Classification {
	c := Classification{Code: e.Code, Message: e.Message}
	reasons := make([]string, 0, len(e.Errors))
	for _, it := range e.Errors {
		reasons = append(reasons, it.Reason)
		if c.Message == "" {
			c.Message = it.Message
		}
	}
	if len(reasons) == 0 {
		// The client could not parse errors[]: look for a reason in the raw
		// body, quoted, so a message that merely mentions a word does not
		// count.
		for _, r := range []string{reasonRateLimit, reasonUserRateLimit, reasonQuota, reasonDaily, reasonDailyUnreg, reasonNonOrganizer} {
			if strings.Contains(e.Body, `"`+r+`"`) {
				reasons = append(reasons, r)
			}
		}
	}
	if len(reasons) > 0 {
		c.Reason = reasons[0]
	}
	has := func(r string) bool {
		for _, x := range reasons {
			if x == r {
				return true
			}
		}
		return false
	}
	perDay := strings.Contains(e.Message, "Queries per day") || strings.Contains(allMessages(e), "Queries per day")
	if e.Header != nil {
		c.RetryAfter = retryafter.Parse(e.Header.Get("Retry-After"), e.Header.Get("Date"), now)
	}
	switch {
	case e.Code == http.StatusTooManyRequests:
		c.Class = calsyncd.ClassRateLimited
		if perDay {
			c.Class, c.Daily = calsyncd.ClassUsageLimited, true
		}
	case e.Code == http.StatusForbidden:
		switch {
		case has(reasonRateLimit) || has(reasonUserRateLimit):
			// The same reason covers the per-minute limits and the
			// project's daily quota; only the message tells them apart.
			c.Class = calsyncd.ClassRateLimited
			if perDay {
				c.Class, c.Daily = calsyncd.ClassUsageLimited, true
			}
		case has(reasonQuota):
			c.Class = calsyncd.ClassUsageLimited
		case has(reasonDaily) || has(reasonDailyUnreg):
			c.Class, c.Daily = calsyncd.ClassUsageLimited, true
		case has(reasonNonOrganizer):
			c.Class = calsyncd.ClassInvalid
		default:
			// forbidden, insufficientPermissions, accessNotConfigured, an
			// unknown reason or none: a person must look.
			c.Class = calsyncd.ClassAuth
		}
	case e.Code == http.StatusUnauthorized:
		c.Class = calsyncd.ClassAuth
	case e.Code == http.StatusNotFound, e.Code == http.StatusGone:
		c.Class = calsyncd.ClassGone
	case e.Code == http.StatusConflict:
		c.Class = calsyncd.ClassConflict
	case e.Code == http.StatusPreconditionFailed:
		c.Class = calsyncd.ClassPrecondition
	case e.Code == http.StatusRequestTimeout, e.Code >= 500, e.Code == 0:
		c.Class = calsyncd.ClassTransient
	default:
		// 400 and every other 4xx: this request, as it is, will not succeed.
		c.Class = calsyncd.ClassInvalid
	}
	return c
}

func allMessages(e *googleapi.Error) string {
	var b strings.Builder
	for _, it := range e.Errors {
		b.WriteString(it.Message)
		b.WriteByte(' ')
	}
	return b.String()
}

// OAuth error codes (RFC 6749 §5.2) that mean the grant or client is bad:
// only a person can fix them.
var fatalOAuthCodes = map[string]bool{
	"invalid_grant": true, "invalid_client": true, "unauthorized_client": true,
	"access_denied": true, "invalid_scope": true, "unsupported_grant_type": true,
}

func classifyRetrieve(e *oauth2.RetrieveError) Classification {
	c := Classification{Class: calsyncd.ClassAuth, Reason: e.ErrorCode, Message: "token refresh failed"}
	if e.Response != nil {
		c.Code = e.Response.StatusCode
	}
	code := e.ErrorCode
	if code == "" {
		// The service-account (JWT) path does not parse the body.
		body := string(e.Body)
		for k := range fatalOAuthCodes {
			if strings.Contains(body, `"`+k+`"`) {
				code = k
				break
			}
		}
	}
	switch {
	case fatalOAuthCodes[code]:
		c.Reason = code
		c.Message = "Google refused the credentials (" + code + "): re-authorise the account"
		if code == "invalid_grant" {
			c.Message = "Google refused the refresh token (revoked or expired): re-authorise the account"
		}
	case c.Code == http.StatusTooManyRequests || c.Code >= 500 || c.Code == http.StatusRequestTimeout:
		// The token endpoint itself is having trouble; the grant is fine.
		c.Class = calsyncd.ClassTransient
		c.Message = "the Google token endpoint is unavailable"
	}
	return c
}
