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
)

// Class is what an error from Google means for the sync. Every error is
// classified here and nowhere else.
type Class string

// Error classes (DESIGN.md §2).
const (
	ClassNone         Class = ""
	ClassRateLimited  Class = "rate_limited"
	ClassUsageLimited Class = "usage_limited"
	ClassTransient    Class = "transient"
	ClassAuth         Class = "auth"
	ClassGone         Class = "gone"
	ClassConflict     Class = "conflict"
	ClassPrecondition Class = "precondition"
	ClassInvalid      Class = "invalid"
	ClassCanceled     Class = "canceled"
)

// Classification is the verdict on one error.
type Classification struct {
	Class Class
	// Code is the HTTP status, when there was one.
	Code int
	// Reason is Google's errors[0].reason, when there was one.
	Reason string
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Daily is set for the project's daily quota ("Queries per day").
	Daily bool
	// Message is Google's message, for people.
	Message string
}

// Classify sorts an error into a Class. It is conservative: an auth failure
// is never taken for a rate limit (that would stall a broken subscription
// silently) and a rate limit never for an auth failure (the seed's loop).
func Classify(err error) Classification {
	if err == nil {
		return Classification{}
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return classifyAPI(gerr)
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return classifyRetrieve(rerr)
	}
	if errors.Is(err, context.Canceled) {
		return Classification{Class: ClassCanceled, Message: "canceled"}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return Classification{Class: ClassTransient, Message: "connection trouble: " + err.Error()}
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return Classification{Class: ClassTransient, Message: "network error: " + nerr.Error()}
	}
	var operr *net.OpError
	if errors.As(err, &operr) {
		return Classification{Class: ClassTransient, Message: "network error: " + operr.Error()}
	}
	// An unknown error from the transport: retrying is the safe choice, and
	// retries are bounded.
	return Classification{Class: ClassTransient, Message: err.Error()}
}

func classifyAPI(e *googleapi.Error) Classification {
	c := Classification{Code: e.Code, Message: e.Message}
	reasons := make([]string, 0, len(e.Errors))
	for _, it := range e.Errors {
		reasons = append(reasons, it.Reason)
		if c.Message == "" {
			c.Message = it.Message
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
	if e.Header != nil {
		c.RetryAfter = parseRetryAfter(e.Header.Get("Retry-After"), time.Now())
	}
	switch e.Code {
	case http.StatusTooManyRequests:
		c.Class = ClassRateLimited
		if strings.Contains(e.Message, "Queries per day") {
			c.Class, c.Daily = ClassUsageLimited, true
		}
	case http.StatusForbidden:
		switch {
		case has("rateLimitExceeded") || has("userRateLimitExceeded"):
			c.Class = ClassRateLimited
			if strings.Contains(e.Message, "Queries per day") || strings.Contains(allMessages(e), "Queries per day") {
				c.Class, c.Daily = ClassUsageLimited, true
			}
		case has("quotaExceeded"):
			c.Class = ClassUsageLimited
		case has("dailyLimitExceeded") || has("dailyLimitExceededUnreg"):
			c.Class, c.Daily = ClassUsageLimited, true
		case has("forbiddenForNonOrganizer"):
			c.Class = ClassInvalid
		default:
			// forbidden, insufficientPermissions, accessNotConfigured, ...
			c.Class = ClassAuth
		}
	case http.StatusUnauthorized:
		c.Class = ClassAuth
	case http.StatusNotFound, http.StatusGone:
		c.Class = ClassGone
	case http.StatusConflict:
		c.Class = ClassConflict
	case http.StatusPreconditionFailed:
		c.Class = ClassPrecondition
	case http.StatusBadRequest:
		c.Class = ClassInvalid
	case http.StatusRequestTimeout:
		c.Class = ClassTransient
	default:
		if e.Code >= 500 {
			c.Class = ClassTransient
		} else {
			c.Class = ClassInvalid
		}
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

func classifyRetrieve(e *oauth2.RetrieveError) Classification {
	c := Classification{Class: ClassAuth, Reason: e.ErrorCode, Message: "token refresh failed"}
	if e.Response != nil {
		c.Code = e.Response.StatusCode
	}
	code := e.ErrorCode
	if code == "" && strings.Contains(string(e.Body), "invalid_grant") {
		code = "invalid_grant"
	}
	switch {
	case code == "invalid_grant":
		c.Reason = "invalid_grant"
		c.Message = "Google refused the refresh token (revoked or expired): run `calsyncd auth login`"
	case c.Code == http.StatusTooManyRequests || c.Code >= 500 || c.Code == http.StatusRequestTimeout:
		// The token endpoint itself is having trouble; the grant is fine.
		c.Class = ClassTransient
		c.Message = "the Google token endpoint is unavailable"
	}
	return c
}

// parseRetryAfter reads Retry-After in seconds or as an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var n int
	isNum := true
	for _, r := range v {
		if r < '0' || r > '9' {
			isNum = false
			break
		}
		n = n*10 + int(r-'0')
		if n > 86400 {
			n = 86400
		}
	}
	if isNum {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
