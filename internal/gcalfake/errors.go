package gcalfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// APIError is an error answer in Google's JSON shape:
//
//	{"error":{"errors":[{"domain","reason","message"}],"code","message"}}
type APIError struct {
	Code    int
	Domain  string
	Reason  string
	Message string
	// RetryAfter, when set, is sent as a Retry-After header (seconds).
	RetryAfter time.Duration
	// Status, when set, adds the newer "status" field (e.g. PERMISSION_DENIED).
	Status string
	// LocationType and Location, when set, say which part of the request
	// is wrong (e.g. "parameter", "timeMax").
	LocationType, Location string
}

func (e *APIError) Error() string { return strconv.Itoa(e.Code) + " " + e.Reason + ": " + e.Message }

type errorItem struct {
	Domain       string `json:"domain"`
	Reason       string `json:"reason"`
	Message      string `json:"message"`
	LocationType string `json:"locationType,omitempty"`
	Location     string `json:"location,omitempty"`
}

type errorBody struct {
	Error struct {
		Errors  []errorItem `json:"errors"`
		Code    int         `json:"code"`
		Message string      `json:"message"`
		Status  string      `json:"status,omitempty"`
	} `json:"error"`
}

func (e *APIError) write(w http.ResponseWriter) {
	var b errorBody
	b.Error.Errors = []errorItem{{Domain: e.Domain, Reason: e.Reason, Message: e.Message, LocationType: e.LocationType, Location: e.Location}}
	b.Error.Code = e.Code
	b.Error.Message = e.Message
	b.Error.Status = e.Status
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_ = json.NewEncoder(w).Encode(b)
}

// The errors Google's Calendar API answers with, as documented on "Handle
// API errors" (docs/google.md §1.2).
func errNotFound() *APIError {
	return &APIError{Code: 404, Domain: "global", Reason: "notFound", Message: "Not Found"}
}

func errDuplicate() *APIError {
	return &APIError{Code: 409, Domain: "global", Reason: "duplicate", Message: "The requested identifier already exists."}
}

func errDeleted() *APIError {
	return &APIError{Code: 410, Domain: "global", Reason: "deleted", Message: "Resource has been deleted"}
}

func errConditionNotMet() *APIError {
	return &APIError{Code: 412, Domain: "global", Reason: "conditionNotMet", Message: "Precondition Failed"}
}

func errForbidden() *APIError {
	return &APIError{Code: 403, Domain: "global", Reason: "forbidden", Message: "Forbidden"}
}

func errInvalid(msg string) *APIError {
	return &APIError{Code: 400, Domain: "global", Reason: "invalid", Message: msg}
}

// errInvalidParameter is Google's answer to a query parameter whose value it
// does not take.
func errInvalidParameter(name string) *APIError {
	return &APIError{Code: 400, Domain: "global", Reason: "invalid", Message: "Invalid value for: " + name,
		LocationType: "parameter", Location: name}
}

func errRequired(msg string) *APIError {
	return &APIError{Code: 400, Domain: "global", Reason: "required", Message: msg}
}

func errTimeRangeEmpty() *APIError {
	return &APIError{Code: 400, Domain: "calendar", Reason: "timeRangeEmpty", Message: "The specified time range is empty."}
}

func errBadRequest(msg string) *APIError {
	return &APIError{Code: 400, Domain: "global", Reason: "badRequest", Message: msg}
}

// errAuth is Google's answer to a request whose credentials it no longer
// accepts (a revoked or expired access token), as the API sends it today.
func errAuth() *APIError {
	return &APIError{Code: 401, Domain: "global", Reason: "authError",
		Message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. " +
			"See https://developers.google.com/identity/sign-in/web/devconsole-project.",
		Status: "UNAUTHENTICATED", LocationType: "header", Location: "Authorization"}
}

func errBackend() *APIError {
	return &APIError{Code: 500, Domain: "global", Reason: "backendError", Message: "Backend Error"}
}

// Calendar's 503 body is not documented; this is the usual Google shape.
func errUnavailable() *APIError {
	return &APIError{Code: 503, Domain: "global", Reason: "backendError", Message: "The service is currently unavailable.", Status: "UNAVAILABLE"}
}

func errUsageLimits() *APIError {
	return &APIError{Code: 403, Domain: "usageLimits", Reason: "quotaExceeded", Message: "Calendar usage limits exceeded."}
}

func errRateLimit(m LimitMode) *APIError {
	switch m {
	case UserRateLimit403:
		return &APIError{Code: 403, Domain: "usageLimits", Reason: "userRateLimitExceeded", Message: "User Rate Limit Exceeded"}
	case RateLimit429:
		return &APIError{Code: 429, Domain: "usageLimits", Reason: "rateLimitExceeded", Message: "Rate Limit Exceeded"}
	}
	return &APIError{Code: 403, Domain: "usageLimits", Reason: "rateLimitExceeded", Message: "Rate Limit Exceeded"}
}
