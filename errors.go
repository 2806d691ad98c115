package calsyncd

import "errors"

// ErrorClass is what a failure means for the sync: Google's answers are
// classified once, in gcalwriter; a failed fetch or an unreadable feed has a
// feed class; a credential a person must fix is auth. Status explains each
// class to the operator, and rate and usage limits never count toward ERROR.
type ErrorClass string

// Classes of Google's answers, as gcalwriter.ClassifyAt reads them.
const (
	ClassNone         ErrorClass = ""
	ClassRateLimited  ErrorClass = "rate_limited"
	ClassUsageLimited ErrorClass = "usage_limited"
	ClassTransient    ErrorClass = "transient"
	ClassAuth         ErrorClass = "auth"
	ClassGone         ErrorClass = "gone"
	ClassConflict     ErrorClass = "conflict"
	ClassPrecondition ErrorClass = "precondition"
	ClassInvalid      ErrorClass = "invalid"
	ClassCanceled     ErrorClass = "canceled"
)

// Classes of a feed that could not be fetched or read.
const (
	ClassFeedUnreachable ErrorClass = "feed_unreachable"
	ClassFeedRejected    ErrorClass = "feed_rejected"
	ClassFeedUnavailable ErrorClass = "feed_unavailable"
	ClassFeedTooLarge    ErrorClass = "feed_too_large"
	ClassFeedInvalid     ErrorClass = "feed_invalid"
	// ClassFeedOverLimit: the feed has more events, or expands into more
	// occurrences, than its subscription's cost limits allow.
	ClassFeedOverLimit ErrorClass = "feed_over_limit"
)

// ClassInternal is a failure of calsyncd itself (the store, a bug).
const ClassInternal ErrorClass = "internal"

// Authenticated reports whether an answer of this class shows that Google
// took the request's credentials: it only answers these to a request it
// authenticated (a limit, a missing or changed event, a refused write).
func (c ErrorClass) Authenticated() bool {
	switch c {
	case ClassRateLimited, ClassUsageLimited, ClassGone, ClassConflict, ClassPrecondition, ClassInvalid:
		return true
	}
	return false
}

// IsFeed reports whether the class is about the feed rather than Google.
func (c ErrorClass) IsFeed() bool { return len(c) > 5 && c[:5] == "feed_" }

// Classed is an error that knows its class: gcalwriter's, fetch's and
// googleauth's errors, and the feed's sentinels.
type Classed interface {
	error
	ErrorClass() ErrorClass
}

// ClassOf is the class of a run's failure: that of the outermost Classed
// error err wraps, ClassInternal when none, ClassNone for nil.
func ClassOf(err error) ErrorClass {
	if err == nil {
		return ClassNone
	}
	var c Classed
	if errors.As(err, &c) {
		return c.ErrorClass()
	}
	return ClassInternal
}

// NewError returns a sentinel error of a class, for errors.Is.
func NewError(class ErrorClass, msg string) error { return &sentinel{msg: msg, class: class} }

type sentinel struct {
	msg   string
	class ErrorClass
}

func (e *sentinel) Error() string          { return e.msg }
func (e *sentinel) ErrorClass() ErrorClass { return e.class }
