package calsyncd

import "time"

// Settled is what settle found at the end of one run, handed to whoever
// reacts to it (the webhook alerts): the run, the subscription's state
// before and after, its held deletes, and what the run learnt about its
// Google account. It holds nothing secret beyond what the run's record
// holds (Run.Error never carries a feed URL or a token).
type Settled struct {
	Subscription string
	Account      string
	Run          Run
	// From and To are the subscription's state before and after the run;
	// ConsecutiveErrors the failed runs in a row after it.
	From, To          State
	ConsecutiveErrors int
	// HeldDeletes are the deletes the mass-delete guard holds after the
	// run (0: none); Released those it let go in this run, and
	// ReleasedByOperator whether `sync --allow-deletes` did.
	HeldDeletes        int
	Released           int
	ReleasedByOperator bool
	// HeldByFilters are the held deletes of events the subscription's
	// filters now exclude: a filter change, not a broken feed.
	HeldByFilters int
	// HeldWhy says why the guard holds the deletes and what releases
	// them ("" when none are held).
	HeldWhy string
	// HeldAdopted are the held deletes of events the run found in Google
	// and adopted (the database did not know it wrote them); the run lets
	// them go, so they are no lasting hold. Strays is whether a reconcile
	// found such events (Holds), found none (Cleared), or did not run
	// (Unknown).
	HeldAdopted int
	Strays      Finding
	// CredentialsRefused: Google refused the account's credentials in this
	// run (Holds), accepted them (Cleared: it answered a request of the
	// account), or the run did not get that far (Unknown).
	CredentialsRefused Finding
	// UsageLimited: the run ended with the account locked out by a usage
	// limit until UsageLimitedUntil (Holds), the account wrote with no
	// window open (Cleared), or the run cannot tell (Unknown).
	UsageLimited      Finding
	UsageLimitedUntil time.Time
	// FeedThrottled: the feed server has answered every fetch with 429
	// for a day or more, since FeedThrottledSince (Holds); it answered a
	// fetch otherwise (Cleared); or the run cannot tell (Unknown: it did
	// not fetch, or the streak is younger than a day).
	FeedThrottled      Finding
	FeedThrottledSince time.Time
}

// Finding is what one run learnt about a condition that outlives it.
type Finding int8

// Findings.
const (
	// Unknown: the run did not get far enough to tell.
	Unknown Finding = iota
	// Holds: the run met the condition.
	Holds
	// Cleared: the run showed the condition is not there.
	Cleared
)

func (f Finding) String() string {
	switch f {
	case Holds:
		return "holds"
	case Cleared:
		return "cleared"
	}
	return "unknown"
}

// CredentialsRefuser is an error that can say whether it means Google
// refused an account's credentials (a revoked or expired token, a deleted
// key, a missing login, a token without calsyncd's scopes), as opposed to
// a problem of one calendar or one request.
type CredentialsRefuser interface {
	error
	CredentialsRefused() bool
}

// CredentialsRefused reports whether any error in err's tree says Google
// refused the account's credentials.
func CredentialsRefused(err error) bool {
	if err == nil {
		return false
	}
	if r, ok := err.(CredentialsRefuser); ok && r.CredentialsRefused() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return CredentialsRefused(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if CredentialsRefused(e) {
				return true
			}
		}
	}
	return false
}

// AlertState is a condition the webhook alerts announced and that still
// lasts: a subscription in ERROR, its deletes held, an account whose
// credentials Google refuses or that a usage limit locks out. It is kept in
// the store so that a restarted daemon neither announces it again nor
// forgets when it last reminded someone.
type AlertState struct {
	// Condition is "error", "deletes_held", "auth_failed",
	// "usage_limited", "feed_throttled" or "strays"; Subject the
	// subscription id or account name.
	//
	// An alert no webhook took is remembered as Condition
	// AlertUndelivered, Subject its condition, ":" and its subject (see
	// UndeliveredAlert), with Since its first failed delivery and
	// NotifiedAt its last, until one of its messages is delivered.
	Condition string
	Subject   string
	// Since is when it was first announced; NotifiedAt when last
	// (announced or reminded).
	Since      time.Time
	NotifiedAt time.Time
}

// AlertUndelivered is the condition under which an alert no webhook took
// is remembered, for status.
const AlertUndelivered = "undelivered"

// UndeliveredAlert names the AlertState that remembers an undelivered alert
// of a condition and subject.
func UndeliveredAlert(condition, subject string) AlertState {
	return AlertState{Condition: AlertUndelivered, Subject: condition + ":" + subject}
}
